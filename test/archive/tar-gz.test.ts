import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { Readable } from 'node:stream';
import { collectEntries } from '../../lib/archive/collect';
import { createTarGzStream } from '../../lib/archive/tar-gz';
import { extractTarGz, readTarGz } from '../../lib/archive/tar-reader';
import { sampleRepository, tempDir, writeTree } from './archive-fixtures';
import { itWithTools } from '../tools';

async function streamToBuffer(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function pack(root: string, options?: { level?: number; workers?: number }): Promise<Buffer> {
  const { entries, problems } = await collectEntries(root);
  expect(problems).toEqual([]);
  return streamToBuffer(createTarGzStream(entries, options));
}

/** Every file and directory below `root`: relative path → mode bits and, for files, the SHA-256 of the bytes. */
function snapshot(root: string): Record<string, string> {
  const result: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stats = statSync(path);
      const rel = relative(root, path);
      if (stats.isDirectory()) {
        result[`${rel}/`] = (stats.mode & 0o777).toString(8);
        walk(path);
      } else {
        const hash = createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 16);
        result[rel] = `${(stats.mode & 0o777).toString(8)} ${hash}`;
      }
    }
  };
  walk(root);
  return result;
}

describe('createTarGzStream', () => {
  let dir: ReturnType<typeof tempDir>;
  let repo: string;
  /** The repository packed with the default options, once: the bytes depend only on the input (the first test). */
  let packed: Buffer;
  /** The packed archive, written to a file. */
  let file: string;
  beforeAll(async () => {
    dir = tempDir();
    repo = join(dir.path, 'repo');
    sampleRepository(repo);
    // Source modes vary between machines; the archive must not carry them.
    execFileSync('chmod', ['0600', join(repo, 'bert/config.pbtxt')]);
    execFileSync('chmod', ['0700', join(repo, 'bert/1')]);
    packed = await pack(repo);
    file = join(dir.path, 'packed.tar.gz');
    writeFileSync(file, packed);
  });
  afterAll(() => dir.cleanup());

  /** GNU tar's extraction of the packed archive (what SageMaker extracts with), made once for the tests that need it. */
  let gnuExtraction: string | undefined;
  const extractedByGnuTar = (): string => {
    if (gnuExtraction === undefined) {
      const out = join(dir.path, 'gnu-out');
      mkdirSync(out);
      execFileSync('tar', ['-xzf', file, '-C', out]);
      gnuExtraction = out;
    }
    return gnuExtraction;
  };

  it('produces byte-identical archives for the same input, with or without worker threads', async () => {
    const first = await pack(repo, { workers: 0 });
    const second = await pack(repo, { workers: 0 });
    const parallel = await pack(repo, { workers: 2 });
    expect(second.equals(first)).toBe(true);
    expect(parallel.equals(first)).toBe(true);
    // The archive the other tests share, packed with the default options.
    expect(packed.equals(first)).toBe(true);
  });

  it('writes a gzip stream with a fixed header (mtime 0, no file name) that gzip -t accepts', () => {
    expect([...packed.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
    expect(() => execFileSync('gzip', ['-t', file])).not.toThrow();
  });

  it('extracts with GNU tar to the same files, normalized modes and empty directories', () => {
    const extracted = snapshot(extractedByGnuTar());
    const source = snapshot(repo);
    expect(Object.keys(extracted).sort()).toEqual(Object.keys(source).sort());
    expect(extracted['ensemble/1/']).toBe('755');
    expect(extracted['bert/1/']).toBe('755');
    expect(extracted['bert/config.pbtxt']!.split(' ')[0]).toBe('644');
    expect(extracted['bert/1/run.sh']!.split(' ')[0]).toBe('755');
    for (const [path, value] of Object.entries(source)) {
      if (!path.endsWith('/')) expect(extracted[path]!.split(' ')[1]).toBe(value.split(' ')[1]);
    }
  });

  it('lists owner 0/0, no user names and mtime 0 for every member (GNU tar verbose listing)', () => {
    const listing = execFileSync('tar', ['--numeric-owner', '-tvzf', file], { encoding: 'utf8' }).trim().split('\n');
    expect(listing.length).toBeGreaterThan(5);
    for (const line of listing) expect(line).toMatch(/^\S+ 0\/0 +\d+ 1970-01-01 00:00 /);
  });

  itWithTools("extracts with Python's tarfile to the same files and modes", { python: [] }, (found) => {
    const out = join(dir.path, 'py-out');
    execFileSync(found.python!, [
      '-c',
      'import sys, tarfile\nwith tarfile.open(sys.argv[1]) as t:\n  t.extractall(sys.argv[2])',
      file,
      out,
    ]);
    const extracted = snapshot(out);
    expect(extracted).toEqual(snapshot(extractedByGnuTar()));
    expect(Object.keys(extracted)).toContain(`bert/1/${'tokenizer-'.repeat(12)}/vocab-with-a-long-name.txt`);
    expect(Object.keys(extracted)).toContain('bert/1/résumé.txt');
  });

  // libarchive is what bsdtar (and many other tools) extract with; CI installs it (libarchive-tools).
  itWithTools("extracts with libarchive's bsdtar to the same files and modes", { tools: ['bsdtar'] }, (found) => {
    const out = join(dir.path, 'bsd-out');
    mkdirSync(out);
    execFileSync(found.paths.bsdtar!, ['-xzf', file, '-C', out]);
    expect(snapshot(out)).toEqual(snapshot(extractedByGnuTar()));
  });

  it('round-trips through readTarGz: paths over 100 bytes, non-ASCII names, sizes, modes and content', async () => {
    const { entries } = await collectEntries(repo);
    const seen: { path: string; type: string; size: number; mode: number; sha?: string }[] = [];
    await readTarGz(Readable.from([packed]), async (entry, content) => {
      const bytes = await streamToBuffer(content);
      seen.push({
        path: entry.path,
        type: entry.type,
        size: bytes.length,
        mode: entry.mode,
        ...(entry.type === 'file' ? { sha: createHash('sha256').update(bytes).digest('hex') } : {}),
      });
    });
    expect(seen.map((e) => e.path)).toEqual(entries.map((e) => e.path));
    const longPath = seen.find((e) => e.path.includes('vocab-with-a-long-name'))!;
    expect(Buffer.byteLength(longPath.path)).toBeGreaterThan(100);
    for (const [i, entry] of entries.entries()) {
      expect(seen[i]!.type).toBe(entry.type);
      expect(seen[i]!.size).toBe(entry.size);
      expect(seen[i]!.mode).toBe(entry.type === 'directory' || entry.executable ? 0o755 : 0o644);
      if (entry.source) {
        expect(seen[i]!.sha).toBe(createHash('sha256').update(readFileSync(entry.source)).digest('hex'));
      }
    }
  });

  it('extracts with extractTarGz to the same files and empty directories', async () => {
    const out = join(dir.path, 'own-out');
    const paths = await extractTarGz(file, out);
    expect(paths).toEqual((await collectEntries(repo)).entries.map((e) => e.path));
    const extracted = snapshot(out);
    for (const [path, value] of Object.entries(snapshot(repo))) {
      expect(Object.keys(extracted)).toContain(path);
      if (!path.endsWith('/')) expect(extracted[path]!.split(' ')[1]).toBe(value.split(' ')[1]);
    }
  });

  it('stores incompressible spans and compresses text, so neither costs more than gzip would', async () => {
    const local = tempDir();
    try {
      writeTree(local.path, { 'm/1/weights.bin': randomBytes(3 * 1024 * 1024), 'm/1/vocab.txt': 'token\n'.repeat(500_000) });
      const archive = await pack(local.path, { workers: 0 });
      const tarSize = 3 * 1024 * 1024 + 3_000_000;
      // Random bytes cannot shrink; stored deflate blocks add 5 bytes per 64 KiB. The text compresses ~1000x.
      expect(archive.length).toBeLessThan(3 * 1024 * 1024 * 1.001 + 20_000);
      expect(archive.length).toBeLessThan(tarSize * 0.6);
      const stored = await pack(local.path, { level: 0, workers: 0 });
      expect(stored.length).toBeGreaterThan(tarSize);
    } finally {
      local.cleanup();
    }
  });

  describe('a file replaced between collection and reading (time of check, time of use)', () => {
    // The deterministic seam: the stream opens each file only when it is consumed, so a swap made between
    // collectEntries and the first read is one a real race could make.
    let local: ReturnType<typeof tempDir>;
    let root: string;
    beforeEach(() => {
      local = tempDir();
      root = join(local.path, 'repo');
      writeTree(root, { 'm/config.pbtxt': 'name: "m"\n', 'm/1/weights.bin': 'model weights\n' });
      writeTree(local.path, { 'outside/1/weights.bin': 'SECRET outside the repository\n' });
    });
    afterEach(() => local.cleanup());

    it('refuses a file swapped for a symbolic link to a file outside, packing none of its bytes', async () => {
      const { entries, problems } = await collectEntries(root);
      expect(problems).toEqual([]);
      const stream = createTarGzStream(entries, { workers: 0 });
      rmSync(join(root, 'm/1/weights.bin'));
      symlinkSync(join(local.path, 'outside/1/weights.bin'), join(root, 'm/1/weights.bin'));
      const packed = streamToBuffer(stream);
      await expect(packed).rejects.toMatchObject({
        code: 'UNREADABLE',
        message: expect.stringContaining('weights.bin was replaced by a symbolic link after the repository was listed'),
      });
    });

    it('refuses a file reached through a parent directory swapped for a link (same name, other inode)', async () => {
      const { entries } = await collectEntries(root);
      const stream = createTarGzStream(entries, { workers: 0 });
      renameSync(join(root, 'm/1'), join(local.path, 'moved'));
      symlinkSync(join(local.path, 'outside/1'), join(root, 'm/1'));
      await expect(streamToBuffer(stream)).rejects.toMatchObject({
        code: 'UNREADABLE',
        message: expect.stringContaining('was replaced by another file'),
      });
    });

    it('refuses a file deleted and recreated with the same size', async () => {
      const { entries } = await collectEntries(root);
      const stream = createTarGzStream(entries, { workers: 0 });
      const path = join(root, 'm/1/weights.bin');
      const copy = join(local.path, 'copy.bin');
      writeFileSync(copy, 'other  weights\n');
      renameSync(copy, path);
      await expect(streamToBuffer(stream)).rejects.toMatchObject({ code: 'UNREADABLE' });
    });
  });

  it('refuses a compression level outside 0-9', () => {
    expect(() => createTarGzStream([], { level: 10 })).toThrow(/level must be an integer from 0 to 9/);
    expect(() => createTarGzStream([], { level: 1.5 })).toThrow(expect.objectContaining({ code: 'USAGE' }));
  });

  it('writes a valid empty archive for no entries', async () => {
    const archive = await streamToBuffer(createTarGzStream([]));
    const file = join(dir.path, 'empty.tar.gz');
    writeFileSync(file, archive);
    expect(execFileSync('tar', ['-tzf', file], { encoding: 'utf8' })).toBe('');
  });

  it('fails the stream when a file changes size while it is packed', async () => {
    const local = tempDir();
    try {
      writeTree(local.path, { 'm/1/weights.bin': randomBytes(1000) });
      const { entries } = await collectEntries(local.path);
      writeFileSync(join(local.path, 'm/1/weights.bin'), randomBytes(10));
      await expect(streamToBuffer(createTarGzStream(entries))).rejects.toThrow(/changed size while it was being packed/);
    } finally {
      local.cleanup();
    }
  });
});

describe('createTarGzStream when abandoned', () => {
  it('closes the file it was reading when the stream is destroyed before the end', async () => {
    const local = tempDir();
    try {
      writeTree(local.path, { 'm/1/a.txt': 'abc\n'.repeat(2_000_000), 'm/1/b.bin': randomBytes(3_000_000) });
      const { entries } = await collectEntries(local.path);
      const stream = createTarGzStream(entries, { workers: 2 });
      await new Promise<void>((resolve) => stream.once('data', () => resolve()));
      stream.destroy();
      await new Promise((resolve) => stream.once('close', resolve));
      // No descriptor stays open on the repository's files (closing is asynchronous: allow it a moment).
      const openHere = () =>
        readdirSync('/proc/self/fd').map((fd) => safeReadlink(`/proc/self/fd/${fd}`)).filter((t) => t.startsWith(local.path));
      for (let i = 0; i < 100 && openHere().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(openHere()).toEqual([]);
    } finally {
      local.cleanup();
    }
  });
});

function safeReadlink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}
