// The zip container as a TorchScript archive uses it (pytorch/pytorch caffe2/serialize/inline_container.cc writes
// records stored, 64-byte aligned, zip64 when large): the central directory read from the end of the file, then only the
// entries asked for. Entry data (a model's tensors) is never read unless asked. Format: PKWARE APPNOTE.TXT 4.3.

import { inflateRawSync } from 'node:zlib';
import type { ByteSource } from './protobuf-wire';

export interface ZipEntry {
  readonly name: string;
  /** 0 stored, 8 deflated; others are not read. */
  readonly method: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly localHeaderOffset: number;
}

export type ZipDirectory = { readonly ok: true; readonly entries: readonly ZipEntry[] } | { readonly ok: false; readonly reason: string };

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** The end record (22 bytes) and the longest comment it may be followed by. */
const TAIL = 22 + 0xffff;
/** A central directory larger than this is not read (a TorchScript model's has a few thousand small entries). */
const MAX_DIRECTORY = 64 * 1024 * 1024;

function readAt(source: ByteSource, position: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(Math.max(0, Math.min(length, source.size - position)));
  let done = 0;
  while (done < buf.length) {
    const n = source.read(done === 0 ? buf : buf.subarray(done), buf.length - done, position + done);
    if (n <= 0) break;
    done += n;
  }
  return buf.subarray(0, done);
}

/** The entries of the zip's central directory. Never throws for what the file holds. */
export function readZipDirectory(source: ByteSource): ZipDirectory {
  // The end record is the last 22 bytes unless a comment follows it (torch writes none): look there first, so a
  // small archive's tail read stays out of the tensors before it.
  let tailAt = 0;
  let tail: Buffer = Buffer.alloc(0);
  let end = -1;
  for (const reach of [22, TAIL]) {
    tailAt = Math.max(0, source.size - reach);
    tail = readAt(source, tailAt, reach);
    for (let i = tail.length - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === EOCD && i + 22 + tail.readUInt16LE(i + 20) === tail.length) {
        end = i;
        break;
      }
    }
    if (end >= 0 || tailAt === 0) break;
  }
  if (end < 0) return { ok: false, reason: 'it is not a zip file (no end of central directory record)' };
  let count = tail.readUInt16LE(end + 10);
  let dirSize = tail.readUInt32LE(end + 12);
  let dirOffset = tail.readUInt32LE(end + 16);
  if (count === 0xffff || dirSize === 0xffffffff || dirOffset === 0xffffffff) {
    const locatorAt = tailAt + end - 20;
    const locator = locatorAt >= 0 ? readAt(source, locatorAt, 20) : Buffer.alloc(0);
    if (locator.length < 20 || locator.readUInt32LE(0) !== ZIP64_LOCATOR) return { ok: false, reason: 'its zip64 directory is missing' };
    const record = readAt(source, Number(locator.readBigUInt64LE(8)), 56);
    if (record.length < 56 || record.readUInt32LE(0) !== ZIP64_EOCD) return { ok: false, reason: 'its zip64 directory is damaged' };
    count = Number(record.readBigUInt64LE(32));
    dirSize = Number(record.readBigUInt64LE(40));
    dirOffset = Number(record.readBigUInt64LE(48));
  }
  if (dirSize > MAX_DIRECTORY || dirOffset + dirSize > source.size) return { ok: false, reason: 'its zip directory is damaged' };
  const dir = readAt(source, dirOffset, dirSize);
  const entries: ZipEntry[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > dir.length || dir.readUInt32LE(at) !== CENTRAL) return { ok: false, reason: 'its zip directory is damaged' };
    const nameLength = dir.readUInt16LE(at + 28);
    const extraLength = dir.readUInt16LE(at + 30);
    const commentLength = dir.readUInt16LE(at + 32);
    let compressedSize = dir.readUInt32LE(at + 20);
    let size = dir.readUInt32LE(at + 24);
    let localHeaderOffset = dir.readUInt32LE(at + 42);
    const name = dir.toString('utf8', at + 46, at + 46 + nameLength);
    // zip64 extended information (id 1): the 64-bit values of the fields saturated above, in this order.
    for (let x = at + 46 + nameLength; x + 4 <= at + 46 + nameLength + extraLength; ) {
      const id = dir.readUInt16LE(x);
      const length = dir.readUInt16LE(x + 2);
      if (id === 1) {
        let v = x + 4;
        const next = () => {
          const value = v + 8 <= x + 4 + length ? Number(dir.readBigUInt64LE(v)) : undefined;
          v += 8;
          return value;
        };
        if (size === 0xffffffff) size = next() ?? size;
        if (compressedSize === 0xffffffff) compressedSize = next() ?? compressedSize;
        if (localHeaderOffset === 0xffffffff) localHeaderOffset = next() ?? localHeaderOffset;
      }
      x += 4 + length;
    }
    entries.push({ name, method: dir.readUInt16LE(at + 10), compressedSize, size, localHeaderOffset });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return { ok: true, entries };
}

/** One entry's bytes (stored or deflated), or why not; only small entries are asked for. */
export function readZipEntry(source: ByteSource, entry: ZipEntry, maxBytes: number): Buffer | string {
  if (entry.size > maxBytes) return `${entry.name} is larger than ${maxBytes} bytes`;
  const header = readAt(source, entry.localHeaderOffset, 30);
  if (header.length < 30 || header.readUInt32LE(0) !== LOCAL) return `the zip entry ${entry.name} is damaged`;
  const dataAt = entry.localHeaderOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
  const data = readAt(source, dataAt, entry.compressedSize);
  if (data.length < entry.compressedSize) return `the zip entry ${entry.name} is cut short`;
  if (entry.method === 0) return data;
  if (entry.method !== 8) return `the zip entry ${entry.name} is compressed with method ${entry.method}`;
  try {
    return inflateRawSync(data, { maxOutputLength: maxBytes });
  } catch {
    return `the zip entry ${entry.name} does not inflate`;
  }
}
