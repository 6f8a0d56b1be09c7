import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { writeStreamAtomically } from '../../lib/archive/write-file';
import { tempDir } from './archive-fixtures';

/** Resolves once a temp file exists beside the output, i.e. the write is under way (polls; machines may be busy). */
async function tempFileAppears(dir: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (readdirSync(dir).some((name) => name.endsWith('.tmp'))) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no temp file appeared');
}

describe('writeStreamAtomically', () => {
  let dir: ReturnType<typeof tempDir>;
  let out: string;
  beforeEach(() => {
    dir = tempDir();
    out = join(dir.path, 'model.tar.gz');
  });
  afterEach(() => dir.cleanup());

  it('writes the bytes and returns their size and SHA-256, leaving no temp file', async () => {
    const data = Buffer.from('some archive bytes'.repeat(10_000));
    const result = await writeStreamAtomically(Readable.from([data.subarray(0, 1000), data.subarray(1000)]), out);
    expect(readFileSync(out).equals(data)).toBe(true);
    expect(result).toEqual({ size: data.length, sha256: createHash('sha256').update(data).digest('hex') });
    expect(readdirSync(dir.path)).toEqual(['model.tar.gz']);
  });

  it('fsyncs the file before the rename and its directory after it, so the new name survives a crash', async () => {
    // Every fsync made through a FileHandle, as the path its descriptor names and whether the output existed then.
    const probe = await open(__filename, 'r');
    const prototype = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    const synced: { path: string; outputExisted: boolean }[] = [];
    const original = prototype.sync;
    const spy = jest.spyOn(prototype, 'sync').mockImplementation(function (this: { fd: number }) {
      synced.push({ path: readlinkSync(`/proc/self/fd/${this.fd}`), outputExisted: existsSync(out) });
      return original.call(this);
    });
    try {
      await writeStreamAtomically(Readable.from([Buffer.from('durable')]), out);
    } finally {
      spy.mockRestore();
    }
    expect(synced).toEqual([
      { path: expect.stringMatching(/\/\.model\.tar\.gz\..*\.tmp$/), outputExisted: false },
      { path: realpathSync(dir.path), outputExisted: true },
    ]);
  });

  it('skips hashing when the caller already hashes the stream', async () => {
    const data = Buffer.from('bytes hashed elsewhere');
    const result = await writeStreamAtomically(Readable.from([data]), out, { hash: false });
    expect(result).toEqual({ size: data.length });
    expect(readFileSync(out).equals(data)).toBe(true);
  });

  it('replaces an existing output only on success', async () => {
    writeFileSync(out, 'old');
    await writeStreamAtomically(Readable.from([Buffer.from('new')]), out);
    expect(readFileSync(out, 'utf8')).toBe('new');
  });

  it('keeps an existing output and removes the temp file when the source fails midway', async () => {
    writeFileSync(out, 'old');
    const source = new PassThrough();
    const writing = writeStreamAtomically(source, out);
    source.write(Buffer.alloc(100_000, 1));
    await tempFileAppears(dir.path);
    source.destroy(new Error('disk on fire'));
    await expect(writing).rejects.toThrow('disk on fire');
    expect(readFileSync(out, 'utf8')).toBe('old');
    expect(readdirSync(dir.path)).toEqual(['model.tar.gz']);
  });

  it('keeps an existing output and removes the temp file when aborted (Ctrl-C)', async () => {
    writeFileSync(out, 'old');
    const controller = new AbortController();
    const source = new PassThrough();
    const writing = writeStreamAtomically(source, out, { signal: controller.signal });
    source.write(Buffer.alloc(100_000, 1));
    await tempFileAppears(dir.path);
    controller.abort();
    await expect(writing).rejects.toMatchObject({ code: 'ABORTED' });
    expect(source.destroyed).toBe(true);
    expect(readFileSync(out, 'utf8')).toBe('old');
    expect(readdirSync(dir.path)).toEqual(['model.tar.gz']);
  });

  it('leaves nothing behind when the target directory does not exist', async () => {
    await expect(writeStreamAtomically(Readable.from([Buffer.from('x')]), join(dir.path, 'missing', 'x.tar.gz'))).rejects.toMatchObject({
      code: 'UNWRITABLE',
      message: expect.stringMatching(/cannot write .*ENOENT/),
    });
    expect(readdirSync(dir.path)).toEqual([]);
  });
});
