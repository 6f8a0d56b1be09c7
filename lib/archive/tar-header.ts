// The tar byte layout in one place: ustar header blocks and PAX extended records, encoded by the packer and
// decoded by the reader (POSIX.1-2001 pax format; GNU long-name entries are decoded too).

import { invalidArchive } from './archive-error';

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

/** The checksum as tars that summed signed chars computed it. */
function signedChecksum(block: Buffer): number {
  let sum = 0;
  for (let i = 0; i < TAR_BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i]! << 24) >> 24;
  return sum;
}

/** One header block as stored, before PAX/GNU overrides are applied. */
export interface DecodedHeader {
  readonly name: string;
  readonly mode: number;
  /** The size field: a finite integer >= 0 (anything else is refused as TAR_BAD_SIZE). */
  readonly size: number;
  readonly typeflag: string;
  readonly linkName: string;
}

/**
 * Decodes a header block; `undefined` for an all-zero block (end of archive). Throws an MmeError when the checksum
 * does not match (how a file that is not a tar, or a corrupt one, shows itself: TAR_BAD_ARCHIVE) or when the size
 * or mode field is not a number (TAR_BAD_SIZE, TAR_BAD_ARCHIVE). `offset` is the block's position, for messages.
 */
export function decodeHeader(block: Buffer, offset: number): DecodedHeader | undefined {
  if (block.equals(ZERO_BLOCK)) return undefined;
  const stored = readNumber(block, 148, 8);
  // GNU tar accepts the sum of the bytes taken as unsigned (POSIX) or as signed chars, which some old tars wrote
  // (GNU tar src/list.c, tar_checksum()).
  if (stored === undefined || (stored !== checksum(block) && stored !== signedChecksum(block))) {
    throw invalidArchive(`not a valid tar archive: header checksum mismatch at byte ${offset}`);
  }
  const size = readNumber(block, 124, 12);
  if (size === undefined) {
    throw invalidArchive(`not a valid tar archive: bad size at byte ${offset} (size field ${fieldText(block, 124, 12)})`, 'TAR_BAD_SIZE');
  }
  const mode = readNumber(block, 100, 8, true);
  if (mode === undefined) {
    throw invalidArchive(`not a valid tar archive: bad mode at byte ${offset} (mode field ${fieldText(block, 100, 8)})`);
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
    mode,
    size,
    typeflag: String.fromCharCode(block[156]!),
    linkName: readString(block, 157, NAME_FIELD),
  };
}

/** The PAX records a reader acts on or must refuse; others (times, owners, xattrs, comments) are checked for syntax only. */
export type PaxRecords = Map<string, string>;

/**
 * Parses a PAX extended header's data, records of the form `"<length> <keyword>=<value>\n"` where `<length>` is the
 * decimal byte count of the whole record (POSIX.1-2017 pax, "pax Extended Header"). Any record that breaks that
 * form is an error, as in GNU tar (src/xheader.c, decode_record(): "Malformed extended header: missing length",
 * "missing blank after length", "missing equal sign", "missing newline"); `offset` places the data for messages.
 * Later records with the same keyword win.
 */
export function parsePaxRecords(data: Buffer, offset = 0): PaxRecords {
  const records: PaxRecords = new Map();
  let position = 0;
  const malformed = (what: string) =>
    invalidArchive(`not a valid tar archive: malformed PAX extended header at byte ${offset + position} (${what})`);
  while (position < data.length) {
    let cursor = position;
    let length = 0;
    while (cursor < data.length && data[cursor]! >= DIGIT_0 && data[cursor]! <= DIGIT_9) {
      length = Math.min(length * 10 + data[cursor]! - DIGIT_0, Number.MAX_SAFE_INTEGER);
      cursor++;
    }
    if (cursor === position) throw malformed('missing length');
    if (data[cursor] !== SPACE) throw malformed('missing blank after length');
    const end = position + length;
    // The shortest record after the blank is "k=\n".
    if (end > data.length || end < cursor + 4) throw malformed(`record length ${length} out of range`);
    if (data[end - 1] !== NEWLINE) throw malformed('missing newline');
    const equals = data.indexOf(EQUALS, cursor + 1);
    if (equals < 0 || equals >= end - 1) throw malformed('missing equal sign');
    if (equals === cursor + 1) throw malformed('empty keyword');
    records.set(data.toString('utf8', cursor + 1, equals), data.toString('utf8', equals + 1, end - 1));
    position = end;
  }
  return records;
}

/** A PAX `size` value: decimal digits only (POSIX: "expressed as a decimal number"), at most 2^53 - 1. */
export function paxSize(value: string): number | undefined {
  if (!/^[0-9]+$/.test(value)) return undefined;
  const size = Number(value);
  return Number.isSafeInteger(size) ? size : undefined;
}

const ZERO_BLOCK = Buffer.alloc(TAR_BLOCK);
const SPACE = 0x20;
const NEWLINE = 0x0a;
const EQUALS = 0x3d;
const DIGIT_0 = 0x30;
const DIGIT_7 = 0x37;
const DIGIT_9 = 0x39;
const BASE256 = 0x80;
const BASE256_NEGATIVE = 0x40;

function readString(block: Buffer, offset: number, length: number): string {
  const field = block.subarray(offset, offset + length);
  const end = field.indexOf(0);
  return field.toString('utf8', 0, end < 0 ? length : end);
}

/**
 * A numeric field as GNU tar reads it (src/list.c, from_header()): leading blanks, octal digits, then NUL or blank
 * to the end of the field; or GNU base-256 when the first byte has its high bit set, the next bit being the sign.
 * `undefined` for anything else, a negative value or one beyond 2^53 - 1: a size like that would make a reader loop
 * or skip the rest of the archive. An empty field is 0 only where `emptyIsZero` says so (the mode).
 */
function readNumber(block: Buffer, offset: number, length: number, emptyIsZero = false): number | undefined {
  const first = block[offset]!;
  if (first & BASE256) {
    if (first & BASE256_NEGATIVE) return undefined;
    let value = first & (BASE256_NEGATIVE - 1);
    for (let i = 1; i < length; i++) value = value * 256 + block[offset + i]!;
    return Number.isSafeInteger(value) ? value : undefined;
  }
  const end = offset + length;
  let i = offset;
  while (i < end && block[i] === SPACE) i++;
  const start = i;
  let value = 0;
  for (; i < end && block[i]! >= DIGIT_0 && block[i]! <= DIGIT_7; i++) value = value * 8 + block[i]! - DIGIT_0;
  const digits = i - start;
  while (i < end && (block[i] === 0 || block[i] === SPACE)) i++;
  if (i !== end || (digits === 0 && !emptyIsZero)) return undefined;
  return value;
}

/** The raw bytes of a field, quoted and escaped for a message. */
function fieldText(block: Buffer, offset: number, length: number): string {
  return JSON.stringify(block.toString('latin1', offset, offset + length));
}
