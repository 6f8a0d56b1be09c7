// Reads what the planner needs from each path the user names: a TargetModel archive (.tar.gz, read as a stream,
// never extracted) or a model repository directory (as `mme-deploy package` would pack it). Everything else in
// lib/plan is pure; this file is the only one that touches the disk.

import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import { excludedReason } from '../archive/exclusions';
import { ExtractionVerdict, readTarGz } from '../archive/tar-reader';
import type { ModelConfig } from '../config/model-config-schema';
import { MAX_CONFIG_BYTES, parseModelConfig } from '../config/parse';
import { diagnostic, type Diagnostic } from '../diagnostics';
import { isMmeError, MmeError, errnoReason } from '../errors';
import { shellCommand } from '../shell-quote';
import { validateRepository } from '../repository/validate';
import type { ModelFile, TritonModelFiles } from './memory-estimate';

/** One TargetModel: what SageMaker downloads, extracts and asks Triton to load as one unit. */
export interface BundleFiles {
  /** The TargetModel name: the archive's file name, or the repository directory's name. */
  readonly name: string;
  readonly source: string;
  readonly kind: 'archive' | 'repository';
  /** Compressed size; for a repository, the extracted size (weights barely compress). */
  readonly archiveBytes: number;
  readonly archiveBytesEstimated: boolean;
  readonly extractedBytes: number;
  readonly models: readonly TritonModelFiles[];
}

export interface ReadBundleOptions {
  /** Stops reading an archive (the result then has a `plan-unreadable-archive` error). @default - no way to stop */
  readonly signal?: AbortSignal;
}

/**
 * What the planner needs from one archive or repository. A path that is missing or cannot be read (a file in a
 * repository included) gives a `plan-unreadable-input` error with the reason (`cannot read PATH: permission denied`).
 */
export async function readBundle(
  path: string,
  options: ReadBundleOptions = {},
): Promise<{ bundle?: BundleFiles; diagnostics: Diagnostic[] }> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    return { diagnostics: [ioError(path, err)] };
  }
  return info.isDirectory() ? readRepository(path) : readArchive(path, info.size, options.signal);
}

async function readArchive(path: string, size: number, signal?: AbortSignal): Promise<{ bundle?: BundleFiles; diagnostics: Diagnostic[] }> {
  const name = basename(path);
  const tally = new ArchiveFiles();
  const configs = new Map<string, string>();
  // The verdict `local load` gives, entry by entry: an archive SageMaker would not extract safely is no plan's input.
  const verdict = new ExtractionVerdict('inside');
  try {
    await readTarGz(path, async (entry, content) => {
      verdict.check(entry);
      if (entry.type !== 'file') return;
      tally.add(entry.path, entry.size);
      if (entry.path === 'config.pbtxt' || /^[^/]+\/config\.pbtxt$/.test(entry.path)) {
        // Only configs are read into memory, and no more of them than the validator accepts.
        if (entry.size > MAX_CONFIG_BYTES) {
          throw new MmeError(
            'INVALID',
            `${entry.path} in the archive is ${entry.size} bytes; a model configuration is at most ${MAX_CONFIG_BYTES} ` +
              'bytes here. Check that this is really a config.pbtxt.',
          );
        }
        configs.set(entry.path, await readText(content));
      }
    }, signal ? { signal } : {});
    verdict.finish();
  } catch (err) {
    if (isMmeError(err, 'NOT_FOUND') || isMmeError(err, 'UNREADABLE')) return { diagnostics: [ioError(path, err)] };
    return {
      diagnostics: [
        diagnostic('error', 'plan-unreadable-archive', `cannot read ${path}: ${(err as Error).message}`, { file: name }),
      ],
    };
  }
  const { models, diagnostics } = groupModels(name, tally.files(), configs);
  return {
    bundle: {
      name,
      source: path,
      kind: 'archive',
      archiveBytes: size,
      archiveBytesEstimated: false,
      extractedBytes: tally.bytes,
      models,
    },
    diagnostics,
  };
}

async function readRepository(path: string): Promise<{ bundle?: BundleFiles; diagnostics: Diagnostic[] }> {
  const name = basename(path.replace(/[\\/]+$/, '')) || path;
  const diagnostics: Diagnostic[] = [];
  const models: TritonModelFiles[] = [];
  const files: ModelFile[] = [];
  try {
    // The validator's discovery gives each model's parsed config and auto-completed backend, as Triton sees them.
    const report = await validateRepository(path, { mme: true });
    const errors = report.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) {
      diagnostics.push(
        diagnostic(
          'warning',
          'plan-repository-invalid',
          `${name} has ${errors.length} validation error(s) (first: ${errors[0]!.message}); the estimate uses what ` +
            `could be read. Run \`${shellCommand(['mme-deploy', 'validate', '--mme', path])}\` to see them all.`,
          { file: path },
        ),
      );
    }
    for (const summary of report.models) {
      const modelFiles: ModelFile[] = [];
      await walk(join(path, summary.path), '', modelFiles);
      models.push({
        name: summary.name,
        ...(summary.config ? { config: summary.config } : {}),
        ...(summary.backend ? { backend: summary.backend } : {}),
        files: modelFiles,
      });
    }
    await walk(path, '', files);
  } catch (err) {
    return { diagnostics: [ioError(path, err)] };
  }
  if (models.length === 0) diagnostics.push(noModels(name));
  const extractedBytes = files.reduce((sum, f) => sum + f.size, 0);
  return {
    bundle: {
      name,
      source: path,
      kind: 'repository',
      archiveBytes: extractedBytes,
      archiveBytesEstimated: true,
      extractedBytes,
      models,
    },
    diagnostics,
  };
}

/** Every regular file under `dir`, skipping what the packer leaves out; symbolic links are followed by stat. */
async function walk(root: string, relative: string, out: ModelFile[]): Promise<void> {
  const entries = await readdir(join(root, relative), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (excludedReason(entry.name)) continue;
    const child = relative ? `${relative}/${entry.name}` : entry.name;
    const info = entry.isSymbolicLink() ? await stat(join(root, child)) : entry;
    if (info.isDirectory()) await walk(root, child, out);
    else if (info.isFile()) out.push({ path: child, size: (await stat(join(root, child))).size });
  }
}

/**
 * An archive's files as the memory estimate reads them, in memory that does not grow with the number of files:
 * files whose names it looks at (`model.*` and what is below it, `*.py`, conda-pack archives) one by one, up to
 * KEPT_FILES, and all others summed per directory two levels deep, as one file `m/1/(N files)` that counts for its
 * version like the files it stands for. An archive of a million small files then costs a few MB, not 300.
 */
class ArchiveFiles {
  bytes = 0;
  private readonly kept: ModelFile[] = [];
  private readonly sums = new Map<string, { size: number; count: number }>();

  add(path: string, size: number): void {
    this.bytes += size;
    const segments = path.split('/');
    const name = segments[segments.length - 1]!;
    const looked = segments.some((s) => s.startsWith('model.')) || name.endsWith('.py') || /\.(tar\.gz|tgz|tar)$/.test(name);
    if (looked && this.kept.length < KEPT_FILES) {
      this.kept.push({ path, size });
      return;
    }
    const directory = segments.slice(0, Math.min(2, segments.length - 1)).join('/');
    if (!this.sums.has(directory) && this.sums.size >= SUMMED_DIRECTORIES) {
      throw new MmeError(
        'INVALID',
        `the archive holds files in more than ${SUMMED_DIRECTORIES} directories; a TargetModel archive holds a few ` +
          'model directories (SageMaker warns above 5). Plan one archive per model.',
      );
    }
    const sum = this.sums.get(directory) ?? { size: 0, count: 0 };
    sum.size += size;
    sum.count += 1;
    this.sums.set(directory, sum);
  }

  files(): ModelFile[] {
    const summed = [...this.sums].map(([directory, sum]) => ({
      path: `${directory ? `${directory}/` : ''}(${sum.count} files)`,
      size: sum.size,
    }));
    return [...this.kept, ...summed];
  }
}

/** Files kept one by one, and directories summed, before ArchiveFiles stops growing (a few MB each). */
const KEPT_FILES = 100_000;
const SUMMED_DIRECTORIES = 100_000;

/**
 * Splits an archive's files into Triton models: each top-level directory with a config.pbtxt is one model; a
 * config.pbtxt at the root makes the root itself the model (both layouts load on Triton's SageMaker frontend).
 */
function groupModels(
  bundle: string,
  files: readonly ModelFile[],
  configs: ReadonlyMap<string, string>,
): { models: TritonModelFiles[]; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const parse = (file: string, model: string): ModelConfig | undefined => {
    const text = configs.get(file);
    if (text === undefined) return undefined;
    const result = parseModelConfig(text, { file: `${bundle}/${file}`, model });
    const errors = result.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) {
      diagnostics.push(
        diagnostic(
          'warning',
          'plan-config-errors',
          `${bundle}/${file} has ${errors.length} error(s) (first: ${errors[0]!.message}); the estimate uses what ` +
            `could be read. Run \`mme-deploy validate --mme\` on the repository to see them all.`,
          { file: `${bundle}/${file}`, model },
        ),
      );
    }
    return result.config;
  };
  if (configs.has('config.pbtxt')) {
    const model = bundle.replace(/\.tar\.gz$|\.tgz$/, '');
    return { models: [{ name: model, config: parse('config.pbtxt', model), files }], diagnostics };
  }
  const byDir = new Map<string, ModelFile[]>();
  for (const file of files) {
    const slash = file.path.indexOf('/');
    if (slash < 0) continue;
    const dir = file.path.slice(0, slash);
    if (!configs.has(`${dir}/config.pbtxt`)) continue;
    let list = byDir.get(dir);
    if (!list) byDir.set(dir, (list = []));
    list.push({ path: file.path.slice(slash + 1), size: file.size });
  }
  const models = [...byDir.keys()].sort().map((dir) => ({
    name: dir,
    config: parse(`${dir}/config.pbtxt`, dir),
    files: byDir.get(dir)!,
  }));
  if (models.length === 0) diagnostics.push(noModels(bundle));
  return { models, diagnostics };
}

function noModels(bundle: string): Diagnostic {
  return diagnostic(
    'error',
    'plan-no-models',
    `${bundle} holds no model: no <model>/config.pbtxt at its top level. Triton on SageMaker needs model ` +
      `directories at the archive root (see \`mme-deploy validate --mme\`).`,
    { file: bundle },
  );
}

async function readText(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function ioError(path: string, err: unknown): Diagnostic {
  // The library's own errors already say what could not be read (a file inside a repository, say).
  const reason = (isMmeError(err) ? err.message : `cannot read ${path}: ${errnoReason(err)}`).replace(/\.$/, '');
  const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
  const hint = missing ? '; give TargetModel archives (.tar.gz) or model repository directories' : '';
  return diagnostic('error', 'plan-unreadable-input', `${reason}${hint}.`, { file: path });
}
