import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { isMmeError } from '../../lib/errors';
import { extractTarGz, readTarGz } from '../../lib/archive/tar-reader';
import { TAR_BLOCK, paxRecord } from '../../lib/archive/tar-header';
import { listEntries, tempDir, writeTree } from './archive-fixtures';
import { loadScaled } from '../load-scale';
import {
  craftedCases,
  directoryMember,
  fileMember,
  gzipOf,
  member,
  paxMember,
  rawHeader,
  sampleModelTar,
  tarOf,
} from './crafted-archives';


/** Settles with the reader's outcome, or fails the test if the reader is still busy after `ms` (a hang). */
async function withinTime<T>(promise: Promise<T>, ms = loadScaled(5000)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still reading after ${ms} ms: the reader hangs`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('readTarGz', () => {
  let dir: ReturnType<typeof tempDir>;
  let src: string;
  const longDir = `${'d'.repeat(60)}/${'e'.repeat(60)}`;
  const longFile = `${longDir}/${'f'.repeat(90)}.txt`;
  beforeAll(() => {
    dir = tempDir();
    src = join(dir.path, 'src');
    writeTree(src, {
      'model/config.pbtxt': 'name: "model"\n',
      'model/1/': '',
      [`model/${longFile}`]: 'long\n',
    });
    symlinkSync('config.pbtxt', join(src, 'model/link'));
  });
  afterAll(() => dir.cleanup());

  it.each(['gnu', 'pax', 'ustar'])('reads GNU tar archives in %s format, with names over 100 bytes', async (format) => {
    const file = join(dir.path, `${format}.tar.gz`);
    execFileSync('tar', [`--format=${format}`, '-C', src, '-czf', file, 'model']);
    const entries = await listEntries(file);
    const byPath = new Map(entries.map((e) => [e.path, e]));
    expect(byPath.get('model/config.pbtxt')).toMatchObject({ type: 'file', size: 14, text: 'name: "model"\n' });
    expect(byPath.get('model/1')).toMatchObject({ type: 'directory', size: 0 });
    expect(byPath.get('model/link')).toMatchObject({ type: 'symlink', linkName: 'config.pbtxt' });
    // gnu: a ././@LongLink entry; pax: a PAX path record; ustar: the name split over the prefix field.
    expect(byPath.get(`model/${longFile}`)).toMatchObject({ type: 'file', text: 'long\n' });
  });

  it('reads an uncompressed tar as well, and normalizes "./" prefixes (tar -C dir -cf x .)', async () => {
    const file = join(dir.path, 'plain.tar');
    execFileSync('tar', ['-C', join(src, 'model'), '-cf', file, '.']);
    const paths = (await listEntries(file)).map((e) => e.path);
    expect(paths).toContain('.');
    expect(paths).toContain('config.pbtxt');
    expect(paths).toContain('1');
  });

  it('reads a tar split over several gzip members, checking each one', async () => {
    const tar = sampleModelTar();
    const twoMembers = Buffer.concat([gzipSync(tar.subarray(0, 1536)), gzipSync(tar.subarray(1536))]);
    expect((await listEntries(twoMembers)).map((e) => e.path)).toEqual((await listEntries(gzipOf(tar))).map((e) => e.path));
  });

  it('accepts zeros after the end-of-archive blocks (record padding), in the tar and after the gzip stream', async () => {
    const tar = sampleModelTar();
    expect(await listEntries(gzipOf(Buffer.concat([tar, Buffer.alloc(100_000)])))).toHaveLength(5);
    expect(await listEntries(Buffer.concat([gzipOf(tar), Buffer.alloc(512)]))).toHaveLength(5);
  });

  it('accepts a header checksum computed over signed bytes, as some old tars wrote it', async () => {
    const block = rawHeader({ name: 'm/é.txt', size: 1 });
    let signed = 0;
    for (let i = 0; i < TAR_BLOCK; i++) signed += i >= 148 && i < 156 ? 0x20 : (block[i]! << 24) >> 24;
    block.write(`${signed.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'latin1');
    const entries = await listEntries(gzipOf(tarOf(block, Buffer.concat([Buffer.from('x'), Buffer.alloc(511)]))));
    expect(entries.map((e) => e.path)).toEqual(['m/é.txt']);
  });

  it('applies a PAX size to the next entry only, not to a second extended header before it', async () => {
    const content = 'x'.repeat(600);
    const tar = tarOf(
      paxMember({ size: String(content.length) }),
      paxMember({ path: `m/${'long/'.repeat(30)}weights.bin` }),
      member({ name: 'short', size: 0 }, content),
      fileMember('m/after.txt', 'after'),
    );
    const entries = await listEntries(gzipOf(tar));
    expect(entries.map((e) => [e.path, e.text])).toEqual([
      [`m/${'long/'.repeat(30)}weights.bin`, content],
      ['m/after.txt', 'after'],
    ]);
  });

  it('skips the content a callback does not read', async () => {
    const tar = tarOf(fileMember('a.bin', 'x'.repeat(5000)), fileMember('b.txt', 'second'));
    const texts: string[] = [];
    await readTarGz(Readable.from(gzipSync(tar)), async (entry, content) => {
      if (entry.path === 'a.bin') {
        content.read(0); // start reading, then walk away
        return;
      }
      for await (const chunk of content) texts.push((chunk as Buffer).toString());
    });
    expect(texts.join('')).toBe('second');
  });

  it("rejects when the callback throws, with the callback's error", async () => {
    await expect(
      readTarGz(Readable.from(tarOf(fileMember('a.txt', 'hello'))), () => {
        throw new Error('stop here');
      }),
    ).rejects.toThrow('stop here');
  });

  it('reports a missing file as NOT_FOUND and a directory as UNREADABLE', async () => {
    await expect(readTarGz(join(dir.path, 'missing.tar.gz'), () => undefined)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(readTarGz(dir.path, () => undefined)).rejects.toMatchObject({ code: 'UNREADABLE' });
  });

  describe('refuses damaged and hostile archives quickly, with a coded error naming the byte', () => {
    it.each(craftedCases().map((c) => [c.name, c] as const))('%s', async (_name, crafted) => {
      const outcome = await withinTime(listEntries(crafted.bytes).then(() => undefined, (err: unknown) => err));
      expect(outcome).toBeInstanceOf(Error);
      expect(isMmeError(outcome, crafted.code)).toBe(true);
      expect((outcome as Error).message).toMatch(crafted.message);
      expect((outcome as Error).message).toMatch(/The file is damaged or is not a tar.gz: create it or copy it again\.$/);
    });

    it('rejects after delivering every entry when only the gzip trailer shows the damage', async () => {
      const tar = tarOf(fileMember('m/config.pbtxt', 'name: "m"\n'), fileMember('m/1/weights.bin', Buffer.alloc(4 << 20, 1)));
      const flipped = gzipSync(tar);
      flipped[flipped.length - 8] ^= 0x01; // the CRC-32 itself
      const seen: string[] = [];
      const chunks = Array.from({ length: Math.ceil(flipped.length / 1024) }, (_, i) => flipped.subarray(i * 1024, (i + 1) * 1024));
      await expect(readTarGz(Readable.from(chunks), (entry) => void seen.push(entry.path))).rejects.toMatchObject({
        code: 'TAR_BAD_ARCHIVE',
        message: expect.stringContaining('CRC-32 check failed'),
      });
      expect(seen).toEqual(['m/config.pbtxt', 'm/1/weights.bin']);
    });
  });

  describe('agrees with GNU tar on what is data and what is a header', () => {
    // Each archive hides a valid header ("hidden.txt") in the data of an entry. GNU tar skips the data of every type
    // flag but '5' (directory) and '1' (hard link, size 0 on the medium): src/list.c, read_header() and skip_member().
    const hidden = rawHeader({ name: 'hidden.txt' });
    const after = fileMember('after.txt', 'a');
    const cases: [string, Buffer, string[]][] = [
      [
        'a symbolic link with a size',
        tarOf(member({ name: 'link', typeflag: '2', linkName: 'x', size: 512 }, hidden), after),
        ['link', 'after.txt'],
      ],
      ['an unknown type flag (Z)', tarOf(member({ name: 'zz', typeflag: 'Z', size: 512 }, hidden), after), ['zz', 'after.txt']],
      ['an old GNU sparse file (S)', tarOf(member({ name: 'sparse', typeflag: 'S', size: 512 }, hidden), after), ['sparse', 'after.txt']],
      ['a FIFO with a size', tarOf(member({ name: 'p', typeflag: '6', size: 512 }, hidden), after), ['p', 'after.txt']],
      [
        'an old-style "name/" directory with a size',
        tarOf(member({ name: 'd/', typeflag: '0', size: 512 }, hidden), after),
        ['d', 'after.txt'],
      ],
      [
        'a directory (5) with a size',
        tarOf(member({ name: 'd/', typeflag: '5', size: 512 }, hidden), after),
        ['d', 'hidden.txt', 'after.txt'],
      ],
      [
        'a hard link with a size',
        tarOf(fileMember('t', 'x'), member({ name: 'h', typeflag: '1', linkName: 't', size: 512 }, hidden), after),
        ['t', 'h', 'hidden.txt', 'after.txt'],
      ],
    ];
    it.each(cases)('%s', async (_name, tar, expected) => {
      expect((await listEntries(gzipOf(tar))).map((e) => e.path)).toEqual(expected);
      const file = join(dir.path, 'gnu-agreement.tar');
      writeFileSync(file, tar);
      const gnu = execFileSync('tar', ['-tf', file], { encoding: 'utf8' }).trim().split('\n');
      expect(gnu.map((p) => p.replace(/\/$/, ''))).toEqual(expected);
    });
  });

  it('reports a file with PAX GNU.sparse records as a sparse "other" entry, never as the file it maps', async () => {
    const tar = tarOf(
      paxMember({ 'GNU.sparse.major': '1', 'GNU.sparse.minor': '0', 'GNU.sparse.realsize': '4096' }),
      fileMember('m/weights.bin', 'map'),
    );
    const [entry] = await listEntries(gzipOf(tar));
    expect(entry).toMatchObject({ path: 'm/weights.bin', type: 'other', size: 0, sparse: true });
  });

  // Found by the differential fuzz (test/hostile/tar-differential.fuzz.test.ts), each checked against GNU tar's listing.
  it('names a sparse file by its GNU.sparse.name, as GNU tar lists and extracts it', async () => {
    const tar = tarOf(paxMember({ 'GNU.sparse.name': 'm/real.bin' }), fileMember('m/decoy.bin', 'map'));
    const [entry] = await listEntries(gzipOf(tar));
    expect(entry).toMatchObject({ path: 'm/real.bin', type: 'other', sparse: true });
    const file = join(dir.path, 'sparse-name.tar');
    writeFileSync(file, tar);
    expect(execFileSync('tar', ['-tf', file], { encoding: 'utf8' }).trim()).toBe('m/real.bin');
  });

  it('makes only regular files sparse: a directory after global GNU.sparse records stays a directory', async () => {
    const records = paxRecord('GNU.sparse.major', '1');
    const global = member({ name: 'GlobalHead', typeflag: 'g', size: records.length }, records);
    const entries = await listEntries(gzipOf(tarOf(global, directoryMember('m'), fileMember('m/w.bin', 'map'))));
    expect(entries.map((e) => [e.path, e.type])).toEqual([['m', 'directory'], ['m/w.bin', 'other']]);
  });

  it('keeps PAX records it does not act on, and lets an empty value restore the header field', async () => {
    const records = paxRecord('mtime', '1700000000.5') + paxRecord('SCHILY.xattr.user.x', 'y') + paxRecord('path', '');
    const entries = await listEntries(gzipOf(tarOf(paxMember(records), fileMember('m/a.txt', 'a'))));
    expect(entries.map((e) => e.path)).toEqual(['m/a.txt']);
  });
});

describe('extractTarGz', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.cleanup());

  function archiveOf(...members: Buffer[]): string {
    const archive = join(dir.path, `a-${readdirSync(dir.path).length}.tar.gz`);
    writeFileSync(archive, gzipOf(tarOf(...members)));
    return archive;
  }

  it('extracts files and empty directories and returns their paths', async () => {
    const archive = archiveOf(directoryMember('m'), directoryMember('m/1'), fileMember('m/config.pbtxt', 'x'));
    const out = join(dir.path, 'out');
    expect(await extractTarGz(archive, out)).toEqual(['m', 'm/1', 'm/config.pbtxt']);
    expect(readFileSync(join(out, 'm/config.pbtxt'), 'utf8')).toBe('x');
    expect(existsSync(join(out, 'm/1'))).toBe(true);
  });

  it.each([
    ['a "../" path', '../escaped.txt', /"..\/escaped.txt" has a ".." segment/],
    ['a ".." in the middle', 'm/../../escaped.txt', /has a ".." segment/],
    ['an absolute path', '/tmp/escaped.txt', /is an absolute path/],
    ['a backslash', '..\\escaped.txt', /contains a backslash/],
    ['a drive letter', 'C:/escaped.txt', /drive letter/],
    ['bytes that are not UTF-8', 'm/bad\uFFFD.txt', /not valid UTF-8/],
  ])('refuses %s and writes nothing outside the destination', async (_case, path, message) => {
    const archive = archiveOf(member({ name: path, size: 5 }, 'pwned'));
    const out = join(dir.path, 'a', 'b', 'out');
    await expect(extractTarGz(archive, out)).rejects.toMatchObject({ code: 'TAR_UNSAFE_ENTRY', message: expect.stringMatching(message) });
    expect(existsSync(join(dir.path, 'a', 'b', 'escaped.txt'))).toBe(false);
    expect(existsSync(join(dir.path, 'a', 'escaped.txt'))).toBe(false);
  });

  it('refuses symbolic links, naming the link and its target', async () => {
    const src = join(dir.path, 'src');
    writeTree(src, { 'm/config.pbtxt': 'x' });
    symlinkSync('/etc/passwd', join(src, 'm/passwd'));
    const archive = join(dir.path, 'link.tar.gz');
    execFileSync('tar', ['-C', src, '-czf', archive, 'm']);
    await expect(extractTarGz(archive, join(dir.path, 'out'))).rejects.toThrow(
      /entry "m\/passwd" is a symbolic link \(to "\/etc\/passwd"\)/,
    );
  });

  it('refuses hard links, FIFOs and GNU sparse files', async () => {
    const src = join(dir.path, 'src');
    writeTree(src, { 'm/a.txt': 'x' });
    execFileSync('ln', [join(src, 'm/a.txt'), join(src, 'm/b.txt')]);
    const hard = join(dir.path, 'hard.tar.gz');
    execFileSync('tar', ['-C', src, '-czf', hard, 'm']);
    await expect(extractTarGz(hard, join(dir.path, 'out1'))).rejects.toThrow(/is a hard link/);

    const fifoSrc = join(dir.path, 'fifo-src');
    writeTree(fifoSrc, { 'm/': '' });
    execFileSync('mkfifo', [join(fifoSrc, 'm/pipe')]);
    const fifo = join(dir.path, 'fifo.tar.gz');
    execFileSync('tar', ['-C', fifoSrc, '-czf', fifo, 'm']);
    await expect(extractTarGz(fifo, join(dir.path, 'out2'))).rejects.toThrow(/"m\/pipe" is a FIFO/);

    const sparse = archiveOf(paxMember({ 'GNU.sparse.major': '1' }), fileMember('m/w.bin', 'map'));
    await expect(extractTarGz(sparse, join(dir.path, 'out3'))).rejects.toThrow(/is a GNU sparse file/);
  });

  describe('into an existing directory', () => {
    let outside: string;
    let out: string;
    beforeEach(() => {
      outside = join(dir.path, 'outside');
      out = join(dir.path, 'out');
      writeTree(outside, { 'config.pbtxt': 'outside, must stay' });
      mkdirSync(out);
    });

    it('refuses to extract through a directory symbolic link already there, writing nothing outside', async () => {
      symlinkSync(outside, join(out, 'm'));
      const archive = archiveOf(directoryMember('m'), fileMember('m/config.pbtxt', 'pwned'), fileMember('m/new.txt', 'pwned'));
      await expect(extractTarGz(archive, out)).rejects.toMatchObject({
        code: 'TAR_UNSAFE_ENTRY',
        message: expect.stringContaining('"m" is a symbolic link already in'),
      });
      expect(readFileSync(join(outside, 'config.pbtxt'), 'utf8')).toBe('outside, must stay');
      expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    });

    it('refuses a symbolic link deeper down as well, even without a directory entry for it', async () => {
      mkdirSync(join(out, 'm'));
      symlinkSync(outside, join(out, 'm/1'));
      const archive = archiveOf(fileMember('m/1/config.pbtxt', 'pwned'));
      await expect(extractTarGz(archive, out)).rejects.toMatchObject({ code: 'TAR_UNSAFE_ENTRY' });
      expect(readFileSync(join(outside, 'config.pbtxt'), 'utf8')).toBe('outside, must stay');
    });

    it('replaces a file symbolic link or a hard link of the same name instead of writing through it', async () => {
      mkdirSync(join(out, 'm'));
      symlinkSync(join(outside, 'config.pbtxt'), join(out, 'm/config.pbtxt'));
      writeFileSync(join(outside, 'shared.bin'), 'outside, must stay');
      linkSync(join(outside, 'shared.bin'), join(out, 'm/shared.bin'));
      const archive = archiveOf(fileMember('m/config.pbtxt', 'new config'), fileMember('m/shared.bin', 'new weights'));
      await extractTarGz(archive, out);
      expect(lstatSync(join(out, 'm/config.pbtxt')).isSymbolicLink()).toBe(false);
      expect(readFileSync(join(out, 'm/config.pbtxt'), 'utf8')).toBe('new config');
      expect(readFileSync(join(out, 'm/shared.bin'), 'utf8')).toBe('new weights');
      expect(readFileSync(join(outside, 'config.pbtxt'), 'utf8')).toBe('outside, must stay');
      expect(readFileSync(join(outside, 'shared.bin'), 'utf8')).toBe('outside, must stay');
    });
  });

  describe("with links: 'inside'", () => {
    it('creates links that stay inside, the symbolic ones after every file, and their parents as needed', async () => {
      const archive = archiveOf(
        fileMember('env/lib/libz.so.1', 'zlib'),
        member({ name: 'env/lib/libz.so', typeflag: '2', linkName: 'libz.so.1' }),
        member({ name: 'env/bin/python', typeflag: '1', linkName: 'env/lib/libz.so.1' }),
        member({ name: 'env/share/current', typeflag: '2', linkName: '../lib' }),
      );
      const out = join(dir.path, 'out');
      await extractTarGz(archive, out, { links: 'inside' });
      expect(readFileSync(join(out, 'env/lib/libz.so'), 'utf8')).toBe('zlib');
      expect(readFileSync(join(out, 'env/bin/python'), 'utf8')).toBe('zlib');
      expect(readFileSync(join(out, 'env/share/current/libz.so.1'), 'utf8')).toBe('zlib');
    });

    it('still refuses links that lead out, and a symbolic link already in the destination', async () => {
      const out = join(dir.path, 'out');
      const leaving = archiveOf(fileMember('m/a', 'x'), member({ name: 'm/up', typeflag: '2', linkName: '../../..' }));
      await expect(extractTarGz(leaving, out, { links: 'inside' })).rejects.toMatchObject({ code: 'TAR_UNSAFE_ENTRY' });
      const outside = join(dir.path, 'outside');
      mkdirSync(outside);
      const existing = join(dir.path, 'existing');
      mkdirSync(existing);
      symlinkSync(outside, join(existing, 'env'));
      const through = archiveOf(fileMember('env/a', 'x'), member({ name: 'env/b', typeflag: '1', linkName: 'env/a' }));
      await expect(extractTarGz(through, existing, { links: 'inside' })).rejects.toMatchObject({
        code: 'TAR_UNSAFE_ENTRY',
        message: expect.stringContaining('"env" is a symbolic link already in'),
      });
      expect(readdirSync(outside)).toEqual([]);
    });
  });

  it('refuses entries that clash (a file where a directory must go, and the other way round) with a coded error', async () => {
    const fileThenChild = archiveOf(fileMember('m', 'x'), fileMember('m/config.pbtxt', 'y'));
    await expect(extractTarGz(fileThenChild, join(dir.path, 'o1'))).rejects.toMatchObject({ code: 'TAR_UNSAFE_ENTRY' });
    const dirThenFile = archiveOf(directoryMember('m'), fileMember('m', 'x'));
    await expect(extractTarGz(dirThenFile, join(dir.path, 'o2'))).rejects.toMatchObject({ code: 'TAR_UNSAFE_ENTRY' });
    const emptyName = archiveOf(member({ name: '', size: 1 }, 'x'));
    await expect(extractTarGz(emptyName, join(dir.path, 'o3'))).rejects.toMatchObject({
      code: 'TAR_UNSAFE_ENTRY',
      message: expect.stringContaining('empty name'),
    });
  });

  it('rejects a corrupt archive with the reader\'s code, after extracting what came before', async () => {
    const stored = gzipSync(sampleModelTar(), { level: 0 });
    const flipped = Buffer.from(stored);
    flipped[stored.length - 8] ^= 0x01;
    const archive = join(dir.path, 'corrupt.tar.gz');
    writeFileSync(archive, flipped);
    await expect(extractTarGz(archive, join(dir.path, 'out'))).rejects.toMatchObject({ code: 'TAR_BAD_ARCHIVE' });
  });
});
