// The deterministic streaming tar.gz writer: same entries in, same bytes out, on any machine and however the
// compression work is scheduled; memory stays flat whatever the model size.

import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Readable } from 'node:stream';
import { MmeError } from '../errors';
import type { ArchiveEntry } from './collect';
import { crc32 } from './crc32';
import { chooseEncoding, deflateSpan, deflateSpanSync, storedBlocks } from './deflate-span';
import { TAR_BLOCK, encodeHeaders, endOfArchive, paddingAfter } from './tar-header';

/**
 * The tar stream is cut into spans of this many bytes, each compressed on its own. Part of the output format:
 * changing it changes every archive's bytes.
 */
const SPAN = 1024 * 1024;
/** Deflate's window: each span may refer back this far into the previous one. */
const WINDOW = 32 * 1024;

export interface TarGzOptions {
  /**
   * gzip compression level, 0 (store only) to 9. Spans that do not compress are stored whatever the level.
   * @default 6
   */
  readonly level?: number;
  /**
   * Spans deflated at the same time, on libuv's thread pool (threads without a JavaScript heap each, so memory
   * stays flat); 0 deflates on the calling thread. The bytes are the same either way.
   * @default - one per core, at most 4 (0 for archives of a few MiB)
   */
  readonly workers?: number;
}

/**
 * Streams `entries` as a tar.gz: POSIX ustar (PAX records for long or non-ASCII paths and files over 8 GiB), in the
 * given order, mtime 0, uid/gid 0, no user or group names, mode 0755 for directories and executables and 0644 for
 * other files; one gzip member with mtime 0 and no file name. Files are read as the stream is consumed, so
 * back-pressure holds memory to a few spans. The stream errors (MmeError UNREADABLE) if a file cannot be opened, is
 * no longer the file that was collected (another inode, or a symbolic link now), or changes size while it is packed.
 *
 * The bytes depend only on the entries, the files' contents and the level, not on timing or `workers`. Text spans go
 * through the zlib bundled with Node.js, whose match finder can differ between Node.js releases (and between CPU
 * families, where Chromium's zlib hashes with CRC instructions); stored and Huffman-only spans, most of a model's
 * bytes, do not depend on it.
 * Destroy the stream if you abandon it: that closes the file being read.
 */
export function createTarGzStream(entries: readonly ArchiveEntry[], options: TarGzOptions = {}): Readable {
  const level = options.level ?? 6;
  if (!Number.isInteger(level) || level < 0 || level > 9) {
    throw new MmeError('USAGE', `Compression level must be an integer from 0 to 9, got ${level}.`);
  }
  const small = entries.reduce((sum, entry) => sum + entry.size + TAR_BLOCK, 0) <= 2 * SPAN;
  const workers = options.workers ?? (small ? 0 : Math.min(availableParallelism(), 4));
  // The generator reads ahead by itself (spans in flight); the stream buffers no more than one piece.
  return Readable.from(gzipMember(entries, level, workers), { objectMode: false });
}

// ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=255 (unknown): nothing that depends on the machine or the time.
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]);
// An empty stored block with BFINAL set ends the deflate stream that the spans, all non-final, leave open.
const FINAL_BLOCK = Buffer.from([0x01, 0x00, 0x00, 0xff, 0xff]);

async function* gzipMember(entries: readonly ArchiveEntry[], level: number, workers: number): AsyncGenerator<Uint8Array> {
  // A span's bytes are copied into its encoded form, so its memory is free again once encoded: reading into
  // recycled spans keeps memory flat.
  const free: Buffer[] = [];
  const recycle = (span: Uint8Array) => {
    if (span.length === SPAN && free.length < workers + 2) free.push(span as Buffer);
  };
  const spans = tarSpans(entries, () => free.pop() ?? Buffer.allocUnsafeSlow(SPAN));
  try {
    yield GZIP_HEADER;
    // Encoded spans in archive order, or the promise of one while the thread pool deflates it.
    const pending: (Uint8Array | Promise<Uint8Array>)[] = [];
    let crc = 0;
    let length = 0;
    let dictionary: Uint8Array = new Uint8Array(0);
    let more = true;
    while (more || pending.length > 0) {
      while (more && pending.length <= workers + 1) {
        const next = await spans.next();
        if (next.done) {
          more = false;
          break;
        }
        const span = next.value;
        crc = crc32(span, crc);
        length += span.length;
        const encoding = chooseEncoding(span, level);
        const previous = dictionary;
        // A copy, since the span's memory is reused once it is encoded.
        if (level > 0) dictionary = new Uint8Array(span.subarray(Math.max(0, span.length - WINDOW)));
        if (encoding === 'stored') {
          pending.push(storedBlocks(span));
          recycle(span);
        } else if (workers > 0) {
          const encoded = deflateSpan(span, previous, level, encoding).then((output) => {
            const result = output ?? storedBlocks(span);
            recycle(span);
            return result;
          });
          encoded.catch(() => undefined); // awaited in order below; this only keeps a later failure from being unhandled
          pending.push(encoded);
        } else {
          pending.push(deflateSpanSync(span, previous, level, encoding) ?? storedBlocks(span));
          recycle(span);
        }
      }
      const head = pending.shift();
      if (head) yield await head;
    }
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(crc >>> 0, 0);
    trailer.writeUInt32LE(length % 2 ** 32, 4);
    yield Buffer.concat([FINAL_BLOCK, trailer]);
  } finally {
    await spans.return(undefined);
  }
}

/** The tar stream as spans of exactly SPAN bytes (the last one shorter), each in memory of its own from `allocate`. */
async function* tarSpans(entries: readonly ArchiveEntry[], allocate: () => Buffer): AsyncGenerator<Uint8Array, void, undefined> {
  let span = allocate();
  let used = 0;
  let written = 0;
  const put = function* (bytes: Uint8Array): Generator<Uint8Array> {
    for (let offset = 0; offset < bytes.length; ) {
      const n = Math.min(SPAN - used, bytes.length - offset);
      span.set(bytes.subarray(offset, offset + n), used);
      used += n;
      offset += n;
      written += n;
      if (used === SPAN) {
        yield span;
        span = allocate();
        used = 0;
      }
    }
  };

  for (const entry of entries) {
    const mode = entry.type === 'directory' || entry.executable ? 0o755 : 0o644;
    yield* put(encodeHeaders({ path: entry.path, type: entry.type, size: entry.size, mode }));
    if (entry.type !== 'file' || entry.size === 0) continue;
    if (!entry.source) throw new MmeError('USAGE', `Archive entry ${entry.path} is a file without a source path.`);
    const file = await openCollected(entry);
    try {
      let position = 0;
      while (position < entry.size) {
        const want = Math.min(SPAN - used, entry.size - position);
        const { bytesRead } = await file.read(span, used, want, position);
        if (bytesRead === 0) throw changedWhilePacking(entry);
        used += bytesRead;
        position += bytesRead;
        written += bytesRead;
        if (used === SPAN) {
          yield span;
          span = allocate();
          used = 0;
        }
      }
      if ((await file.stat()).size !== entry.size) throw changedWhilePacking(entry);
    } catch (err) {
      if (err instanceof MmeError) throw err;
      throw new MmeError('UNREADABLE', `Cannot read ${entry.source}: ${(err as Error).message}.`, { cause: err });
    } finally {
      await file.close();
    }
    yield* put(Buffer.alloc(paddingAfter(entry.size)));
  }
  yield* put(endOfArchive(written));
  if (used > 0) yield span.subarray(0, used);
}

/**
 * Opens a collected file for reading, refusing one that is no longer what was collected: O_NOFOLLOW refuses a file
 * turned into a symbolic link, and the device and inode, compared on the open descriptor, catch a file or a parent
 * directory replaced since. Either way the bytes packed are those of the file collected, or none.
 */
async function openCollected(entry: ArchiveEntry) {
  let file;
  try {
    file = await open(entry.source!, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw replacedWhilePacking(entry, 'a symbolic link');
    throw new MmeError('UNREADABLE', `Cannot read ${entry.source}: ${(err as Error).message}.`, { cause: err });
  }
  if (entry.identity) {
    const stats = await file.stat();
    if (stats.dev !== entry.identity.dev || stats.ino !== entry.identity.ino || !stats.isFile()) {
      await file.close();
      throw replacedWhilePacking(entry, 'another file');
    }
  }
  return file;
}

function replacedWhilePacking(entry: ArchiveEntry, what: string): MmeError {
  return new MmeError(
    'UNREADABLE',
    `${entry.source} was replaced by ${what} after the repository was listed; nothing of it was packed. ` +
      'Make sure nothing changes the repository while it is packed, then package again.',
  );
}

function changedWhilePacking(entry: ArchiveEntry): MmeError {
  return new MmeError(
    'UNREADABLE',
    `${entry.source} changed size while it was being packed (expected ${entry.size} bytes). ` +
      'Wait until whatever writes it has finished, then package again.',
  );
}
