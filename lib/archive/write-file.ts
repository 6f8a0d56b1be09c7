// Writes a stream to a file all-or-nothing: into a temp file beside the target, renamed over it only on success,
// so a failure or Ctrl-C never leaves a partial archive and never touches an existing one.

import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isMmeError, MmeError } from '../errors';

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
}

export interface WrittenFile {
  readonly size: number;
  /** Hex SHA-256 of the bytes written (absent when `hash: false`). */
  readonly sha256?: string;
}

/**
 * Streams `source` into `outPath` atomically (same-directory rename), returning the size and SHA-256 of what was
 * written; the file and then its directory are fsynced, so once this resolves the new file survives a crash.
 * On any error or abort the temp file is removed and `outPath` is left as it was. Rejects with the source's own
 * error, or an MmeError: ABORTED when `signal` aborts, UNWRITABLE when the file cannot be written.
 */
export async function writeStreamAtomically(
  source: Readable,
  outPath: string,
  options: WriteOptions = {},
): Promise<WrittenFile> {
  // A dot-file with the target's name, the process id and random bytes: visible for what it is, never a collision.
  const temp = join(dirname(outPath), `.${basename(outPath)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const hash = options.hash === false ? undefined : createHash('sha256');
  let size = 0;
  let renamed = false;
  const unwritable = (err: unknown) =>
    new MmeError('UNWRITABLE', `cannot write ${outPath}: ${(err as Error).message}.`, { cause: err });
  try {
    // A byte-mode Transform buffers at most 16 KiB, unlike an async-generator stage (16 chunks of any size).
    const measure = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash?.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    const sink = createWriteStream(temp, { flags: 'wx' });
    let sinkError: unknown;
    sink.once('error', (err) => (sinkError = err));
    await pipeline(source, measure, sink, { signal: options.signal }).catch((err: unknown) => {
      throw err === sinkError ? unwritable(err) : err;
    });
    // Flush to disk before the rename, so a crash cannot leave a renamed but empty file.
    await syncPath(temp).catch((err: unknown) => {
      throw unwritable(err);
    });
    options.signal?.throwIfAborted();
    await rename(temp, outPath).catch((err: unknown) => {
      throw unwritable(err);
    });
    renamed = true;
    // The rename lives in the directory: until the directory is flushed a crash can bring back the old name
    // (or none), whatever was synced of the file (fsync(2): "an explicit fsync() on a file descriptor for the
    // directory is also needed").
    await syncPath(dirname(outPath)).catch((err: unknown) => {
      throw unwritable(err);
    });
  } catch (err) {
    source.destroy();
    if (!renamed) await rm(temp, { force: true });
    if ((err as Error).name === 'AbortError' && !isMmeError(err)) {
      throw new MmeError('ABORTED', `interrupted: ${outPath} was not written.`, { cause: err });
    }
    throw err;
  }
  return hash ? { size, sha256: hash.digest('hex') } : { size };
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
