// The archive reader's details, one behaviour per test, written from the survivors of a mutation run
// (docs/testing.md, "Mutation testing"): exact messages and offsets, the fields of each entry, the verdict on links,
// how the input's errors are named. test/archive/tar-reader.test.ts holds the broader cases.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { ExtractionVerdict, extractTarGz, readTarGz, TarEntry, unsafeEntryReason } from '../../lib/archive/tar-reader';
import { TAR_BLOCK, paxRecord } from '../../lib/archive/tar-header';
import { listEntries, tempDir } from './archive-fixtures';
import { directoryMember, fileMember, gzipOf, member, paxMember, rawHeader, tarOf, withChecksum } from './crafted-archives';

const REMEDY = '. The file is damaged or is not a tar.gz: create it or copy it again.';


/** The reader's rejection of `source` (the test fails if it resolves). */
async function failure(source: Buffer | Buffer[]): Promise<Error & { code?: string }> {
  return listEntries(source).then(
    () => {
      throw new Error('the reader accepted the archive');
    },
    (err: Error & { code?: string }) => err,
  );
}

/** `bytes` cut into pieces of `size` bytes, as a stream delivers them. */
function chunked(bytes: Buffer, size: number): Buffer[] {
  return Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
}

/** A 'g' (global) PAX header. */
function globalMember(records: Record<string, string>): Buffer {
  const data = Object.entries(records).map(([k, v]) => paxRecord(k, v)).join('');
  return member({ name: 'GlobalHead', typeflag: 'g', size: Buffer.byteLength(data) }, data);
}

/** A GNU long-name ('L') or long-link ('K') entry carrying `data`. */
function gnuLong(typeflag: 'L' | 'K', data: string): Buffer {
  return member({ name: '././@LongLink', typeflag, size: Buffer.byteLength(data) }, data);
}

/** GNU tar's listing of `tar` (`tar -tf`), one name a line. */
function gnuListing(dir: string, tar: Buffer): string[] {
  const file = join(dir, 'gnu-listing.tar');
  writeFileSync(file, tar);
  return execFileSync('tar', ['-tf', file], { encoding: 'utf8' }).trim().split('\n');
}

describe('readTarGz: the entries', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeAll(() => {
    dir = tempDir();
  });
  afterAll(() => dir.cleanup());

  it('gives each entry exactly its path, type, size, mode and type flag, and a link name only to links', async () => {
    const tar = tarOf(
      member({ name: 'm/run.sh', mode: 0o755, size: 3 }, 'sh\n'),
      member({ name: 'm/d/', typeflag: '5', mode: 0o700 }),
      member({ name: 'm/l', typeflag: '2', linkName: 'run.sh', size: 512 }, Buffer.alloc(512, 0x41)),
      member({ name: 'm/h', typeflag: '1', linkName: 'm/run.sh' }),
      member({ name: 'm/p', typeflag: '6', linkName: 'ignored' }),
      member({ name: 'm/after', size: 1 }, 'a'),
    );
    expect(await listEntries(gzipOf(tar))).toEqual([
      { path: 'm/run.sh', type: 'file', size: 3, mode: 0o755, typeflag: '0', text: 'sh\n' },
      { path: 'm/d', type: 'directory', size: 0, mode: 0o700, typeflag: '5' },
      // A symbolic link's data is skipped, as GNU tar skips it, and not reported as its size.
      { path: 'm/l', type: 'symlink', size: 0, mode: 0o644, typeflag: '2', linkName: 'run.sh' },
      { path: 'm/h', type: 'other', size: 0, mode: 0o644, typeflag: '1', linkName: 'm/run.sh' },
      { path: 'm/p', type: 'other', size: 0, mode: 0o644, typeflag: '6' },
      { path: 'm/after', type: 'file', size: 1, mode: 0o644, typeflag: '0', text: 'a' },
    ]);
  });

  it('reads type flags NUL and 7 (contiguous) as regular files, and a trailing slash as a directory, as GNU tar does', async () => {
    // GNU tar: CONTTYPE is "treated as a regular file", and for AREGTYPE, REGTYPE and CONTTYPE a trailing slash
    // makes a directory (praiskup/tar:src/tar.h:63, praiskup/tar:src/extract.c:1840-1846).
    const tar = tarOf(
      member({ name: 'm/nul', typeflag: '\u0000', size: 2 }, 'n\n'),
      member({ name: 'm/contiguous', typeflag: '7', size: 2 }, 'c\n'),
      member({ name: 'm/old-dir/', typeflag: '7' }),
      member({ name: 'm/zz', typeflag: 'Z' }),
    );
    expect((await listEntries(gzipOf(tar))).map((e) => [e.path, e.type, e.text])).toEqual([
      ['m/nul', 'file', 'n\n'],
      ['m/contiguous', 'file', 'c\n'],
      ['m/old-dir', 'directory', undefined],
      ['m/zz', 'other', undefined],
    ]);
    expect(gnuListing(dir.path, tar)).toEqual(['m/nul', 'm/contiguous', 'm/old-dir/', 'm/zz']);
  });

  it('normalizes "./" prefixes and trailing slashes, keeps "/" as it is, and calls an empty name "."', async () => {
    const tar = tarOf(
      member({ name: '././m/a', size: 1 }, 'a'),
      member({ name: 'm/d//', typeflag: '5' }),
      member({ name: './', typeflag: '5' }),
      member({ name: '/', typeflag: '5' }),
      member({ name: '', typeflag: '5' }),
      member({ name: 'm/./b', size: 1 }, 'b'),
    );
    expect((await listEntries(gzipOf(tar))).map((e) => e.path)).toEqual(['m/a', 'm/d', '.', '/', '.', 'm/./b']);
  });

  it("applies a Solaris 'X' extended header like an 'x' one, as GNU tar does", async () => {
    // praiskup/tar:src/list.c:521-522: XHDTYPE and SOLARIS_XHDTYPE are read the same way.
    const records = paxRecord('path', 'm/from-x-header.txt');
    const tar = tarOf(member({ name: 'X', typeflag: 'X', size: records.length }, records), fileMember('m/short', 'x'));
    expect((await listEntries(gzipOf(tar))).map((e) => e.path)).toEqual(['m/from-x-header.txt']);
    expect(gnuListing(dir.path, tar)).toEqual(['m/from-x-header.txt']);
  });

  it('takes a GNU long name that starts with a NUL as empty, which names the root: "."', async () => {
    const tar = tarOf(gnuLong('L', '\u0000m/after-the-nul'), member({ name: 'short', size: 1 }, 'x'));
    expect((await listEntries(gzipOf(tar))).map((e) => [e.path, e.type])).toEqual([['.', 'file']]);
  });

  it("takes GNU long names ('L') and long link names ('K') up to their first NUL, for the next entry only", async () => {
    const longTarget = `../${'t'.repeat(150)}`;
    const tar = tarOf(
      gnuLong('L', 'm/long-name\u0000left over'),
      gnuLong('K', longTarget),
      member({ name: 'short', typeflag: '2', linkName: 'short-target' }),
      gnuLong('L', 'm/no-nul'),
      member({ name: 'short2', size: 1 }, 'x'),
      member({ name: 'm/plain', size: 1 }, 'y'),
    );
    expect((await listEntries(gzipOf(tar))).map((e) => [e.path, e.linkName])).toEqual([
      ['m/long-name', longTarget],
      ['m/no-nul', undefined],
      ['m/plain', undefined],
    ]);
    expect(gnuListing(dir.path, tar)).toEqual(['m/long-name', 'm/no-nul', 'm/plain']);
  });

  it("applies PAX path, linkpath and size, and an empty value removes what an earlier 'x' header set", async () => {
    const tar = tarOf(
      paxMember({ path: 'm/pax-name', linkpath: 'pax-target' }),
      member({ name: 'l', typeflag: '2', linkName: 'header-target' }),
      paxMember({ path: 'm/discarded', linkpath: 'discarded', size: '3' }),
      paxMember({ path: '', linkpath: '', size: '' }),
      member({ name: 'm/l2', typeflag: '2', linkName: 'header-target' }),
      paxMember({ size: '2' }),
      paxMember({ size: '' }),
      member({ name: 'm/five', size: 5 }, 'hello'),
    );
    expect((await listEntries(gzipOf(tar))).map((e) => [e.path, e.linkName ?? e.text])).toEqual([
      ['m/pax-name', 'pax-target'],
      ['m/l2', 'header-target'],
      ['m/five', 'hello'],
    ]);
  });

  it("applies a global ('g') header to every later entry, under each entry's own 'x' records, as GNU tar does", async () => {
    // praiskup/tar:src/xheader.c:697-700 (xheader_decode: the global override list first, then the member's records).
    const tar = tarOf(
      fileMember('m/before', 'b'),
      globalMember({ path: 'm/global-name' }),
      fileMember('m/one', '1'),
      paxMember({ path: 'm/own-name' }),
      fileMember('m/two', '2'),
      fileMember('m/three', '3'),
    );
    const paths = ['m/before', 'm/global-name', 'm/own-name', 'm/global-name'];
    expect((await listEntries(gzipOf(tar))).map((e) => e.path)).toEqual(paths);
    expect(gnuListing(dir.path, tar)).toEqual(paths);
  });

  it('skips the map of a sparse file, so the entry after it is read where it starts', async () => {
    const tar = tarOf(
      paxMember({ 'GNU.sparse.major': '1', 'GNU.sparse.minor': '0', 'GNU.sparse.name': 'm/w.bin' }),
      member({ name: 'm/GNUSparseFile.0/w.bin', size: 600 }, Buffer.alloc(600, 0x31)),
      fileMember('m/after.txt', 'after'),
    );
    expect((await listEntries(gzipOf(tar))).map((e) => [e.path, e.type, e.size, e.text])).toEqual([
      ['m/w.bin', 'other', 0, undefined],
      ['m/after.txt', 'file', 5, 'after'],
    ]);
  });

  it('checks GNU.sparse.* numbers and maps, naming the record and the header offset', async () => {
    const at1024 = (records: Record<string, string>) =>
      gzipOf(tarOf(fileMember('m/a', 'a'), paxMember(records), fileMember('m/w.bin', 'map')));
    const malformed = (what: string) => `not a valid tar archive: malformed extended header at byte 1024: ${what}${REMEDY}`;
    for (const key of ['major', 'minor', 'size', 'realsize', 'numblocks', 'offset', 'numbytes']) {
      await expect(failure(at1024({ [`GNU.sparse.${key}`]: 'x1' }))).resolves.toMatchObject({
        code: 'TAR_BAD_ARCHIVE',
        message: malformed(`invalid GNU.sparse.${key}="x1"`),
      });
    }
    await expect(failure(at1024({ 'GNU.sparse.size': '1x' }))).resolves.toMatchObject({
      message: malformed('invalid GNU.sparse.size="1x"'),
    });
    await expect(failure(at1024({ 'GNU.sparse.realsize': '' }))).resolves.toMatchObject({
      message: malformed('invalid GNU.sparse.realsize=""'),
    });
    for (const map of ['0,5,x,1', '0,5,x1,1', '0,5,1x,1']) {
      await expect(failure(at1024({ 'GNU.sparse.map': map }))).resolves.toMatchObject({
        message: malformed(`invalid GNU.sparse.map="${map}"`),
      });
    }
    // GNU tar: "Malformed extended header: invalid GNU.sparse.map: odd number of values" (praiskup/tar:src/xheader.c:1466-1470).
    await expect(failure(at1024({ 'GNU.sparse.map': '0,5,10' }))).resolves.toMatchObject({
      message: malformed('an odd number of values in GNU.sparse.map="0,5,10" (offset,size pairs)'),
    });
    // Well-formed numbers, a map of pairs and records GNU tar does not check make a sparse entry, not an error.
    const fine = await listEntries(
      at1024({ 'GNU.sparse.realsize': '123456789012345', 'GNU.sparse.map': '0,5,10,5', 'GNU.sparse.other': 'x' }),
    );
    expect(fine.map((e) => [e.path, e.type, e.sparse])).toEqual([
      ['m/a', 'file', undefined],
      ['m/w.bin', 'other', true],
    ]);
  });

  it('names a malformed record of a global header by its offset in the archive', async () => {
    const record = 'path=x\n';
    const global = member({ name: 'GlobalHead', typeflag: 'g', size: record.length }, record);
    await expect(failure(gzipOf(tarOf(fileMember('m/a', 'a'), global, fileMember('m/b', 'b'))))).resolves.toMatchObject({
      code: 'TAR_BAD_ARCHIVE',
      message: `not a valid tar archive: malformed PAX extended header at byte 1536 (missing length)${REMEDY}`,
    });
  });

  it('names the header of a bad PAX size by its offset', async () => {
    const tar = tarOf(fileMember('m/a', 'a'), paxMember({ size: '12a' }), fileMember('m/b', 'b'));
    await expect(failure(gzipOf(tar))).resolves.toMatchObject({
      code: 'TAR_BAD_SIZE',
      message: `not a valid tar archive: bad size at byte 1024 (PAX size "12a")${REMEDY}`,
    });
  });

  it('accepts an extended header of exactly 1 MiB, and refuses one byte more, naming its offset', async () => {
    const limit = 1024 * 1024;
    const head = `${limit} comment=`;
    const records = `${head}${'c'.repeat(limit - head.length - 1)}\n`;
    expect(Buffer.byteLength(records)).toBe(limit);
    const largest = tarOf(fileMember('m/a', 'a'), paxMember(records), fileMember('m/b', 'b'));
    expect((await listEntries(largest)).map((e) => e.path)).toEqual(['m/a', 'm/b']);
    const over = tarOf(fileMember('m/a', 'a'), member({ name: 'PaxHeader', typeflag: 'x', size: limit + 1 }), fileMember('m/b', 'b'));
    await expect(failure(over)).resolves.toMatchObject({
      code: 'TAR_BAD_ARCHIVE',
      message:
        `not a valid tar archive: the extended header at byte 1024 holds ${limit + 1} bytes, ` +
        `more than the ${limit} this reader accepts${REMEDY}`,
    });
  });

  it('names the first of several extended headers that describe no entry, whatever their kind', async () => {
    const lone = (...headers: Buffer[]) => gzipOf(tarOf(fileMember('m/a', 'a'), ...headers));
    const noEntry = (offset: number) => `not a valid tar archive: the extended header at byte ${offset} describes no entry${REMEDY}`;
    await expect(failure(lone(paxMember({ path: 'x' }), paxMember({ path: 'y' })))).resolves.toMatchObject({ message: noEntry(1024) });
    await expect(failure(lone(gnuLong('L', 'm/x')))).resolves.toMatchObject({ code: 'TAR_BAD_ARCHIVE', message: noEntry(1024) });
    await expect(failure(lone(gnuLong('K', 'x')))).resolves.toMatchObject({ message: noEntry(1024) });
    await expect(failure(lone(gnuLong('K', 'x'), gnuLong('L', 'y')))).resolves.toMatchObject({ message: noEntry(1024) });
    // A global header alone sets nothing for one entry: the archive just ends.
    expect((await listEntries(lone(globalMember({ comment: 'x' })))).map((e) => e.path)).toEqual(['m/a']);
  });

  it('delivers content of several reads (over 256 KiB) whole, and skips what a callback leaves unread', async () => {
    const big = Buffer.alloc(700 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 251;
    const tar = tarOf(fileMember('m/big.bin', big), fileMember('m/half.bin', big), fileMember('m/after.txt', 'after'));
    const seen: [string, number, string][] = [];
    await readTarGz(Readable.from(chunked(gzipSync(tar), 10_000)), async (entry, content) => {
      if (entry.path === 'm/half.bin') {
        // Read one piece, then walk away: the rest is skipped.
        for await (const chunk of content) {
          seen.push([entry.path, (chunk as Buffer).length, '']);
          break;
        }
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of content) chunks.push(chunk as Buffer);
      const data = Buffer.concat(chunks);
      seen.push([entry.path, data.length, entry.path === 'm/big.bin' ? String(data.equals(big)) : data.toString()]);
    });
    expect(seen).toEqual([
      ['m/big.bin', big.length, 'true'],
      ['m/half.bin', expect.any(Number), ''],
      ['m/after.txt', 5, 'after'],
    ]);
    expect(seen[1]![1]).toBeLessThanOrEqual(256 * 1024);
  });

  it('stops the content of an entry once its callback settles, even one left flowing', async () => {
    const big = Buffer.alloc(900 * 1024, 0x62);
    const tar = tarOf(fileMember('m/flowing.bin', big), fileMember('m/after.txt', 'after'));
    const seen: [string, string][] = [];
    await readTarGz(Readable.from(chunked(tar, 64 * 1024)), (entry, content) => {
      if (entry.path === 'm/flowing.bin') {
        // Starts reading and returns at once: what was not read by then is skipped, not read behind the reader's back.
        content.on('data', () => undefined);
        return;
      }
      return new Promise<void>((done) => {
        const chunks: Buffer[] = [];
        content.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => {
          seen.push([entry.path, Buffer.concat(chunks).toString()]);
          done();
        });
      });
    });
    expect(seen).toEqual([['m/after.txt', 'after']]);
  });

  it('reads a stream of pieces smaller than the gzip magic number or a header, gzip-compressed or not', async () => {
    const tar = tarOf(fileMember('m/a.txt', 'first'), fileMember('m/b.txt', 'second'));
    const expected = [
      ['m/a.txt', 'first'],
      ['m/b.txt', 'second'],
    ];
    expect((await listEntries(chunked(gzipSync(tar), 1))).map((e) => [e.path, e.text])).toEqual(expected);
    expect((await listEntries(chunked(tar, 100))).map((e) => [e.path, e.text])).toEqual(expected);
  });
});

describe('readTarGz: what ends an archive', () => {
  const tar = tarOf(fileMember('m/a', 'a'));

  it('names the first byte that is not zero after the end-of-archive blocks, however the data is cut', async () => {
    const after = (zeros: number) => Buffer.concat([tar, Buffer.alloc(zeros), Buffer.from('xy'), Buffer.alloc(100)]);
    const message = (at: number) => `not a valid tar archive: data after the end-of-archive blocks, at byte ${at}${REMEDY}`;
    await expect(failure(after(10))).resolves.toMatchObject({ code: 'TAR_BAD_ARCHIVE', message: message(tar.length + 10) });
    await expect(failure(chunked(after(70_000), 1000))).resolves.toMatchObject({ message: message(tar.length + 70_000) });
    await expect(failure(after(140_000))).resolves.toMatchObject({ message: message(tar.length + 140_000) });
    expect(await listEntries([tar, Buffer.alloc(140_000), Buffer.alloc(0), Buffer.alloc(3)])).toHaveLength(1);
  });

  it('names a cut inside an extended header: in its data, in its padding, and where its data should start', async () => {
    const cut = (at: number) => `not a valid tar archive: it is cut short at byte ${at}, in an extended header${REMEDY}`;
    // 20 bytes of records ("20 path=m/long-name\n"), then 492 of padding, then the file's header.
    const named = Buffer.concat([paxMember({ path: 'm/long-name' }), fileMember('m/a', 'a')]);
    await expect(failure(named.subarray(0, 512 + 5))).resolves.toMatchObject({ code: 'TAR_TRUNCATED', message: cut(517) });
    await expect(failure(named.subarray(0, 512 + 30))).resolves.toMatchObject({ code: 'TAR_TRUNCATED', message: cut(542) });
    // Records of exactly one block: cut at the header's end, the data is missing whole, with no padding after it.
    const record = paxRecord('comment', 'x'.repeat(499));
    expect(Buffer.byteLength(record)).toBe(TAR_BLOCK);
    await expect(failure(paxMember(record).subarray(0, TAR_BLOCK))).resolves.toMatchObject({ code: 'TAR_TRUNCATED', message: cut(512) });
  });

  it("ends an empty file's content at once, so a cut after its header is named as the archive's end", async () => {
    // listEntries reads the content of every file: an empty one must end without asking the archive for a byte.
    await expect(failure(fileMember('m/empty', ''))).resolves.toMatchObject({
      code: 'TAR_TRUNCATED',
      message: `not a valid tar archive: it ends at byte 512 without the end-of-archive blocks (cut short?)${REMEDY}`,
    });
  });

  it('refuses data that is not zeros after zeros after the last gzip member, naming where the member ends', async () => {
    const gz = gzipSync(tar);
    const message =
      `not a valid gzip stream: data that is not zeros follows the last gzip member, at byte ${gz.length} of the file ` +
      `(gzip -t: "trailing garbage ignored", which makes GNU tar fail)${REMEDY}`;
    await expect(failure(Buffer.concat([gz, Buffer.alloc(100), Buffer.from('junk')]))).resolves.toMatchObject({
      code: 'TAR_BAD_ARCHIVE',
      message,
    });
    // The byte in a chunk of its own, at the chunk's start, with a chunk of zeros after it.
    await expect(failure([...chunked(gz, 30), Buffer.alloc(10), Buffer.from('x'), Buffer.alloc(10)])).resolves.toMatchObject({
      message,
    });
    expect(await listEntries([...chunked(gz, 30), Buffer.alloc(10), Buffer.alloc(0), Buffer.alloc(10)])).toHaveLength(1);
  });

  it('names other compressions by their magic numbers', async () => {
    const magics: [string, Buffer][] = [
      ['bzip2', Buffer.from('BZh91AY&SY')],
      ['xz', Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04])],
      ['zstd', Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x00])],
      ['zip', Buffer.from('PK\u0003\u0004\u0014\u0000', 'latin1')],
    ];
    for (const [name, magic] of magics) {
      await expect(failure(Buffer.concat([magic, Buffer.alloc(600)]))).resolves.toMatchObject({
        code: 'TAR_BAD_ARCHIVE',
        message: `not a tar.gz: the file is ${name}-compressed, and SageMaker extracts only gzip-compressed tar archives${REMEDY}`,
      });
    }
  });

  it('reads a tar as plain unless both gzip magic bytes are there', async () => {
    const startsWith1f = rawHeader({ name: '\u001fm', size: 0 });
    const second8b = rawHeader({ name: 'ab', size: 0 });
    second8b[1] = 0x8b;
    withChecksum(second8b);
    expect((await listEntries(tarOf(startsWith1f))).map((e) => e.path)).toEqual(['\u001fm']);
    expect((await listEntries(tarOf(second8b))).map((e) => e.path)).toEqual(['a\uFFFD']);
  });

  it('names a cut header by its byte, in an input of fewer bytes than the gzip magic needs', async () => {
    await expect(failure(Buffer.from('ab'))).resolves.toMatchObject({
      code: 'TAR_TRUNCATED',
      message: `not a valid tar archive: it is cut short at byte 2, in a header${REMEDY}`,
    });
    await expect(failure(tar.subarray(0, 700))).resolves.toMatchObject({
      code: 'TAR_TRUNCATED',
      message: `not a valid tar archive: it is cut short at byte 700, in the data of "m/a"${REMEDY}`,
    });
  });

  it('names what zlib finds wrong in a gzip stream', async () => {
    const gz = gzipSync(tar);
    const badLength = Buffer.from(gz);
    badLength[badLength.length - 1] ^= 0x01;
    await expect(failure(badLength)).resolves.toMatchObject({
      code: 'TAR_BAD_ARCHIVE',
      message: `not a valid gzip stream: its length check failed, so the data is corrupt${REMEDY}`,
    });
    const badCrc = Buffer.from(gz);
    badCrc[badCrc.length - 8] ^= 0x01;
    await expect(failure(badCrc)).resolves.toMatchObject({
      message: `not a valid gzip stream: its CRC-32 check failed, so the data is corrupt${REMEDY}`,
    });
    await expect(failure(Buffer.concat([gz, Buffer.from('trailing garbage')]))).resolves.toMatchObject({
      message: `not a valid gzip stream: a gzip header is damaged, or other data follows the gzip stream${REMEDY}`,
    });
    // A message zlib has no entry for here is passed on as it is.
    await expect(failure(Buffer.concat([gz.subarray(0, 10), Buffer.alloc(20, 0xff)]))).resolves.toMatchObject({
      code: 'TAR_BAD_ARCHIVE',
      message: `not a valid gzip stream: invalid block type${REMEDY}`,
    });
    await expect(failure(gz.subarray(0, gz.length - 3))).resolves.toMatchObject({
      code: 'TAR_TRUNCATED',
      message: `not a valid gzip stream: it is cut short${REMEDY}`,
    });
  });
});

describe('readTarGz: the input', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeAll(() => {
    dir = tempDir();
  });
  afterAll(() => dir.cleanup());
  // Random bytes, so the gzip stream is long and the reader is still reading it when a callback aborts.
  const archive = gzipOf(tarOf(fileMember('m/a', 'a'), fileMember('m/b', randomBytes(1 << 20))));

  it('names the file in NOT_FOUND and UNREADABLE messages, and "the archive" for a stream', async () => {
    const missing = join(dir.path, 'missing.tar.gz');
    // Each with the system's error as its cause, for whoever needs more than the message.
    await expect(readTarGz(missing, () => undefined)).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: `${missing}: no such file.`,
      cause: expect.objectContaining({ code: 'ENOENT', path: missing }),
    });
    await expect(readTarGz(dir.path, () => undefined)).rejects.toMatchObject({
      code: 'UNREADABLE',
      message: `${dir.path} is a directory, not an archive file.`,
      cause: expect.objectContaining({ code: 'EISDIR' }),
    });
    const failing = (err: Error) =>
      new Readable({
        read() {
          this.destroy(err);
        },
      });
    await expect(readTarGz(failing(Object.assign(new Error('gone'), { code: 'ENOENT' })), () => undefined)).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: 'the archive: no such file.',
    });
    await expect(
      readTarGz(failing(Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' })), () => undefined),
    ).rejects.toMatchObject({ code: 'UNREADABLE', message: expect.stringMatching(/^cannot read the archive: /) });
    // An error without a code is not the file's: it is passed on as it is.
    const plain = new Error('no code');
    await expect(readTarGz(failing(plain), () => undefined)).rejects.toBe(plain);
  });

  it('stops with ABORTED when the signal fires, for a file and for a stream', async () => {
    const file = join(dir.path, 'a.tar.gz');
    writeFileSync(file, archive);
    for (const source of [() => file, () => Readable.from(chunked(archive, 16_384))]) {
      const before = new AbortController();
      before.abort();
      await expect(readTarGz(source(), () => undefined, { signal: before.signal })).rejects.toMatchObject({
        code: 'ABORTED',
        message: 'interrupted while reading the archive.',
        cause: expect.objectContaining({ name: 'AbortError', code: 'ABORT_ERR' }),
      });
      const during = new AbortController();
      const seen: string[] = [];
      const reading = readTarGz(
        source(),
        (entry) => {
          seen.push(entry.path);
          during.abort();
        },
        { signal: during.signal },
      );
      // Stopped when the reader next needs bytes from the source: an entry already buffered may still come.
      await expect(reading).rejects.toMatchObject({ code: 'ABORTED', message: 'interrupted while reading the archive.' });
      expect(seen[0]).toBe('m/a');
    }
    // Without a signal, and with one that never fires, the whole archive is read.
    const quiet = new AbortController();
    for (const options of [undefined, { signal: quiet.signal }]) {
      const seen: string[] = [];
      await readTarGz(file, (entry) => void seen.push(entry.path), options);
      await readTarGz(Readable.from(chunked(archive, 16_384)), (entry) => void seen.push(entry.path), options);
      expect(seen).toEqual(['m/a', 'm/b', 'm/a', 'm/b']);
    }
  });

  it('destroys the stream it was given once it stops, also when the callback fails', async () => {
    const plain = Readable.from([tarOf(fileMember('m/a', 'a'), fileMember('m/b', 'b'))]);
    await expect(
      readTarGz(plain, () => {
        throw new Error('stop');
      }),
    ).rejects.toThrow('stop');
    expect(plain.destroyed).toBe(true);
  });
});

describe('unsafeEntryReason', () => {
  const entry = (fields: Partial<TarEntry>): TarEntry => ({ path: 'm/x', type: 'file', size: 0, mode: 0o644, typeflag: '0', ...fields });
  const only = '; only regular files and directories are allowed';

  it('allows plain files and directories, the root directory included', () => {
    expect(unsafeEntryReason(entry({}))).toBeUndefined();
    expect(unsafeEntryReason(entry({ type: 'directory', typeflag: '5' }))).toBeUndefined();
    expect(unsafeEntryReason(entry({ path: '.', type: 'directory', typeflag: '5' }))).toBeUndefined();
  });

  it('says what is wrong with each other kind of entry', () => {
    expect(unsafeEntryReason(entry({ path: '.' }))).toBe('is a file with an empty name');
    expect(unsafeEntryReason(entry({ type: 'symlink', typeflag: '2', linkName: '../t' }))).toBe(
      'is a symbolic link (to "../t"); replace it with the file or directory it points to',
    );
    expect(unsafeEntryReason(entry({ type: 'symlink', typeflag: '2' }))).toBe(
      'is a symbolic link (to ""); replace it with the file or directory it points to',
    );
    expect(unsafeEntryReason(entry({ type: 'other', typeflag: '1', linkName: 'm/a' }))).toBe(`is a hard link${only}`);
    expect(unsafeEntryReason(entry({ type: 'other', typeflag: '3' }))).toBe(`is a character device${only}`);
    expect(unsafeEntryReason(entry({ type: 'other', typeflag: '4' }))).toBe(`is a block device${only}`);
    expect(unsafeEntryReason(entry({ type: 'other', typeflag: '6' }))).toBe(`is a FIFO (named pipe)${only}`);
    expect(unsafeEntryReason(entry({ type: 'other', typeflag: 'Z' }))).toBe(`is an entry of tar type "Z"${only}`);
    expect(unsafeEntryReason(entry({ type: 'other', typeflag: '0', sparse: true }))).toBe(
      "is a GNU sparse file, whose data is a map of holes, not the file's bytes; archive it without tar --sparse",
    );
  });

  it("puts the name's problem first", () => {
    expect(unsafeEntryReason(entry({ path: '../x', type: 'symlink', typeflag: '2', sparse: true }))).toBe(
      'has a ".." segment that would escape the destination',
    );
  });
});

describe('ExtractionVerdict', () => {
  const entry = (path: string, fields: Partial<TarEntry> = {}): TarEntry => ({
    path,
    type: 'file',
    size: 0,
    mode: 0o644,
    typeflag: '0',
    ...fields,
  });
  const symlink = (path: string, target: string) => entry(path, { type: 'symlink', typeflag: '2', linkName: target });
  const hardLink = (path: string, target: string) => entry(path, { type: 'other', typeflag: '1', linkName: target });
  const rebuild = '. Rebuild the archive without it (mme-deploy package writes only regular files and directories).';

  it('refuses every link by default, naming the entry', () => {
    const verdict = new ExtractionVerdict();
    expect(verdict.check(entry('m/a'))).toBe('entry');
    expect(verdict.check(entry('m', { type: 'directory', typeflag: '5' }))).toBe('entry');
    expect(() => verdict.check(symlink('m/l', 'a'))).toThrow(
      expect.objectContaining({
        code: 'TAR_UNSAFE_ENTRY',
        message: `entry "m/l" is a symbolic link (to "a"); replace it with the file or directory it points to${rebuild}`,
      }),
    );
    expect(() => verdict.check(hardLink('m/h', 'm/a'))).toThrow(
      `entry "m/h" is a hard link; only regular files and directories are allowed${rebuild}`,
    );
    expect(verdict.finish()).toEqual(new Map());
  });

  describe("with links: 'inside'", () => {
    it('allows symbolic links and hard links to an earlier file or hard link', () => {
      const verdict = new ExtractionVerdict('inside');
      expect(verdict.check(entry('m/a'))).toBe('entry');
      expect(verdict.check(symlink('m/l', 'a'))).toBe('symlink');
      expect(verdict.check(hardLink('m/h', 'm/a'))).toBe('hardlink');
      expect(verdict.check(hardLink('m/h2', 'm/h'))).toBe('hardlink');
      expect(verdict.check(hardLink('m/h3', './m/a'))).toBe('hardlink');
      expect([...verdict.finish()]).toEqual([['m/l', 'a']]);
    });

    it('still refuses a link with a bad name, other kinds of entry, and hard links to what is no earlier file', () => {
      const verdict = new ExtractionVerdict('inside');
      verdict.check(entry('m', { type: 'directory', typeflag: '5' }));
      expect(() => verdict.check(symlink('../l', 'a'))).toThrow(
        `entry "../l" has a ".." segment that would escape the destination${rebuild}`,
      );
      expect(() => verdict.check(entry('m/p', { type: 'other', typeflag: '6' }))).toThrow('entry "m/p" is a FIFO (named pipe)');
      expect(() => verdict.check(hardLink('m/h', 'm'))).toThrow(
        `entry "m/h" is a hard link to "m", which is not a regular file earlier in the archive${rebuild}`,
      );
      expect(() => verdict.check(hardLink('m/h', 'm/later'))).toThrow('which is not a regular file earlier in the archive');
      expect(() => verdict.check(hardLink('m/h', '../etc/passwd'))).toThrow(
        'entry "m/h" is a hard link to "../etc/passwd", outside the archive',
      );
    });

    it('keeps the links in the order they are made, a link given again moving to the end', () => {
      const verdict = new ExtractionVerdict('inside');
      verdict.check(symlink('m/a', 'x'));
      verdict.check(symlink('m/b', 'y'));
      verdict.check(symlink('m/a', 'z'));
      expect([...verdict.finish()]).toEqual([
        ['m/b', 'y'],
        ['m/a', 'z'],
      ]);
    });

    it('lets a later file replace a link, unless the link has a ".." segment, as GNU tar does', () => {
      // GNU tar makes a link whose target has ".." last, over what came later (praiskup/tar:src/extract.c,
      // create_placeholder_file and apply_delayed_links; checked against GNU tar in test/hostile/tar-agreement.test.ts).
      const verdict = new ExtractionVerdict('inside');
      verdict.check(symlink('m/plain', 'x'));
      verdict.check(symlink('m/up', '../m/x'));
      verdict.check(symlink('m/dir', 'x'));
      verdict.check(entry('m/plain'));
      verdict.check(entry('m/up'));
      verdict.check(entry('m/dir', { type: 'directory', typeflag: '5' }));
      expect([...verdict.finish()]).toEqual([['m/up', '../m/x']]);
    });

    it('takes a link without a link name as a link to "", and refuses a link named "." like a file', () => {
      const verdict = new ExtractionVerdict('inside');
      expect(verdict.check(entry('m/l', { type: 'symlink', typeflag: '2' }))).toBe('symlink');
      expect(() => verdict.check(entry('m/h', { type: 'other', typeflag: '1' }))).toThrow(
        `entry "m/h" is a hard link to "", which is not a regular file earlier in the archive${rebuild}`,
      );
      // An entry named "./" (the root) that is a link: extracting it would replace the destination itself.
      expect(() => verdict.check(symlink('.', 'm'))).toThrow(`entry "." is a file with an empty name${rebuild}`);
      expect(() => verdict.check(hardLink('.', 'm/a'))).toThrow(`entry "." is a file with an empty name${rebuild}`);
      expect([...verdict.finish()]).toEqual([['m/l', '']]);
    });

    it('refuses, once all are known, a symbolic link that leads out', () => {
      const verdict = new ExtractionVerdict('inside');
      verdict.check(symlink('m/up', '../../x'));
      expect(() => verdict.finish()).toThrow(
        expect.objectContaining({
          code: 'TAR_UNSAFE_ENTRY',
          message: `entry "m/up" is a symbolic link that points to "../../x", outside the archive${rebuild}`,
        }),
      );
    });
  });
});

describe('extractTarGz: details', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.cleanup());

  function archiveOf(...members: Buffer[]): string {
    const archive = join(dir.path, `a-${Math.random().toString(36).slice(2)}.tar.gz`);
    writeFileSync(archive, gzipOf(tarOf(...members)));
    return archive;
  }

  it('refuses a destination it cannot create as UNWRITABLE, naming it', async () => {
    writeFileSync(join(dir.path, 'file'), 'x');
    const dest = join(dir.path, 'file', 'out');
    await expect(extractTarGz(archiveOf(fileMember('m/a', 'a')), dest)).rejects.toMatchObject({
      code: 'UNWRITABLE',
      message: expect.stringMatching(new RegExp(`^cannot create ${dest}: ENOTDIR`)),
      cause: expect.objectContaining({ code: 'ENOTDIR', path: dest }),
    });
  });

  it('stops with ABORTED when the signal has fired, leaving the destination it made empty', async () => {
    const out = join(dir.path, 'out');
    const aborted = new AbortController();
    aborted.abort();
    await expect(extractTarGz(archiveOf(fileMember('m/a', 'a')), out, { signal: aborted.signal })).rejects.toMatchObject({
      code: 'ABORTED',
      message: 'interrupted while reading the archive.',
    });
    expect(readdirSync(out)).toEqual([]);
  });

  it('writes permission bits as stored (no set-user-ID), and 644 when none are stored', async () => {
    const out = join(dir.path, 'out');
    const mask = process.umask();
    await extractTarGz(
      archiveOf(
        member({ name: 'm/run.sh', mode: 0o755, size: 1 }, 'x'),
        member({ name: 'm/setuid', mode: 0o4750, size: 1 }, 'x'),
        member({ name: 'm/none', mode: 0, size: 1 }, 'x'),
      ),
      out,
    );
    const mode = (path: string) => statSync(join(out, path)).mode & 0o7777;
    expect([mode('m/run.sh'), mode('m/setuid'), mode('m/none')]).toEqual([0o755 & ~mask, 0o750 & ~mask, 0o644 & ~mask]);
  });

  it('refuses at the entry after the limit of top-level names, naming the first five', async () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const archive = archiveOf(...names.flatMap((name) => [fileMember(`${name}/x`, name), fileMember(`${name}/y`, name)]));
    expect(await extractTarGz(archive, join(dir.path, 'seven'), { maxTopLevel: 7 })).toHaveLength(14);
    const out = join(dir.path, 'five');
    await expect(extractTarGz(archive, out, { maxTopLevel: 5 })).rejects.toMatchObject({
      code: 'INVALID',
      message:
        'the archive holds more than 5 top-level entries ("a", "b", "c", "d", "e", ...); a TargetModel archive holds an ' +
        'ensemble and the models it composes. Stopped before extracting the rest.',
    });
    expect(readFileSync(join(out, 'e/y'), 'utf8')).toBe('e');
    expect(() => statSync(join(out, 'f'))).toThrow();
  });

  it('counts top-level names whole, not by their first characters', async () => {
    const archive = archiveOf(fileMember('ab/x', 'x'), fileMember('ab/y', 'y'), fileMember('ac/z', 'z'));
    expect(await extractTarGz(archive, join(dir.path, 'two'), { maxTopLevel: 2 })).toEqual(['ab/x', 'ab/y', 'ac/z']);
    await expect(extractTarGz(archive, join(dir.path, 'one'), { maxTopLevel: 1 })).rejects.toMatchObject({
      code: 'INVALID',
      message: expect.stringMatching(/^the archive holds more than 1 top-level entries \("ab", "ac", \.\.\.\); /),
    });
  });

  it("lets a later directory replace a symbolic link of the same name, with links: 'inside'", async () => {
    const out = join(dir.path, 'out');
    const archive = archiveOf(
      fileMember('m/a', 'a'),
      member({ name: 'm/l', typeflag: '2', linkName: 'a' }),
      directoryMember('m/l'),
      fileMember('m/l/x', 'x'),
    );
    expect(await extractTarGz(archive, out, { links: 'inside' })).toEqual(['m/a', 'm/l', 'm/l', 'm/l/x']);
    expect(lstatSync(join(out, 'm/l')).isDirectory()).toBe(true);
    expect(readFileSync(join(out, 'm/l/x'), 'utf8')).toBe('x');
  });

  it("returns every extracted path in archive order, links included, with links: 'inside'", async () => {
    const out = join(dir.path, 'out');
    const archive = archiveOf(
      fileMember('m/a', 'a'),
      member({ name: 'm/l', typeflag: '2', linkName: 'a' }),
      member({ name: 'm/h', typeflag: '1', linkName: './m/a' }),
      member({ name: 'x/y/deep-link', typeflag: '2', linkName: '../../m/a' }),
    );
    expect(await extractTarGz(archive, out, { links: 'inside' })).toEqual(['m/a', 'm/l', 'm/h', 'x/y/deep-link']);
    expect(statSync(join(out, 'm/h')).ino).toBe(statSync(join(out, 'm/a')).ino);
    expect(readlinkSync(join(out, 'm/l'))).toBe('a');
    expect(readFileSync(join(out, 'x/y/deep-link'), 'utf8')).toBe('a');
  });

  it("replaces an earlier file of the same name with a link, with links: 'inside'", async () => {
    const out = join(dir.path, 'out');
    await extractTarGz(
      archiveOf(fileMember('m/a', 'old'), fileMember('m/b', 'b'), member({ name: 'm/a', typeflag: '2', linkName: 'b' })),
      out,
      { links: 'inside' },
    );
    expect(lstatSync(join(out, 'm/a')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(out, 'm/a'), 'utf8')).toBe('b');
  });

  it('says which entry clashes with a file or a directory', async () => {
    await expect(extractTarGz(archiveOf(fileMember('m', 'x'), fileMember('m/a', 'y')), join(dir.path, 'o1'))).rejects.toMatchObject({
      code: 'TAR_UNSAFE_ENTRY',
      message: 'cannot extract into "m": it is a file, not a directory.',
    });
    await expect(extractTarGz(archiveOf(directoryMember('m/d'), fileMember('m/d', 'x')), join(dir.path, 'o2'))).rejects.toMatchObject({
      code: 'TAR_UNSAFE_ENTRY',
      message: 'cannot extract "m/d": a directory of that name exists.',
    });
  });

  it('refuses a name longer than the file system allows as the entry\'s fault, for a file and a directory', async () => {
    const long = 'n'.repeat(300);
    await expect(extractTarGz(archiveOf(fileMember(`m/${long}`, 'x')), join(dir.path, 'o1'))).rejects.toMatchObject({
      code: 'TAR_UNSAFE_ENTRY',
      message: expect.stringMatching(new RegExp(`^cannot extract "m/${long}": ENAMETOOLONG`)),
      cause: expect.objectContaining({ code: 'ENAMETOOLONG' }),
    });
    await expect(extractTarGz(archiveOf(directoryMember(`m/${long}`)), join(dir.path, 'o2'))).rejects.toMatchObject({
      code: 'TAR_UNSAFE_ENTRY',
      message: expect.stringMatching(new RegExp(`^cannot extract "m/${long}": ENAMETOOLONG`)),
    });
  });

  it("rejects an archive cut inside a file's data with the reader's TAR_TRUNCATED, not as a write failure", async () => {
    const archive = join(dir.path, 'cut.tar.gz');
    writeFileSync(archive, gzipSync(Buffer.concat([rawHeader({ name: 'm/a', size: 3000 }), Buffer.alloc(1000, 0x61)])));
    await expect(extractTarGz(archive, join(dir.path, 'out'))).rejects.toMatchObject({
      code: 'TAR_TRUNCATED',
      message: `not a valid tar archive: it is cut short at byte ${TAR_BLOCK + 1000}, in the data of "m/a"${REMEDY}`,
    });
  });

  it('refuses a symbolic link already in the destination with the whole remedy', async () => {
    const out = join(dir.path, 'out');
    mkdirSync(out);
    symlinkSync(dir.path, join(out, 'm'));
    await expect(extractTarGz(archiveOf(fileMember('m/a', 'a')), out)).rejects.toMatchObject({
      code: 'TAR_UNSAFE_ENTRY',
      message:
        `"m" is a symbolic link already in ${out}; extracting through it could write outside. ` +
        'Extract into an empty directory, or remove the link.',
    });
  });

  it('makes each directory once, and accepts one the archive names again', async () => {
    const out = join(dir.path, 'out');
    mkdirSync(join(out, 'm'), { recursive: true });
    const paths = await extractTarGz(
      archiveOf(directoryMember('m'), fileMember('m/1/a', 'a'), directoryMember('m/1'), fileMember('m/1/b', 'b')),
      out,
    );
    expect(paths).toEqual(['m', 'm/1/a', 'm/1', 'm/1/b']);
    expect([readdirSync(out), readdirSync(join(out, 'm')).sort()]).toEqual([['m'], ['1']]);
    expect([readFileSync(join(out, 'm/1/a'), 'utf8'), readFileSync(join(out, 'm/1/b'), 'utf8')]).toEqual(['a', 'b']);
  });
});
