// validateTargetModelArchive: a TargetModel .tar.gz made elsewhere, judged before it is pushed or as `validate` is
// asked to: the whole archive read once (tar structure, every gzip member's CRC), then the rules `validate --mme`
// applies to a directory, on the files as SageMaker will extract them. Weights are never written to disk.

import { createWriteStream } from 'node:fs';
import { link, mkdir, mkdtemp, open, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, posix } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { hardLinkTargetReason, linkEscapeReason } from '../archive/archive-links';
import { readTarGz, unsafeEntryReason, type TarEntry } from '../archive/tar-reader';
import { isMmeError, MmeError } from '../errors';
import { holdsActivate, type EnvArchiveContents } from '../repository/mme-rules';
import type { PlanTarget } from '../repository/tensorrt-plan-rules';
import { validateRepository, type ValidateOptions, type ValidationReport } from '../repository/validate';

/**
 * Files up to this size are written out whole; larger ones become sparse files of their size (no disk used), except
 * those the rules read: ONNX models (their graph) and python sources. Configs are a few kilobytes.
 */
const WHOLE_FILE_BYTES = 4 << 20;
const READ_BY_RULES = /(^|\/)config\.pbtxt$|\.(onnx|py)$/;
/** conda-pack archives: read as they stream past for `bin/activate`, so a placeholder of their size can stand in. */
const NESTED_ARCHIVE = /\.(tar\.gz|tgz)$/;

export interface ArchiveValidationOptions {
  /** Apply the SageMaker MME rules (push always does). @default true */
  readonly mme?: boolean;
  /** The TargetModel name the archive is uploaded as. @default - the archive's file name */
  readonly targetModel?: string;
  /** The endpoint TensorRT plans must be built for (see validateRepository). */
  readonly target?: PlanTarget;
  /** Compile the python models' sources (see validateRepository). @default true */
  readonly pythonSyntax?: ValidateOptions['pythonSyntax'];
  /** Stops the read (ABORTED). */
  readonly signal?: AbortSignal;
}

/**
 * Reads the TargetModel archive at `path` to its end and validates what it holds, as `validateRepository` validates a
 * directory (with `mme`, as SageMaker's loader will see it: nothing is left out). Throws MmeError: the reader's codes
 * for a damaged archive (TAR_TRUNCATED, TAR_BAD_ARCHIVE: a gzip holding no tar, a bad CRC...) and TAR_UNSAFE_ENTRY
 * for an entry SageMaker's extraction must not create, each message starting with `shown`; NOT_FOUND/UNREADABLE for
 * the file. Nothing is left in the temporary directory it uses.
 */
export async function validateTargetModelArchive(
  path: string,
  shown: string,
  options: ArchiveValidationOptions = {},
): Promise<ValidationReport> {
  const work = await mkdtemp(join(tmpdir(), 'mme-deploy-verify-'));
  try {
    // SageMaker extracts into /opt/ml/models/<hash>/model: a single model at the archive root is named `model`.
    const root = join(work, 'model');
    let envArchives: EnvArchiveContents;
    try {
      envArchives = await extractOutline(path, root, options.signal);
    } catch (err) {
      if (isMmeError(err) && err.code.startsWith('TAR_')) throw new MmeError(err.code, `${shown}: ${err.message}`, { cause: err });
      throw err;
    }
    return await validateRepository(root, {
      mme: options.mme ?? true,
      archived: true,
      envArchives,
      targetModel: options.targetModel ?? basename(path),
      ...(options.target ? { target: options.target } : {}),
      ...(options.pythonSyntax !== undefined ? { pythonSyntax: options.pythonSyntax } : {}),
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * Extracts the archive's outline into `root`: every directory and link, the files the rules read, and a sparse file
 * of the right size for every other one. Refuses what `local load` and SageMaker's extraction must not create.
 */
async function extractOutline(archive: string, root: string, signal: AbortSignal | undefined): Promise<EnvArchiveContents> {
  await mkdir(root, { recursive: true });
  const envArchives = new Map<string, { hasActivate: boolean } | { error: string }>();
  const symlinks = new Map<string, string>();
  const files = new Set<string>();
  const made = new Set<string>(['.']);
  const makeDir = async (dir: string) => {
    if (made.has(dir)) return;
    await mkdir(join(root, dir), { recursive: true });
    made.add(dir);
  };
  await readTarGz(
    archive,
    async (entry, content) => {
      if (entry.type === 'symlink' || entry.typeflag === '1') {
        const refusal =
          unsafeEntryReason({ ...entry, type: 'file' }) ??
          (entry.type === 'symlink' ? undefined : hardLinkTargetReason(entry.linkName ?? '', files));
        if (refusal) throw unsafeEntry(entry, refusal);
        if (entry.type === 'symlink') {
          symlinks.set(entry.path, entry.linkName ?? '');
          return;
        }
        await makeDir(posix.dirname(entry.path));
        await link(join(root, (entry.linkName ?? '').replace(/^(\.\/)+/, '')), join(root, entry.path));
        files.add(entry.path);
        return;
      }
      const refusal = unsafeEntryReason(entry);
      if (refusal) throw unsafeEntry(entry, refusal);
      if (entry.type === 'directory') return makeDir(entry.path);
      await makeDir(posix.dirname(entry.path));
      files.add(entry.path);
      const target = join(root, entry.path);
      if (entry.size <= WHOLE_FILE_BYTES || READ_BY_RULES.test(entry.path)) {
        await pipeline(content, createWriteStream(target, { flags: 'w' }));
        return;
      }
      if (NESTED_ARCHIVE.test(entry.path)) envArchives.set(target, await readNested(content));
      const handle = await open(target, 'w');
      try {
        await handle.truncate(entry.size);
      } finally {
        await handle.close();
      }
    },
    signal ? { signal } : {},
  );
  for (const [path, target] of symlinks) {
    const escape = linkEscapeReason(path, target, symlinks);
    if (escape) throw new MmeError('TAR_UNSAFE_ENTRY', `entry "${path}" is a symbolic link that ${escape}.`);
  }
  for (const [path, target] of symlinks) {
    await makeDir(posix.dirname(path));
    await symlink(target, join(root, path));
  }
  return envArchives;
}

/** What a nested .tar.gz holds, read as it streams past; the rest of it is drained whatever happens. */
async function readNested(content: Readable): Promise<{ hasActivate: boolean } | { error: string }> {
  const copy = new PassThrough({ highWaterMark: 1 << 20 });
  content.pipe(copy);
  try {
    return { hasActivate: await holdsActivate(copy) };
  } catch (err) {
    return { error: (err as Error).message };
  } finally {
    content.unpipe(copy);
    copy.destroy();
    await drain(content);
  }
}

async function drain(content: Readable): Promise<void> {
  if (content.readableEnded) return;
  await new Promise<void>((done, fail) => {
    content.on('end', done).on('error', fail);
    content.resume();
  });
}

function unsafeEntry(entry: TarEntry, refusal: string): MmeError {
  return new MmeError(
    'TAR_UNSAFE_ENTRY',
    `entry "${entry.path}" ${refusal}. SageMaker's extraction must not create it: rebuild the archive without it ` +
      '(mme-deploy package writes only regular files and directories).',
  );
}
