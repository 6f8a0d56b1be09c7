// Writes a stream to a file all-or-nothing: into a temp file beside the target, renamed over it only on success,
// so a failure or an interruption never leaves a partial archive and never touches an existing one. Temp files carry
// the host and process id of their writer, so a later write removes those whose writer is gone (a process killed
// with SIGKILL, a machine that lost power) and never one a live process is still writing.

import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { link, open, readdir, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errnoReason, isMmeError, MmeError } from '../errors';

export interface WriteOptions {
  /**
   * Aborting stops the write, destroys `source` and removes the temp file; the promise rejects with an AbortError.
   * @default - no way to abort
   */
  readonly signal?: AbortSignal;
  /**
   * Compute the SHA-256 of what is written. Turn it off when the caller already hashes the stream (packRepository's
   * manifest does): hashing a model twice costs about a second per GiB.
   * @default true
   */
  readonly hash?: boolean;
  /**
   * Refuse to replace an existing `outPath` (ALREADY_EXISTS), checked atomically when the file is put in place (a hard
   * link, which fails if the name exists), so a file that appeared meanwhile is never overwritten either.
   * @default false - an existing file is replaced
   */
  readonly noClobber?: boolean;
  /**
   * Whether the process with this id is running on this host (tests replace it).
   * @default - asks the kernel (signal 0)
   */
  readonly isRunning?: (pid: number) => boolean;
  /**
   * Told the temp file's path when it is about to be created, and undefined once it is gone (put in place or
   * removed): what a caller that may be quit outright (a second Ctrl-C) names for removal by hand.
   * @default - not told
   */
  readonly onTempFile?: (path: string | undefined) => void;
}

export interface WrittenFile {
  readonly size: number;
  /** Hex SHA-256 of the bytes written (absent when `hash: false`). */
  readonly sha256?: string;
  /** Temp files of earlier writes of the same file whose writer is gone, removed before this write (file names). */
  readonly removedStale: string[];
}

/**
 * Streams `source` into `outPath` atomically (same-directory rename), returning the size and SHA-256 of what was
 * written; the file and then its directory are fsynced, so once this resolves the new file survives a crash.
 * On any error or abort the temp file is removed and `outPath` is left as it was. Rejects with the source's own
 * error, or an MmeError: ABORTED when `signal` aborts, UNWRITABLE when the file cannot be written, ALREADY_EXISTS
 * with `noClobber`.
 */
export async function writeStreamAtomically(
  source: Readable,
  outPath: string,
  options: WriteOptions = {},
): Promise<WrittenFile> {
  const removedStale = await removeStaleTempFiles(outPath, options.isRunning ?? isRunning);
  const temp = join(dirname(outPath), tempFileName(basename(outPath)));
  const hash = options.hash === false ? undefined : createHash('sha256');
  let size = 0;
  let placed = false;
  let sinkError: unknown;
  const unwritable = (err: unknown) =>
    new MmeError('UNWRITABLE', `cannot write ${outPath}: ${errnoReason(err)}.`, { cause: err });
  try {
    // A byte-mode Transform buffers at most 16 KiB, unlike an async-generator stage (16 chunks of any size).
    const measure = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash?.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    options.onTempFile?.(temp);
    // Exclusive create: a file that has the temp name already (another writer's) is never written into.
    const sink = createWriteStream(temp, { flags: 'wx' });
    sink.once('error', (err) => (sinkError = err));
    await pipeline(source, measure, sink, { signal: options.signal }).catch((err: unknown) => {
      throw err === sinkError ? unwritable(err) : err;
    });
    // Flush to disk before the rename, so a crash cannot leave a renamed but empty file.
    await syncPath(temp).catch((err: unknown) => {
      throw unwritable(err);
    });
    options.signal?.throwIfAborted();
    await (options.noClobber ? placeNew(temp, outPath) : rename(temp, outPath)).catch((err: unknown) => {
      throw isMmeError(err) ? err : unwritable(err);
    });
    placed = true;
    options.onTempFile?.(undefined);
    // The rename lives in the directory: until the directory is flushed a crash can bring back the old name
    // (or none), whatever was synced of the file (fsync(2): "an explicit fsync() on a file descriptor for the
    // directory is also needed").
    await syncPath(dirname(outPath)).catch((err: unknown) => {
      throw unwritable(err);
    });
  } catch (err) {
    source.destroy();
    // A temp name that was taken (the exclusive create failed) is another writer's file: not ours to remove.
    const taken = (sinkError as NodeJS.ErrnoException | undefined)?.code === 'EEXIST';
    if (!placed) {
      if (!taken) await rm(temp, { force: true });
      options.onTempFile?.(undefined);
    }
    if ((err as Error).name === 'AbortError' && !isMmeError(err)) {
      throw new MmeError('ABORTED', `interrupted: ${outPath} was not written.`, { cause: err });
    }
    throw err;
  }
  return hash ? { size, sha256: hash.digest('hex'), removedStale } : { size, removedStale };
}

/** Puts `temp` in place as `outPath` unless that name exists: link(2) fails with EEXIST where rename(2) would replace. */
async function placeNew(temp: string, outPath: string): Promise<void> {
  try {
    await link(temp, outPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      throw new MmeError('ALREADY_EXISTS', `${outPath} appeared while it was being written; it was not replaced.`);
    }
    // File systems without hard links (FAT, some network mounts): the caller checked the name was free just before.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw err;
    await rename(temp, outPath);
    return;
  }
  await rm(temp, { force: true });
}

// Host names go into file names: keep the characters that are safe there, and short.
const HOST = hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 63) || 'host';

/** `.NAME.HOST.PID.RANDOM.tmp`: a dot-file beside the target, visible for what it is, never a collision. */
function tempFileName(name: string): string {
  return `.${name}.${HOST}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
}

/**
 * Removes the temp files of earlier writes of `outPath` whose writer no longer runs: made on this host by a process
 * id that is gone. Files from other hosts (a shared directory) and of live processes are left alone; so are those of
 * versions before the host was in the name, unless their process is gone too.
 */
async function removeStaleTempFiles(outPath: string, running: (pid: number) => boolean): Promise<string[]> {
  const name = basename(outPath);
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`^\\.${escaped}\\.(?:([A-Za-z0-9-]+)\\.)?(\\d+)\\.[0-9a-f]{8}\\.tmp$`);
  let names: string[];
  try {
    names = await readdir(dirname(outPath));
  } catch {
    return []; // the write itself reports an unusable directory
  }
  const removed: string[] = [];
  for (const candidate of names) {
    const match = pattern.exec(candidate);
    if (!match) continue;
    const [, host, pidText] = match;
    const pid = Number(pidText);
    if ((host !== undefined && host !== HOST) || pid === process.pid || running(pid)) continue;
    await rm(join(dirname(outPath), candidate), { force: true }).then(
      () => removed.push(candidate),
      () => undefined,
    );
  }
  return removed;
}

/** Whether a process with this id exists here; EPERM means it does, but belongs to another user. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** fsync(2) on a file or directory, opened read-only for the purpose. */
async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
