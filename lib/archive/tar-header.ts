// The tar byte layout in one place: ustar header blocks and PAX extended records, encoded by the packer and
// decoded by the reader (POSIX.1-2001 pax format; GNU long-name entries are decoded too).

export const TAR_BLOCK = 512;

/** The largest size the 11-digit octal ustar field holds (8 GiB - 1); larger files get a PAX `size` record. */
const MAX_OCTAL_SIZE = 0o77777777777;
const NAME_FIELD = 100;

/** What the packer writes for one entry. */
export interface HeaderInput {
  /** POSIX path, directories without the trailing `/` (added here). */
  readonly path: string;
  readonly type: 'file' | 'directory';
  readonly size: number;
  /** Permission bits, already normalized by the caller. */
  readonly mode: number;
}

/**
 * The header blocks for one entry: a PAX extended header when the path is longer than the ustar name field or not
 * plain ASCII (so every reader decodes it as UTF-8) or the size exceeds the octal field, then the ustar header.
 * Owner, group and times are fixed (0, empty names) so the bytes depend on path, type, size and mode alone.
 */
export function encodeHeaders(entry: HeaderInput): Buffer {
  const tarPath = entry.type === 'directory' ? `${entry.path}/` : entry.path;
  const size = entry.type === 'directory' ? 0 : entry.size;
  const pax: [string, string][] = [];
  if (Buffer.byteLength(tarPath) > NAME_FIELD || /[^\x20-\x7e]/.test(tarPath)) pax.push(['path', tarPath]);
  if (size > MAX_OCTAL_SIZE) pax.push(['size', String(size)]);
  const main = ustarBlock({
    name: tarPath,
    mode: entry.mode,
    size: size > MAX_OCTAL_SIZE ? 0 : size,
    typeflag: entry.type === 'directory' ? '5' : '0',
  });
  if (pax.length === 0) return main;
  const records = Buffer.from(pax.map(([key, value]) => paxRecord(key, value)).join(''), 'utf8');
  const paxHeader = ustarBlock({ name: '././@PaxHeader', mode: 0o644, size: records.length, typeflag: 'x' });
  return Buffer.concat([paxHeader, records, Buffer.alloc(paddingAfter(records.length)), main]);
}

/** The two zero blocks that end an archive, padded to GNU tar's 10 KiB record so every reader is content. */
export function endOfArchive(bytesSoFar: number): Buffer {
  const record = 20 * TAR_BLOCK;
  const end = bytesSoFar + 2 * TAR_BLOCK;
  return Buffer.alloc(2 * TAR_BLOCK + ((record - (end % record)) % record));
}

/** Zero bytes that follow `size` bytes of content to reach the next block boundary. */
export function paddingAfter(size: number): number {
  return (TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK;
}

/** `"<length> key=value\n"`, where length counts the whole record including its own digits. */
export function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bodyLength = Buffer.byteLength(body);
  let length = bodyLength + String(bodyLength).length;
  if (String(length).length + bodyLength !== length) length += 1;
  return `${length}${body}`;
}

function ustarBlock(fields: { name: string; mode: number; size: number; typeflag: string }): Buffer {
  const block = Buffer.alloc(TAR_BLOCK);
  // Buffer#write never writes a partial UTF-8 character, so an over-long name is cut at a character boundary;
  // the PAX record carries the full path.
  block.write(fields.name, 0, NAME_FIELD, 'utf8');
  writeOctal(block, 100, 8, fields.mode);
  writeOctal(block, 108, 8, 0); // uid
  writeOctal(block, 116, 8, 0); // gid
  writeOctal(block, 124, 12, fields.size);
  writeOctal(block, 136, 12, 0); // mtime
  block.write(fields.typeflag, 156, 1, 'latin1');
  block.write('ustar\u000000', 257, 8, 'latin1');
  writeOctal(block, 329, 8, 0); // devmajor
  writeOctal(block, 337, 8, 0); // devminor
  block.fill(0x20, 148, 156);
  const sum = checksum(block);
  block.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'latin1');
  return block;
}

/** Zero-padded octal digits followed by NUL, filling the field. */
function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
  block.write(`${value.toString(8).padStart(length - 1, '0')}\u0000`, offset, length, 'latin1');
}

function checksum(block: Buffer): number {
  let sum = 0;
  for (let i = 0; i < TAR_BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  return sum;
}

/** One header block as stored, before PAX/GNU overrides are applied. */
export interface DecodedHeader {
  readonly name: string;
  readonly mode: number;
  readonly size: number;
  readonly mtime: number;
  readonly typeflag: string;
  readonly linkName: string;
}

/**
 * Decodes a header block; `undefined` for an all-zero block (end of archive). Throws when the checksum does not
 * match, which is how a file that is not a tar (or a corrupt one) shows itself.
 */
export function decodeHeader(block: Buffer, offset: number): DecodedHeader | undefined {
  if (block.every((byte) => byte === 0)) return undefined;
  const stored = readNumber(block, 148, 8);
  if (stored !== checksum(block)) {
    throw new Error(`Not a valid tar archive: header checksum mismatch at byte ${offset}.`);
  }
  const magic = block.toString('latin1', 257, 263);
  let name = readString(block, 0, NAME_FIELD);
  // POSIX ustar keeps the leading directories in a prefix field; GNU's "ustar  " uses those bytes for other things.
  if (magic === 'ustar\u0000') {
    const prefix = readString(block, 345, 155);
    if (prefix) name = `${prefix}/${name}`;
  }
  return {
    name,
    mode: readNumber(block, 100, 8),
    size: readNumber(block, 124, 12),
    mtime: readNumber(block, 136, 12),
    typeflag: String.fromCharCode(block[156]!),
    linkName: readString(block, 157, NAME_FIELD),
  };
}

/** Parses the records of a PAX extended header into key → value (later keys win). */
export function parsePaxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let position = 0;
  while (position < data.length) {
    const space = data.indexOf(0x20, position);
    if (space < 0) break;
    const length = Number.parseInt(data.toString('latin1', position, space), 10);
    if (!Number.isInteger(length) || length <= 0 || position + length > data.length) {
      throw new Error('Not a valid tar archive: malformed PAX extended header.');
    }
    const record = data.toString('utf8', space + 1, position + length - 1);
    const equals = record.indexOf('=');
    if (equals > 0) records.set(record.slice(0, equals), record.slice(equals + 1));
    position += length;
  }
  return records;
}

function readString(block: Buffer, offset: number, length: number): string {
  const field = block.subarray(offset, offset + length);
  const end = field.indexOf(0);
  return field.toString('utf8', 0, end < 0 ? length : end);
}

/** Octal ASCII, or GNU base-256 when the first byte has its high bit set (sizes over 8 GiB). */
function readNumber(block: Buffer, offset: number, length: number): number {
  if (block[offset]! & 0x80) {
    let value = block[offset]! & 0x7f;
    for (let i = 1; i < length; i++) value = value * 256 + block[offset + i]!;
    return value;
  }
  const text = block.toString('latin1', offset, offset + length).replace(/[\u0000 ]+$/, '').trim();
  return text === '' ? 0 : Number.parseInt(text, 8);
}
