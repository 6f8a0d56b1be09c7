// Builds tar archives byte by byte, including ones no honest tool writes (bad size fields, links with data, broken
// PAX records), for the reader's tests, its fuzz test and the CLI tests of `plan` and `local load`.

import { gzipSync } from 'node:zlib';
import { TAR_BLOCK, encodeHeaders, endOfArchive, paddingAfter, paxRecord } from '../../lib/archive/tar-header';

export interface RawHeaderFields {
  readonly name: string;
  /** The type flag character. @default '0' */
  readonly typeflag?: string;
  /** A number (written as octal) or the field's raw text (up to 12 bytes, written as is). @default 0 */
  readonly size?: number | string | Buffer;
  /** @default 0o644 */
  readonly mode?: number | string;
  readonly linkName?: string;
  /** The POSIX ustar prefix field. */
  readonly prefix?: string;
}

/** One 512-byte header with whatever fields are given and a correct checksum. */
export function rawHeader(fields: RawHeaderFields): Buffer {
  const block = Buffer.alloc(TAR_BLOCK);
  block.write(fields.name, 0, 100, 'utf8');
  writeField(block, 100, 8, fields.mode ?? 0o644);
  writeField(block, 108, 8, 0);
  writeField(block, 116, 8, 0);
  writeField(block, 124, 12, fields.size ?? 0);
  writeField(block, 136, 12, 0);
  block.write(fields.typeflag ?? '0', 156, 1, 'latin1');
  if (fields.linkName) block.write(fields.linkName, 157, 100, 'utf8');
  block.write('ustar\u000000', 257, 8, 'latin1');
  if (fields.prefix) block.write(fields.prefix, 345, 155, 'utf8');
  return withChecksum(block);
}

/** Recomputes a header block's checksum in place (after a mutation) and returns it. */
export function withChecksum(block: Buffer): Buffer {
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < TAR_BLOCK; i++) sum += block[i]!;
  block.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'latin1');
  return block;
}

/** A header followed by `data` padded to the block size; the data's length need not match the size field. */
export function member(fields: RawHeaderFields, data: Buffer | string = Buffer.alloc(0)): Buffer {
  const bytes = Buffer.from(data);
  return Buffer.concat([rawHeader(fields), bytes, Buffer.alloc(paddingAfter(bytes.length))]);
}

/** A file entry as our packer writes it (PAX records for long names). */
export function fileMember(path: string, content: string | Buffer): Buffer {
  const bytes = Buffer.from(content);
  return Buffer.concat([
    encodeHeaders({ path, type: 'file', size: bytes.length, mode: 0o644 }),
    bytes,
    Buffer.alloc(paddingAfter(bytes.length)),
  ]);
}

export function directoryMember(path: string): Buffer {
  return encodeHeaders({ path, type: 'directory', size: 0, mode: 0o755 });
}

/** A PAX extended header ('x') carrying `records` (already formatted, or key/value pairs). */
export function paxMember(records: string | Record<string, string>): Buffer {
  const text = typeof records === 'string' ? records : Object.entries(records).map(([k, v]) => paxRecord(k, v)).join('');
  const data = Buffer.from(text, 'utf8');
  return member({ name: 'PaxHeader', typeflag: 'x', size: data.length }, data);
}

/** Members followed by the end-of-archive blocks. */
export function tarOf(...members: Buffer[]): Buffer {
  const body = Buffer.concat(members);
  return Buffer.concat([body, endOfArchive(body.length)]);
}

export function gzipOf(tar: Buffer): Buffer {
  return gzipSync(tar);
}

/** A small valid model archive: the base the fuzz test mutates. */
export function sampleModelTar(): Buffer {
  return tarOf(
    directoryMember('m'),
    fileMember('m/config.pbtxt', 'name: "m"\nbackend: "python"\nmax_batch_size: 0\n'),
    directoryMember('m/1'),
    fileMember('m/1/model.py', 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n'),
    fileMember(`m/1/${'long-name-'.repeat(12)}.bin`, Buffer.alloc(700, 7)),
  );
}

function writeField(block: Buffer, offset: number, length: number, value: number | string | Buffer): void {
  if (typeof value === 'number') {
    block.write(`${value.toString(8).padStart(length - 1, '0')}\u0000`, offset, length, 'latin1');
  } else if (typeof value === 'string') {
    block.write(value, offset, length, 'latin1');
  } else {
    value.copy(block, offset, 0, length);
  }
}

export interface CraftedCase {
  readonly name: string;
  /** The file's bytes. */
  readonly bytes: Buffer;
  /** The MmeError code readTarGz rejects with when the callback reads nothing. */
  readonly code: 'TAR_BAD_ARCHIVE' | 'TAR_BAD_SIZE' | 'TAR_TRUNCATED';
  readonly message: RegExp;
}

/** A header block whose checksum is left as computed for other bytes, then `mutate`d. */
function mutated(block: Buffer, mutate: (b: Buffer) => void): Buffer {
  const copy = Buffer.from(block);
  mutate(copy);
  return copy;
}

/**
 * Every damaged or hostile archive of issue 14 that readTarGz must refuse: bad size fields (which used to hang the
 * reader), corruption only the gzip trailer shows, empty archives, data after the end, malformed PAX records.
 */
export function craftedCases(): CraftedCase[] {
  const config = fileMember('m/config.pbtxt', 'name: "m"\n');
  const model = sampleModelTar();
  const gz = gzipOf(model);
  const stored = gzipSync(model, { level: 0 });
  const flippedData = Buffer.from(stored);
  flippedData[Math.floor(stored.length / 2)] ^= 0x01;
  const secondMember = Buffer.concat([gzipOf(model.subarray(0, 2048)), gzipOf(model.subarray(2048))]);
  const badSecondCrc = Buffer.from(secondMember);
  badSecondCrc[badSecondCrc.length - 6] ^= 0xff;
  const big256 = Buffer.alloc(12, 0xff);
  big256[0] = 0x80;
  const negative256 = Buffer.alloc(12, 0xff);
  const badSize = (size: string | Buffer) => gzipOf(tarOf(member({ name: 'm/config.pbtxt', size }, 'name: "m"\n')));
  const pax = (records: string) => gzipOf(tarOf(paxMember(records), config));
  const globalPax = (records: string) =>
    gzipOf(tarOf(member({ name: 'GlobalHead', typeflag: 'g', size: Buffer.byteLength(records) }, records), config));
  const sizeCase = (name: string, bytes: Buffer, message = /bad size at byte 0 \(size field/): CraftedCase => ({
    name,
    bytes,
    code: 'TAR_BAD_SIZE',
    message,
  });
  const malformed = (name: string, records: string, what: string): CraftedCase => ({
    name: `a PAX record with ${name}`,
    bytes: pax(records),
    code: 'TAR_BAD_ARCHIVE',
    message: new RegExp(`malformed PAX extended header at byte \\d+ \\(${what}`),
  });
  return [
    sizeCase('a size field with a non-octal character', badSize('0000000001x\u0000')),
    sizeCase('a size field with the digit 9', badSize('00000000009\u0000')),
    sizeCase('a size field of blanks', badSize('           \u0000')),
    sizeCase('a negative base-256 size', badSize(negative256)),
    sizeCase('a base-256 size beyond 2^53', badSize(big256)),
    sizeCase('PAX size=abc', pax(paxRecord('size', 'abc')), /bad size at byte 0 \(PAX size "abc"\)/),
    sizeCase('PAX size=-5', pax(paxRecord('size', '-5')), /bad size at byte 0 \(PAX size "-5"\)/),
    sizeCase('PAX size=1e3', pax(paxRecord('size', '1e3')), /bad size at byte 0 \(PAX size "1e3"\)/),
    sizeCase('PAX size beyond 2^53', pax(paxRecord('size', '9'.repeat(20))), /PAX size "9+"/),
    // Found by the differential fuzz (test/hostile/tar-differential.fuzz.test.ts): GNU tar and bsdtar refuse these
    // in a global ('g') header as in an 'x' one; the reader used to check only the records' syntax there.
    sizeCase('global PAX size beyond 2^53', globalPax(paxRecord('size', '9'.repeat(20))), /PAX size "9+"/),
    {
      name: 'a global PAX GNU.sparse.major that is no number',
      bytes: globalPax(paxRecord('GNU.sparse.major', 'x')),
      code: 'TAR_BAD_ARCHIVE',
      message: /malformed extended header at byte 0: invalid GNU.sparse.major="x"/,
    },
    {
      name: 'a flipped byte in stored data (only the CRC-32 shows it)',
      bytes: flippedData,
      code: 'TAR_BAD_ARCHIVE',
      message: /CRC-32 check failed/,
    },
    { name: 'a cut gzip trailer', bytes: gz.subarray(0, gz.length - 4), code: 'TAR_TRUNCATED', message: /cut short/ },
    { name: 'the last KiB missing', bytes: stored.subarray(0, stored.length - 1024), code: 'TAR_TRUNCATED', message: /cut short/ },
    { name: 'a 0-byte file', bytes: Buffer.alloc(0), code: 'TAR_BAD_ARCHIVE', message: /holds no data/ },
    { name: 'a gzip of nothing', bytes: gzipOf(Buffer.alloc(0)), code: 'TAR_BAD_ARCHIVE', message: /holds no data/ },
    { name: 'only the end-of-archive blocks', bytes: gzipOf(tarOf()), code: 'TAR_BAD_ARCHIVE', message: /holds no entries/ },
    {
      name: 'data after the end-of-archive blocks',
      bytes: gzipOf(Buffer.concat([model, Buffer.from('hidden')])),
      code: 'TAR_BAD_ARCHIVE',
      message: new RegExp(`data after the end-of-archive blocks, at byte ${model.length}`),
    },
    {
      name: 'data after the gzip stream',
      bytes: Buffer.concat([gz, Buffer.from('trailing garbage')]),
      code: 'TAR_BAD_ARCHIVE',
      message: /other data follows the gzip stream/,
    },
    { name: 'a second gzip member with a bad CRC-32', bytes: badSecondCrc, code: 'TAR_BAD_ARCHIVE', message: /CRC-32/ },
    {
      name: 'a plain tar without its end-of-archive blocks',
      bytes: Buffer.concat([config]),
      code: 'TAR_TRUNCATED',
      message: /ends at byte 1024 without the end-of-archive blocks/,
    },
    {
      name: 'a header whose checksum does not match',
      bytes: gzipOf(
        tarOf(
          mutated(config.subarray(0, TAR_BLOCK), (b) => (b[0] = 0x6e)),
          config.subarray(TAR_BLOCK),
        ),
      ),
      code: 'TAR_BAD_ARCHIVE',
      message: /header checksum mismatch at byte 0/,
    },
    {
      name: 'a checksum field that is not a number',
      bytes: gzipOf(
        tarOf(
          mutated(config.subarray(0, TAR_BLOCK), (b) => b.write('zzzzzz', 148, 'latin1')),
          config.subarray(TAR_BLOCK),
        ),
      ),
      code: 'TAR_BAD_ARCHIVE',
      message: /header checksum mismatch at byte 0/,
    },
    {
      name: 'a mode field that is not a number',
      bytes: gzipOf(tarOf(member({ name: 'm/config.pbtxt', mode: '07x4\u0000', size: 1 }, 'x'))),
      code: 'TAR_BAD_ARCHIVE',
      message: /bad mode at byte 0/,
    },
    malformed('no length', ' path=x\n', 'missing length'),
    malformed('no blank after the length', '9path=x\n', 'missing blank after length'),
    malformed('a length beyond the data', '99 path=x\n', 'record length 99 out of range'),
    malformed('no newline', '9 path=xx', 'missing newline'),
    malformed('no equal sign', '9 pathxx\n', 'missing equal sign'),
    malformed('an empty keyword', '9 =pathx\n', 'empty keyword'),
    {
      name: 'an extended header followed by the end of the archive',
      bytes: gzipOf(tarOf(config, paxMember({ path: 'x' }))),
      code: 'TAR_BAD_ARCHIVE',
      message: /extended header at byte 1024 describes no entry/,
    },
    {
      name: 'an extended header claiming 2 MiB',
      bytes: gzipOf(tarOf(member({ name: 'PaxHeader', typeflag: 'x', size: 2 * 1024 * 1024 }), config)),
      code: 'TAR_BAD_ARCHIVE',
      message: /holds 2097152 bytes, more than the 1048576 this reader accepts/,
    },
    {
      name: 'a config.pbtxt claiming 3 GiB in a small archive',
      bytes: gzipOf(Buffer.concat([rawHeader({ name: 'm/config.pbtxt', size: 3 * 1024 ** 3 }), Buffer.alloc(4096, 0x61)])),
      code: 'TAR_TRUNCATED',
      message: /cut short at byte \d+, in the data of "m\/config.pbtxt"/,
    },
    {
      name: 'a bzip2-compressed tar',
      bytes: Buffer.concat([Buffer.from('BZh91AY&SY'), Buffer.alloc(100)]),
      code: 'TAR_BAD_ARCHIVE',
      message: /bzip2-compressed/,
    },
    {
      name: 'text that is not an archive',
      bytes: Buffer.from('hello\n'.repeat(200)),
      code: 'TAR_BAD_ARCHIVE',
      message: /checksum mismatch at byte 0/,
    },
  ];
}
