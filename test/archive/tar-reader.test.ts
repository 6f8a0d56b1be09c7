import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { extractTarGz, readTarGz, TarEntry } from '../../lib/archive/tar-reader';
import { TAR_BLOCK, encodeHeaders, endOfArchive, paddingAfter } from '../../lib/archive/tar-header';
import { tempDir, writeTree } from './archive-fixtures';

/** A tar built member by member, for archives our packer would never write (e.g. `../` paths). */
function handMadeTar(members: { path: string; content?: string }[]): Buffer {
  const parts: Buffer[] = [];
  for (const member of members) {
    const content = Buffer.from(member.content ?? '');
    const type = member.content === undefined ? 'directory' : 'file';
    parts.push(encodeHeaders({ path: member.path, type, size: content.length, mode: 0o644 }));
    if (type === 'file') parts.push(content, Buffer.alloc(paddingAfter(content.length)));
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, endOfArchive(body.length)]);
}

async function listEntries(source: string | Readable): Promise<(TarEntry & { text?: string })[]> {
  const seen: (TarEntry & { text?: string })[] = [];
  await readTarGz(source, async (entry, content) => {
    if (entry.type !== 'file') {
      seen.push(entry);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(chunk as Buffer);
    seen.push({ ...entry, text: Buffer.concat(chunks).toString() });
  });
  return seen;
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

  it('skips the content a callback does not read', async () => {
    const tar = handMadeTar([
      { path: 'a.bin', content: 'x'.repeat(5000) },
      { path: 'b.txt', content: 'second' },
    ]);
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

  it('rejects a corrupt header and a truncated archive with a clear message', async () => {
    const tar = handMadeTar([{ path: 'a.txt', content: 'hello' }]);
    const corrupt = Buffer.from(tar);
    corrupt[10] = corrupt[10]! ^ 0xff;
    await expect(listEntries(Readable.from(corrupt))).rejects.toThrow(/checksum mismatch at byte 0/);
    const truncated = tar.subarray(0, TAR_BLOCK + 2);
    await expect(listEntries(Readable.from(truncated))).rejects.toThrow(/Truncated archive/);
    const badGzip = gzipSync(tar).subarray(0, 40);
    await expect(listEntries(Readable.from(badGzip))).rejects.toThrow(/gzip|unexpected end/i);
  });

  it('rejects when the callback throws, with the callback\'s error', async () => {
    const tar = handMadeTar([{ path: 'a.txt', content: 'hello' }]);
    await expect(
      readTarGz(Readable.from(tar), () => {
        throw new Error('stop here');
      }),
    ).rejects.toThrow('stop here');
  });
});

describe('extractTarGz', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.cleanup());

  it('extracts files and empty directories and returns their paths', async () => {
    const archive = join(dir.path, 'ok.tar.gz');
    writeFileSync(archive, gzipSync(handMadeTar([{ path: 'm' }, { path: 'm/1' }, { path: 'm/config.pbtxt', content: 'x' }])));
    const out = join(dir.path, 'out');
    expect(await extractTarGz(archive, out)).toEqual(['m', 'm/1', 'm/config.pbtxt']);
    expect(readFileSync(join(out, 'm/config.pbtxt'), 'utf8')).toBe('x');
    expect(existsSync(join(out, 'm/1'))).toBe(true);
  });

  it.each([
    ['a "../" path', '../escaped.txt', /"..\/escaped.txt" has a ".." segment/],
    ['a ".." in the middle', 'm/../../escaped.txt', /has a ".." segment/],
    ['an absolute path', '/tmp/escaped.txt', /is an absolute path/],
  ])('refuses %s and writes nothing outside the destination', async (_case, path, message) => {
    const archive = join(dir.path, 'evil.tar.gz');
    writeFileSync(archive, gzipSync(handMadeTar([{ path, content: 'pwned' }])));
    const out = join(dir.path, 'a', 'b', 'out');
    await expect(extractTarGz(archive, out)).rejects.toThrow(message);
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

  it('refuses hard links and FIFOs', async () => {
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
  });
});
