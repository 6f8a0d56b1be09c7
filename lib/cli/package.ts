// `mme-deploy package <repo> [-o out.tar.gz|DIR/] [--name T] [--level 0-9] [--force] [--json] [--no-python-syntax]
// [--instance-type T] [--triton-version V] [--accept CODE]... [--strict]`: validate with the MME rules, then write the
// archive atomically (temp file beside the target, put in place on success; an interruption
// leaves nothing behind, and a later run removes what a killed one left).

import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { writeStreamAtomically } from '../archive/write-file';
import { PackManifest, packRepository, servedModel } from '../bundle/pack-repository';
import { isMmeError, MmeError } from '../errors';
import { formatBytes } from '../format-bytes';
import { isInside } from '../paths';
import { defaultTargetModel } from '../repository/mme-rules';
import { shellCommand, shellQuote } from '../shell-quote';
import { withPathAsGiven } from './cli-errors';
import { CliIo, ExitCode, UsageError } from './io';
import { toJson } from './json';
import { escapeLine } from './terminal-text';
import { byteProgress } from './progress';
import { formatReport, reportToJson, summary } from './report-format';
import type { TargetFlags, VerdictFlags } from './target-options';
import { targetOf } from './validate';
import { passes, verdictOf } from './verdict';

export interface PackageOptions extends TargetFlags, VerdictFlags {
  readonly output?: string;
  readonly name?: string;
  readonly level?: string;
  readonly force?: boolean;
  readonly json?: boolean;
  /** `--no-python-syntax` sets it false. @default true */
  readonly pythonSyntax?: boolean;
}

/**
 * `onQuit` registers what a second signal, quitting before the cleanup is done, prints: the command that removes the
 * temp archive while there is one.
 */
export async function runPackage(
  path: string,
  options: PackageOptions,
  io: CliIo,
  signal?: AbortSignal,
  onQuit?: (describe: () => string | undefined) => void,
): Promise<number> {
  const level = parseLevel(options.level);
  const target = targetOf(options, true);
  const verdict = await verdictOf(options);
  const repo = resolve(io.cwd, path);
  const { output, name } = outputOf(repo, options, io.cwd);
  // The output as the user wrote it: an absolute -o stays absolute (relative to the cwd it would be ../../..).
  const shown = options.output !== undefined && isAbsolute(options.output) ? output : relative(io.cwd, output) || output;
  checkOutputPath(output, shown, repo, Boolean(options.force));
  const progress = options.json ? undefined : byteProgress(io, 'packing');
  let result;
  try {
    result = await packRepository(repo, {
      ...(name !== undefined ? { name } : {}),
      ...(level !== undefined ? { level } : {}),
      ...(target ? { target } : {}),
      pythonSyntax: options.pythonSyntax !== false && { env: io.env },
      ...(progress ? { onProgress: (read: number, total: number) => progress.update(read, total) } : {}),
    });
  } catch (err) {
    throw withPathAsGiven(err, repo, path);
  }
  if (!result.ok || !passes(result.report, verdict)) {
    // Under --strict, warnings not accepted refuse the archive as errors do: nothing is written.
    if (result.ok) result.stream.destroy();
    progress?.finish();
    const fix = result.ok
      ? 'fix the warnings above, or acknowledge them with --accept CODE, and run package again'
      : 'fix the errors above and run package again';
    if (options.json) io.stdout(toJson({ ...reportToJson(result.report, verdict), written: false }));
    else io.stdout(`${formatReport(result.report, path, verdict)}Nothing was written: ${fix}.\n`);
    return ExitCode.Failure;
  }

  let written;
  let temp: string | undefined;
  onQuit?.(() =>
    temp !== undefined && existsSync(temp) ? `Remove the partial archive: ${shellCommand(['rm', '-f', '--', temp])}` : undefined,
  );
  try {
    // The manifest hashes the archive as it streams; the writer need not hash it again.
    written = await writeStreamAtomically(result.stream, output, {
      hash: false,
      noClobber: !options.force,
      onTempFile: (path) => (temp = path),
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    result.stream.destroy();
    if (isMmeError(err, 'ABORTED')) throw new MmeError('ABORTED', 'interrupted: no archive was written.');
    if (isMmeError(err, 'ALREADY_EXISTS')) throw new UsageError(`${err.message} Add --force to replace it.`);
    throw withPathAsGiven(err, repo, path);
  } finally {
    progress?.finish();
  }
  const manifest = await result.manifest;
  if (options.json) {
    const report = reportToJson(result.report, verdict);
    io.stdout(
      toJson({
        ok: true,
        written: true,
        output: shown,
        targetModel: manifest.targetModel,
        size: written.size,
        sha256: manifest.sha256,
        entries: manifest.entries,
        models: report.models,
        excluded: manifest.excluded,
        diagnostics: report.diagnostics,
        ...(report.notes ? { notes: report.notes } : {}),
        removedStale: written.removedStale,
      }),
    );
    return ExitCode.Ok;
  }
  const lines: string[] = [];
  if (result.report.diagnostics.length > 0 || result.report.notes?.length) {
    lines.push(formatReport(result.report, path, verdict).trimEnd());
  }
  if (written.removedStale.length > 0) {
    const removed = written.removedStale.map(escapeLine).join(', ');
    lines.push(`Removed ${written.removedStale.length} temp file(s) left by an interrupted run: ${removed}`);
  }
  // Names and paths are the repository's: a newline in one must not start a line of its own.
  lines.push(`Wrote ${escapeLine(shown)}`);
  lines.push(`  TargetModel  ${escapeLine(manifest.targetModel)}`);
  lines.push(`  size         ${formatBytes(written.size)} (${written.size} bytes, ${manifest.entries} entries)`);
  lines.push(`  sha256       ${manifest.sha256}`);
  const models = manifest.models.map(
    (m) => `${escapeLine(m.name)} (${escapeLine(m.platform ?? m.backend ?? '?')}, v${m.versions.join(',')})`,
  );
  lines.push(`  models       ${models.join(', ')}`);
  if (manifest.excluded.length > 0) lines.push(`  left out     ${manifest.excluded.map(escapeLine).join(', ')}`);
  if (result.report.diagnostics.length > 0) lines.push(`  warnings     ${summary(result.report, verdict)}`);
  lines.push('');
  lines.push('Upload it under the endpoint\'s model prefix and invoke it by name:');
  // The archive is pushed under its file name unless --name gave another TargetModel: the hint carries it.
  const nameFlag = manifest.targetModel === basename(output) ? [] : ['--name', manifest.targetModel];
  lines.push(`  ${shellCommand(['mme-deploy', 'push', shown, ...nameFlag])} --endpoint <endpoint-name>`);
  lines.push(`  ${shellCommand(['mme-deploy', 'invoke', manifest.targetModel])} --endpoint <endpoint-name> ` +
    `${shellCommand(['--model', shown])} ${exampleInputs(manifest.models)}`);
  io.stdout(lines.join('\n') + '\n');
  return ExitCode.Ok;
}

/**
 * Where the archive goes and its TargetModel name. `-o DIR/` or an existing directory: `DIR/<name>`. No -o: the
 * current directory, unless that is inside the repository (`package .`), then beside the repository.
 */
function outputOf(repo: string, options: PackageOptions, cwd: string): { output: string; name?: string } {
  const given = options.output;
  const intoDirectory = given !== undefined && (/[\\/]$/.test(given) || isDirectory(resolve(cwd, given)));
  const name = options.name ?? (given !== undefined && !intoDirectory ? basename(given) : undefined);
  const file = name ?? defaultTargetModel(repo);
  if (given !== undefined) {
    return { output: intoDirectory ? join(resolve(cwd, given), file) : resolve(cwd, given), ...(name ? { name } : {}) };
  }
  const dir = isInside(realPath(repo), realPath(cwd)) ? dirname(repo) : cwd;
  return { output: join(dir, file), ...(name ? { name } : {}) };
}

/** Invoke flags for the inputs of the model SageMaker loads (the ensemble, or the only model). */
function exampleInputs(models: PackManifest['models']): string {
  const inputs = servedModel(models)?.config?.input ?? [];
  if (inputs.length === 0) return '--input <NAME>=@<file>';
  return inputs
    .map((i) =>
      i.data_type === 'TYPE_STRING'
        ? `--text ${shellQuote(`${i.name}=<sentence>`)}`
        : `--input ${shellQuote(`${i.name}=@${i.name}.json`)}`,
    )
    .join(' ');
}

function parseLevel(level: string | undefined): number | undefined {
  if (level === undefined) return undefined;
  if (!/^[0-9]$/.test(level)) throw new UsageError(`--level must be a whole number from 0 to 9, got '${level}'.`);
  return Number(level);
}

/** Refuses an output that cannot be the archive (checked before the work); `shown` is the path relative to cwd. */
function checkOutputPath(output: string, shown: string, repo: string, force: boolean) {
  const fail = (message: string) => {
    throw new UsageError(message);
  };
  if (!output.endsWith('.tar.gz')) {
    fail(`the output ${shown} must end in .tar.gz (the name SageMaker downloads and extracts).`);
  }
  if (isDirectory(output)) fail(`the output ${shown} is a directory; give a file name ending in .tar.gz.`);
  if (!existsSync(dirname(output))) fail(`the output directory ${dirname(shown)}/ does not exist; create it, or choose another -o.`);
  // Compared by path segments (`m/..x.tar.gz` is inside `m`) and after resolving links (a link to the repository).
  if (isInside(realPath(repo), join(realPath(dirname(output)), basename(output)))) {
    fail(`the output ${shown} is inside the repository being packed; write it elsewhere (-o ../name.tar.gz).`);
  }
  // Checked now, before the work; the write itself refuses to replace a file that appears meanwhile.
  if (!force && existsSync(output)) fail(`${shown} already exists; add --force to replace it, or choose another -o.`);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
