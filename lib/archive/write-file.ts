// Writes a stream to a file all-or-nothing: into a temp file beside the target, renamed over it only on success,
// so a failure or Ctrl-C never leaves a partial archive and never touches an existing one.

import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

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
 * written. On any error or abort the temp file is removed, `outPath` is left as it was, and the error is rethrown.
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
  try {
    // A byte-mode Transform buffers at most 16 KiB, unlike an async-generator stage (16 chunks of any size).
    const measure = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash?.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    await pipeline(source, measure, createWriteStream(temp, { flags: 'wx' }), { signal: options.signal });
    // Flush to disk before the rename, so a crash cannot leave a renamed but empty file.
    const handle = await open(temp, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    options.signal?.throwIfAborted();
    await rename(temp, outPath);
  } catch (err) {
    source.destroy();
    await rm(temp, { force: true });
    throw err;
  }
  return hash ? { size, sha256: hash.digest('hex') } : { size };
}
