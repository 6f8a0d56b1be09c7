// `mme-deploy package <repo> [-o out.tar.gz] [--name T] [--level 0-9] [--json]`: validate with the MME rules, then
// write the archive atomically (temp file beside the target, renamed on success; Ctrl-C leaves nothing behind).

import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { writeStreamAtomically } from '../archive/write-file';
import { PackManifest, packRepository, servedModel } from '../bundle/pack-repository';
import { countSummary } from '../diagnostics';
import { isMmeError, MmeError } from '../errors';
import { formatBytes } from '../format-bytes';
import { isInside } from '../paths';
import { defaultTargetModel } from '../repository/mme-rules';
import { RepositoryAccessError } from '../repository/validate';
import { CliError, CliIo, ExitCode, UsageError } from './io';
import { toJson } from './json';
import { formatReport, reportToJson } from './report-format';

export interface PackageOptions {
  readonly output?: string;
  readonly name?: string;
  readonly level?: string;
  readonly json?: boolean;
}

export async function runPackage(path: string, options: PackageOptions, io: CliIo, signal?: AbortSignal): Promise<number> {
  const level = parseLevel(options.level);
  const name = options.name ?? (options.output ? basename(options.output) : undefined);
  const repo = resolve(io.cwd, path);
  const output = resolve(io.cwd, options.output ?? name ?? defaultTargetModel(repo));
  checkOutputPath(output, repo);
  let result;
  try {
    result = await packRepository(repo, { ...(name !== undefined ? { name } : {}), ...(level !== undefined ? { level } : {}) });
  } catch (err) {
    if (err instanceof RepositoryAccessError) throw new MmeError(err.code, err.message.replace(repo, path));
    throw err;
  }
  if (!result.ok) {
    if (options.json) io.stdout(toJson({ ...reportToJson(result.report), written: false }));
    else io.stdout(`${formatReport(result.report, path)}Nothing was written: fix the errors above and run package again.\n`);
    return ExitCode.Failure;
  }

  let written;
  try {
    // The manifest hashes the archive as it streams; the writer need not hash it again.
    written = await writeStreamAtomically(result.stream, output, { hash: false, ...(signal ? { signal } : {}) });
  } catch (err) {
    result.stream.destroy();
    if (isMmeError(err, 'ABORTED')) throw new MmeError('ABORTED', 'interrupted: no archive was written.');
    if (isMmeError(err)) throw err;
    throw new CliError(`could not write ${output}: ${(err as Error).message}. Nothing was written.`);
  }
  const manifest = await result.manifest;
  const shown = relative(io.cwd, output) || output;
  if (options.json) {
    const report = reportToJson(result.report);
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
      }),
    );
    return ExitCode.Ok;
  }
  const lines: string[] = [];
  if (result.report.diagnostics.length > 0) lines.push(formatReport(result.report, path).trimEnd());
  lines.push(`Wrote ${shown}`);
  lines.push(`  TargetModel  ${manifest.targetModel}`);
  lines.push(`  size         ${formatBytes(written.size)} (${written.size} bytes, ${manifest.entries} entries)`);
  lines.push(`  sha256       ${manifest.sha256}`);
  const models = manifest.models.map((m) => `${m.name} (${m.platform ?? m.backend ?? '?'}, v${m.versions.join(',')})`);
  lines.push(`  models       ${models.join(', ')}`);
  if (manifest.excluded.length > 0) lines.push(`  left out     ${manifest.excluded.join(', ')}`);
  if (result.report.diagnostics.length > 0) lines.push(`  warnings     ${countSummary(result.report.diagnostics)}`);
  lines.push('');
  lines.push('Upload it under the endpoint\'s model prefix and invoke it by name:');
  lines.push(`  mme-deploy push ${shown} --endpoint <endpoint-name>`);
  const invoke = `--target-model ${manifest.targetModel} --model ${shown} ${exampleInputs(manifest.models)}`;
  lines.push(`  mme-deploy invoke --endpoint <endpoint-name> ${invoke}`);
  io.stdout(lines.join('\n') + '\n');
  return ExitCode.Ok;
}

/** Invoke flags for the inputs of the model SageMaker loads (the ensemble, or the only model). */
function exampleInputs(models: PackManifest['models']): string {
  const inputs = servedModel(models)?.config?.input ?? [];
  if (inputs.length === 0) return '--input <NAME>=@<file>';
  return inputs
    .map((i) => (i.data_type === 'TYPE_STRING' ? `--text '${i.name}=<sentence>'` : `--input ${i.name}=@<${i.name}.json>`))
    .join(' ');
}

function parseLevel(level: string | undefined): number | undefined {
  if (level === undefined) return undefined;
  if (!/^[0-9]$/.test(level)) throw new UsageError(`--level must be a whole number from 0 to 9, got '${level}'.`);
  return Number(level);
}

function checkOutputPath(output: string, repo: string) {
  const fail = (message: string) => {
    throw new UsageError(message);
  };
  if (!output.endsWith('.tar.gz')) {
    fail(`the output ${output} must end in .tar.gz (the name SageMaker downloads and extracts).`);
  }
  if (existsSync(output) && statSync(output).isDirectory()) {
    fail(`the output ${output} is a directory; give a file name ending in .tar.gz.`);
  }
  if (!existsSync(dirname(output))) fail(`the output directory ${dirname(output)} does not exist.`);
  // Compared by path segments (`m/..x.tar.gz` is inside `m`) and after resolving links (a link to the repository).
  if (isInside(realPath(repo), join(realPath(dirname(output)), basename(output)))) {
    fail(`the output ${output} is inside the repository being packed; write it elsewhere (-o ../name.tar.gz).`);
  }
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
