import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { writeStreamAtomically } from '../../lib/archive/write-file';
import { tempDir } from './archive-fixtures';

// The modules themselves (an `import * as` is a copy under esModuleInterop), so that a spy on them is what the code
// under test calls.
const fsPromises = require('node:fs/promises') as typeof import('node:fs/promises');
const os = require('node:os') as typeof import('node:os');

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
    expect(result).toEqual({ size: data.length, sha256: createHash('sha256').update(data).digest('hex'), removedStale: [] });
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
    expect(result).toEqual({ size: data.length, removedStale: [] });
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
    await expect(writing).rejects.toMatchObject({
      code: 'ABORTED',
      message: `interrupted: ${out} was not written.`,
      cause: expect.objectContaining({ name: 'AbortError' }),
    });
    expect(source.destroyed).toBe(true);
    expect(readFileSync(out, 'utf8')).toBe('old');
    expect(readdirSync(dir.path)).toEqual(['model.tar.gz']);
  });

  it('leaves nothing behind when the target directory does not exist', async () => {
    await expect(writeStreamAtomically(Readable.from([Buffer.from('x')]), join(dir.path, 'missing', 'x.tar.gz'))).rejects.toMatchObject({
      code: 'UNWRITABLE',
      message: expect.stringMatching(/cannot write .*: no such file or directory\.$/),
      cause: expect.objectContaining({ code: 'ENOENT' }),
    });
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it('removes the temp files of earlier writes whose process is gone, and only those', async () => {
    const host = hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 63);
    const names = {
      dead: `.model.tar.gz.${host}.111.0123abcd.tmp`,
      deadBeforeHostNames: '.model.tar.gz.112.4567cdef.tmp',
      alive: `.model.tar.gz.${host}.222.89abcdef.tmp`,
      otherHost: '.model.tar.gz.elsewhere.111.0a0b0c0d.tmp',
      otherArchive: `.other.tar.gz.${host}.111.0123abcd.tmp`,
    };
    for (const name of Object.values(names)) writeFileSync(join(dir.path, name), 'partial');
    const result = await writeStreamAtomically(Readable.from([Buffer.from('x')]), out, { isRunning: (pid) => pid === 222 });
    expect(result.removedStale.sort()).toEqual([names.dead, names.deadBeforeHostNames].sort());
    expect(readdirSync(dir.path).sort()).toEqual([names.alive, names.otherHost, names.otherArchive, 'model.tar.gz'].sort());
  });

  it('refuses to replace an existing file with noClobber, leaving both files as they were', async () => {
    writeFileSync(out, 'old');
    await expect(writeStreamAtomically(Readable.from([Buffer.from('new')]), out, { noClobber: true })).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
      message: `${out} appeared while it was being written; it was not replaced.`,
    });
    expect(readFileSync(out, 'utf8')).toBe('old');
    expect(readdirSync(dir.path)).toEqual(['model.tar.gz']);
    await writeStreamAtomically(Readable.from([Buffer.from('new')]), join(dir.path, 'fresh.tar.gz'), { noClobber: true });
    expect(readFileSync(join(dir.path, 'fresh.tar.gz'), 'utf8')).toBe('new');
  });

  afterEach(() => jest.restoreAllMocks());

  it('keeps a temp file of another write of this same process, whatever isRunning says', async () => {
    const host = hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 63);
    const ours = `.model.tar.gz.${host}.${process.pid}.0123abcd.tmp`;
    writeFileSync(join(dir.path, ours), 'partial');
    const result = await writeStreamAtomically(Readable.from([Buffer.from('x')]), out, { isRunning: () => false });
    expect(result.removedStale).toEqual([]);
    expect(readdirSync(dir.path).sort()).toEqual([ours, 'model.tar.gz'].sort());
  });

  it('asks the kernel whether a writer runs when not told: a gone process\'s temp file goes, a live one\'s stays', async () => {
    const host = hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 63);
    // Linux pids never exceed 2^22 (pid_max's ceiling), so this one is gone; the parent of this process is alive.
    const gone = `.model.tar.gz.${host}.4194305.0123abcd.tmp`;
    const live = `.model.tar.gz.${host}.${process.ppid}.0123abcd.tmp`;
    for (const name of [gone, live]) writeFileSync(join(dir.path, name), 'partial');
    const result = await writeStreamAtomically(Readable.from([Buffer.from('x')]), out);
    expect(result.removedStale).toEqual([gone]);
    expect(readdirSync(dir.path).sort()).toEqual([live, 'model.tar.gz'].sort());
  });

  it('keeps the temp file of a process that runs as another user (the kernel answers EPERM to signal 0)', async () => {
    const host = hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 63);
    const others = `.model.tar.gz.${host}.4194305.0123abcd.tmp`;
    writeFileSync(join(dir.path, others), 'partial');
    const kill = process.kill.bind(process);
    jest.spyOn(process, 'kill').mockImplementation((pid, signal) => {
      if (pid === 4194305) throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
      return kill(pid, signal);
    });
    const result = await writeStreamAtomically(Readable.from([Buffer.from('x')]), out);
    expect(result.removedStale).toEqual([]);
    expect(readdirSync(dir.path).sort()).toEqual([others, 'model.tar.gz'].sort());
  });

  it('still writes when the directory cannot be listed for stale temp files (write and search permission only)', async () => {
    jest.spyOn(fsPromises, 'readdir').mockRejectedValueOnce(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }));
    const result = await writeStreamAtomically(Readable.from([Buffer.from('x')]), out);
    expect(result.removedStale).toEqual([]);
    expect(readFileSync(out, 'utf8')).toBe('x');
  });

  it('tells onTempFile the temp file once, then that it is gone once, on success and on failure', async () => {
    const told: (string | undefined)[] = [];
    await writeStreamAtomically(Readable.from([Buffer.from('x')]), out, { onTempFile: (path) => told.push(path) });
    expect(told).toStrictEqual([expect.stringMatching(/\/\.model\.tar\.gz\..*\.tmp$/), undefined]);
    told.length = 0;
    const source = new Readable({
      read() {
        this.destroy(new Error('source broke'));
      },
    });
    await expect(writeStreamAtomically(source, out, { onTempFile: (path) => told.push(path) })).rejects.toThrow('source broke');
    expect(told).toStrictEqual([expect.stringMatching(/\.tmp$/), undefined]);
  });

  it('refuses with UNWRITABLE when the temp file cannot be flushed, leaving the old output and no temp file', async () => {
    writeFileSync(out, 'old');
    const probe = await open(__filename, 'r');
    const prototype = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    const eio = Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    jest.spyOn(prototype, 'sync').mockRejectedValueOnce(eio);
    await expect(writeStreamAtomically(Readable.from([Buffer.from('new')]), out)).rejects.toMatchObject({
      code: 'UNWRITABLE',
      message: `cannot write ${out}: input/output error.`,
    });
    expect(readFileSync(out, 'utf8')).toBe('old');
    expect(readdirSync(dir.path)).toEqual(['model.tar.gz']);
  });

  it('refuses with UNWRITABLE when the directory cannot be flushed after the rename, the new file in place', async () => {
    const probe = await open(__filename, 'r');
    const prototype = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    const original = prototype.sync;
    let calls = 0;
    jest.spyOn(prototype, 'sync').mockImplementation(function (this: unknown) {
      calls++;
      if (calls === 2) return Promise.reject(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
      return original.call(this);
    });
    const told: (string | undefined)[] = [];
    await expect(
      writeStreamAtomically(Readable.from([Buffer.from('new')]), out, { onTempFile: (path) => told.push(path) }),
    ).rejects.toMatchObject({ code: 'UNWRITABLE' });
    // The rename happened: the new bytes are the output (not yet durable), and no temp file is left or reported.
    expect(readFileSync(out, 'utf8')).toBe('new');
    expect(readdirSync(dir.path)).toEqual(['model.tar.gz']);
    expect(told).toStrictEqual([expect.stringMatching(/\.tmp$/), undefined]);
  });

  it('never writes into a file that has the temp file\'s name already (another writer\'s), refusing instead', async () => {
    const crypto = require('node:crypto') as typeof import('node:crypto');
    jest.spyOn(crypto, 'randomBytes').mockImplementation(() => Buffer.from('0123abcd', 'hex'));
    const host = hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 63);
    const taken = join(dir.path, `.model.tar.gz.${host}.${process.pid}.0123abcd.tmp`);
    writeFileSync(taken, 'another writer');
    const told: (string | undefined)[] = [];
    await expect(
      writeStreamAtomically(Readable.from([Buffer.from('x')]), out, { onTempFile: (path) => told.push(path) }),
    ).rejects.toMatchObject({ code: 'UNWRITABLE' });
    expect(readFileSync(taken, 'utf8')).toBe('another writer');
    expect(told).toStrictEqual([taken, undefined]);
    expect(existsSync(out)).toBe(false);
  });

  it('closes every file it opens to flush', async () => {
    const openFds = () => readdirSync('/proc/self/fd').map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    });
    await writeStreamAtomically(Readable.from([Buffer.from('x')]), out);
    expect(openFds().filter((target) => target.startsWith(realpathSync(dir.path)))).toEqual([]);
  });

  it('with noClobber, falls back to a rename where the file system has no hard links, and reports other link errors', async () => {
    jest.spyOn(fsPromises, 'link').mockRejectedValueOnce(Object.assign(new Error('EPERM: operation not permitted'), { code: 'EPERM' }));
    await writeStreamAtomically(Readable.from([Buffer.from('on FAT')]), out, { noClobber: true });
    expect(readFileSync(out, 'utf8')).toBe('on FAT');
    expect(readdirSync(dir.path)).toEqual(['model.tar.gz']);
    for (const code of ['ENOTSUP', 'EOPNOTSUPP', 'EXDEV']) {
      const target = join(dir.path, `${code}.tar.gz`);
      jest.spyOn(fsPromises, 'link').mockRejectedValueOnce(Object.assign(new Error(`${code}: no links`), { code }));
      await writeStreamAtomically(Readable.from([Buffer.from(code)]), target, { noClobber: true });
      expect(readFileSync(target, 'utf8')).toBe(code);
    }
    const other = join(dir.path, 'other.tar.gz');
    jest.spyOn(fsPromises, 'link').mockRejectedValueOnce(Object.assign(new Error('EIO: i/o error, link'), { code: 'EIO' }));
    await expect(writeStreamAtomically(Readable.from([Buffer.from('x')]), other, { noClobber: true })).rejects.toMatchObject({
      code: 'UNWRITABLE',
      message: `cannot write ${other}: input/output error.`,
    });
    expect(readdirSync(dir.path).sort()).toEqual(['EOPNOTSUPP.tar.gz', 'ENOTSUP.tar.gz', 'EXDEV.tar.gz', 'model.tar.gz'].sort());
  });
});

describe('temp file names', () => {
  afterEach(() => jest.restoreAllMocks());

  /** The temp file name a write makes on a machine with this host name (the module reads it once, when loaded). */
  async function tempNameOn(host: string): Promise<string> {
    jest.spyOn(os, 'hostname').mockReturnValue(host);
    let write!: typeof writeStreamAtomically;
    jest.isolateModules(() => {
      ({ writeStreamAtomically: write } = require('../../lib/archive/write-file') as typeof import('../../lib/archive/write-file'));
    });
    const dir = tempDir();
    try {
      let temp = '';
      await write(Readable.from([Buffer.from('x')]), join(dir.path, 'm.tar.gz'), { onTempFile: (path) => (temp ||= path ?? '') });
      return temp.slice(dir.path.length + 1);
    } finally {
      dir.cleanup();
    }
  }

  it('carry the host name with unsafe characters replaced, at most 63 of them, or "host" when it has none', async () => {
    const pid = process.pid;
    expect(await tempNameOn('build.example.com')).toMatch(new RegExp(`^\\.m\\.tar\\.gz\\.build-example-com\\.${pid}\\.[0-9a-f]{8}\\.tmp$`));
    expect(await tempNameOn('a'.repeat(100))).toMatch(new RegExp(`^\\.m\\.tar\\.gz\\.${'a'.repeat(63)}\\.${process.pid}\\.`));
    expect(await tempNameOn('')).toMatch(new RegExp(`^\\.m\\.tar\\.gz\\.host\\.${process.pid}\\.`));
  });
});
