// The repository and archives the push tests start from.

import { execFileSync } from 'node:child_process';
import { closeSync, cpSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** The one-model python repository (model add_one, input INPUT0). */
export const ADDER = join(__dirname, '..', 'constructs', 'fixtures', 'repositories', 'add_one_python');

/** A copy of ADDER at `<dir>/adder`. */
export function copyAdder(dir: string): string {
  const root = join(dir, 'adder');
  cpSync(ADDER, root, { recursive: true });
  return root;
}

/** `root` packed by GNU tar into `<dir>/<name>`, as a user would make the archive. */
export function tarArchive(dir: string, root: string, name: string): string {
  const archive = join(dir, name);
  execFileSync('tar', ['-C', root, '-czf', archive, '.']);
  return archive;
}

/**
 * A file of `size` bytes that only the gzip magic says is an archive: `--no-verify` (verify: false) checks nothing more
 * before the upload. The rest are zeros left as a hole (a sparse file), so a multipart-sized file costs no CPU to make;
 * an upload reads it as any file.
 */
export function gzipMagicFile(file: string, size: number): string {
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, Buffer.from([0x1f, 0x8b]));
    ftruncateSync(fd, size);
  } finally {
    closeSync(fd);
  }
  return file;
}

/**
 * A real gzip of `size` zero bytes stored uncompressed (level 0): an archive about `size` bytes long. Zeros, and zlib's
 * output in one chunk: none of the content is read, and making it costs a tenth of randomBytes, then zlib's default
 * 16 KB output chunks joined into one buffer.
 */
export function storedGzip(size: number): Buffer {
  return gzipSync(Buffer.alloc(size), { level: 0, chunkSize: size + (1 << 16) });
}
