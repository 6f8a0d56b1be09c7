// What `pushTargetModel` uploads: a TargetModel archive as it is (read to its end and validated with the MME rules
// first, unless told not to), or a repository directory validated with the MME rules and packed on the fly.

import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { readStreamedModelConfig } from '../aws/invoke-model-config';
import { packRepository, servedModel } from '../bundle/pack-repository';
import { versionedTargetModelOf } from '../bundle/versioned-target-model';
import type { ModelConfig } from '../config/model-config-schema';
import { MmeError, unreadable } from '../errors';
import { defaultTargetModel, targetModelProblems } from '../repository/mme-rules';
import type { ValidationReport } from '../repository/validate';

export interface PushSource {
  readonly kind: 'archive' | 'directory';
  readonly targetModel: string;
  /** Opens the bytes; an archive is opened only once the upload may start. */
  readonly open: () => Readable;
  /** Abandons the source when nothing (more) will be read (stops the packer's workers). */
  readonly close: () => void;
  /** The byte count, when known before the upload (an archive). */
  readonly size?: number;
  /**
   * The config of the model SageMaker serves, for an invoke example: a directory's from its validation, an archive's
   * read from the bytes uploaded (so it resolves once they are all read), undefined when it cannot be told.
   */
  readonly config: () => Promise<ModelConfig | undefined>;
  /** With `versioned`: the archive the name was computed from, which the upload must match. */
  readonly versioned?: { readonly sha256: string; readonly size: number };
}

export interface SourceOptions {
  /** The TargetModel name. @default - the archive's file name, or `<directory>.tar.gz` */
  readonly name?: string;
  /** gzip level 0–9 when packing a directory. @default 6 */
  readonly level?: number;
  /** Name the TargetModel `<name>-<sha256:12>.tar.gz` (bundle/target-model-name.ts). @default false */
  readonly versioned?: boolean;
  /**
   * Read an archive to its end and apply the MME rules before anything is uploaded (bundle/verify-archive.ts); false
   * checks only that it is gzip. @default true
   */
  readonly verify?: boolean;
  /** Stops the verification of an archive (ABORTED). */
  readonly signal?: AbortSignal;
}

/**
 * Checks the source and its TargetModel name. Returns the validation report instead of a source when a directory
 * has errors; throws `MmeError` (`NOT_FOUND`, `USAGE`) for a path or a name that cannot be pushed.
 */
export async function openPushSource(
  path: string,
  shown: string,
  options: SourceOptions,
): Promise<PushSource | { readonly report: ValidationReport }> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw unreadable(shown, err);
    throw new MmeError('NOT_FOUND', `${shown} does not exist; give a TargetModel archive (.tar.gz) or a model repository directory.`);
  }
  const targetModel = options.name ?? (isDirectory ? defaultTargetModel(path.replace(/[\\/]+$/, '') || path) : basename(path));
  const problem = targetModelProblems(targetModel);
  if (problem) throw new MmeError('USAGE', `${problem}${options.name ? '' : ' Choose a name with --name.'}`);
  const source = isDirectory
    ? await packedDirectory(path, targetModel, options.level)
    : await archiveFile(path, shown, targetModel, options);
  return options.versioned && !('report' in source) ? versionedSource(source, path, targetModel, options.level) : source;
}

/**
 * `source` under its versioned name: a first pass through the deterministic packer (or over the archive file) gives
 * the hash before the upload picks its key (bundle/versioned-target-model.ts says what that costs). The directory was
 * validated with its model.py syntax check a moment ago (packedDirectory): the hashing pass checks no python again (one
 * python start less per push). What it hashes is what must be uploaded (checkVersioned), as an unversioned push
 * uploads the files as they are when read.
 */
async function versionedSource(source: PushSource, path: string, name: string, level: number | undefined): Promise<PushSource> {
  const named = await versionedTargetModelOf(path, { name, pythonSyntax: false, ...(level !== undefined ? { level } : {}) });
  if (!named.ok) return source; // cannot happen: the same directory just validated
  return { ...source, targetModel: named.targetModel, versioned: { sha256: named.sha256, size: named.size } };
}

async function archiveFile(
  path: string,
  shown: string,
  targetModel: string,
  options: SourceOptions,
): Promise<PushSource | { report: ValidationReport }> {
  const { size } = await stat(path);
  await checkGzip(path, shown);
  if (options.verify ?? true) {
    const { validateTargetModelArchive } = await import('../bundle/verify-archive');
    const report = await validateTargetModelArchive(path, shown, { targetModel, ...(options.signal ? { signal: options.signal } : {}) });
    if (!report.ok) return { report };
    const served = servedModel(report.models)?.config;
    return { ...streamedArchive(path, shown, targetModel, size), config: async () => served };
  }
  return streamedArchive(path, shown, targetModel, size);
}

/** The archive's bytes for the upload, its served model's config read from the same bytes as they go. */
function streamedArchive(path: string, shown: string, targetModel: string, size: number): PushSource {
  let stream: Readable | undefined;
  let config: Promise<ModelConfig | undefined> = Promise.resolve(undefined);
  return {
    kind: 'archive',
    targetModel,
    open: () => {
      stream = createReadStream(path, { highWaterMark: 1 << 20 });
      // The bytes uploaded are read once more, as they go, for the served model's config: no second pass over a
      // large archive. A copy the reader gives up on is drained, so it never holds the upload back. Both branches
      // are piped here, at once: a file stream piped to one branch starts flowing, and whatever it emitted before
      // the upload attached to it would be missing from the object.
      const upload = new PassThrough({ highWaterMark: 1 << 20 });
      const copy = new PassThrough({ highWaterMark: 1 << 20 });
      const file = stream;
      file.on('error', (err) => upload.destroy(err));
      file.pipe(upload);
      file.pipe(copy);
      config = readStreamedModelConfig(copy, shown).then(
        (found) => found.config,
        () => {
          copy.resume();
          return undefined;
        },
      );
      return upload;
    },
    close: () => stream?.destroy(),
    config: () => config,
    size,
  };
}

async function packedDirectory(
  path: string,
  targetModel: string,
  level: number | undefined,
): Promise<PushSource | { report: ValidationReport }> {
  const packed = await packRepository(path, { name: targetModel, ...(level !== undefined ? { level } : {}) });
  if (!packed.ok) return { report: packed.report };
  // The manifest rejects when the stream fails; the upload reports that failure, so this one is only observed.
  packed.manifest.catch(() => undefined);
  const config = servedModel(packed.report.models)?.config;
  const stream = packed.stream;
  return {
    kind: 'directory',
    targetModel: packed.targetModel,
    open: () => stream,
    close: () => stream.destroy(),
    config: async () => config,
  };
}

async function checkGzip(path: string, shown: string): Promise<void> {
  const handle = await open(path, 'r').catch((err: unknown) => {
    throw unreadable(shown, err);
  });
  try {
    const magic = Buffer.alloc(2);
    const { bytesRead } = await handle.read(magic, 0, 2, 0);
    if (bytesRead < 2 || magic[0] !== 0x1f || magic[1] !== 0x8b) {
      throw new MmeError(
        'USAGE',
        `${shown} is not gzip-compressed; SageMaker extracts every TargetModel as a .tar.gz. Push the repository ` +
          'directory instead, or make the archive with `mme-deploy package`.',
      );
    }
  } finally {
    await handle.close();
  }
}
