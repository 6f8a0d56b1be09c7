// The protobuf wire format, read forward from a file through a small window: the model readers (onnx.ts,
// tensorflow.ts, dali.ts) take the fields they need and skip the others by moving the file position, so the weights
// inside a model file are never read. Encoding: protobuf.dev/programming-guides/encoding.

/** A file open for positioned reads (lib/repository/model-files.ts gives one per model file). */
export interface ByteSource {
  readonly size: number;
  /** Reads up to `length` bytes at `position` into the start of `buffer`; returns how many were read. */
  read(buffer: Buffer, length: number, position: number): number;
}

/** Thrown inside the readers only: each turns it into `{ ok: false, reason }` in its format's words. */
export class WireError extends Error {}

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;
/** Bytes fetched when reading on from the last read: runs of small fields (nodes, value infos) come in few reads. */
const WINDOW = 16 * 1024;
/** Bytes fetched after a skip: enough for the next tensor's header (name, dims), little of the weights after it. */
const AFTER_SKIP = 512;

/**
 * A forward cursor over a file with a small read window. `skip` moves the position without reading, so the bytes
 * of skipped fields are only read when they happen to share a window with fields that are needed.
 */
/** One read window for all cursors: reading is synchronous, and a 16 KiB allocation per model costs (10,000 models). */
const SHARED_WINDOW = Buffer.allocUnsafe(WINDOW);

export class FileCursor {
  pos = 0;
  bytesRead = 0;
  private readonly buf = SHARED_WINDOW;
  private bufStart = 0;
  private bufEnd = 0;

  readonly size: number;

  constructor(private readonly source: ByteSource) {
    this.size = source.size;
  }

  private fill(at: number): void {
    const want = at === this.bufEnd ? WINDOW : AFTER_SKIP;
    const n = this.source.read(this.buf, Math.min(want, this.size - at), at);
    if (n <= 0) throw new WireError('the file ends early');
    this.bytesRead += n;
    this.bufStart = at;
    this.bufEnd = at + n;
  }

  byte(limit: number): number {
    if (this.pos >= limit) throw new WireError('a field runs past the end of its message');
    if (this.pos < this.bufStart || this.pos >= this.bufEnd) this.fill(this.pos);
    return this.buf[this.pos++ - this.bufStart]!;
  }

  /** A varint as a JS number: exact below 2^53, and int64 values read as two's complement (-1 is -1). */
  varint(limit: number): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      const b = this.byte(limit);
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    // Eight bytes or more: large or negative 64-bit values, done exactly in BigInt (rare: dims are small).
    let big = BigInt(result);
    let shift = 49n;
    for (let i = 7; i < 10; i++) {
      const b = this.byte(limit);
      big |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return Number(BigInt.asIntN(64, big));
      shift += 7n;
    }
    throw new WireError('a varint is longer than 10 bytes');
  }

  bytes(length: number, limit: number): Buffer {
    if (this.pos + length > limit) throw new WireError('a field runs past the end of its message');
    const out = Buffer.allocUnsafe(length);
    let done = 0;
    while (done < length) {
      if (this.pos < this.bufStart || this.pos >= this.bufEnd) this.fill(this.pos);
      const n = Math.min(length - done, this.bufEnd - this.pos);
      this.buf.copy(out, done, this.pos - this.bufStart, this.pos - this.bufStart + n);
      this.pos += n;
      done += n;
    }
    return out;
  }

  skip(length: number, limit: number): void {
    if (length < 0 || this.pos + length > limit) throw new WireError('a field runs past the end of its message');
    this.pos += length;
  }
}

/** Iterates the fields of a message that ends at `end`, calling `onField` for each; unknown fields are skipped. */
export function fields(c: FileCursor, end: number, onField: (field: number, wire: number) => boolean): void {
  while (c.pos < end) {
    const tag = c.varint(end);
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 0) throw new WireError('field number 0');
    if (onField(field, wire)) continue;
    skipValue(c, wire, end);
  }
  if (c.pos !== end) throw new WireError('a message ends inside a field');
}

export function skipValue(c: FileCursor, wire: number, end: number): void {
  switch (wire) {
    case WIRE_VARINT:
      c.varint(end);
      return;
    case WIRE_I64:
      c.skip(8, end);
      return;
    case WIRE_LEN:
      c.skip(c.varint(end), end);
      return;
    case WIRE_I32:
      c.skip(4, end);
      return;
    default:
      // Groups (3, 4) occur in none of the formats read here (proto3, or proto2 without groups); 6 and 7 are not wire types.
      throw new WireError(`wire type ${wire}`);
  }
}

/** The end offset of a length-delimited field that starts at the cursor. */
export function messageEnd(c: FileCursor, wire: number, end: number): number {
  if (wire !== WIRE_LEN) throw new WireError('a message field is not length-delimited');
  const length = c.varint(end);
  if (length < 0 || c.pos + length > end) throw new WireError('a message runs past the end of the file');
  return c.pos + length;
}

export function string(c: FileCursor, wire: number, end: number): string {
  if (wire !== WIRE_LEN) throw new WireError('a string field is not length-delimited');
  const length = c.varint(end);
  return c.bytes(length, end).toString('utf8');
}

export function int(c: FileCursor, wire: number, end: number): number {
  if (wire !== WIRE_VARINT) throw new WireError('an integer field is not a varint');
  return c.varint(end);
}

/** Skips the rest of a message that ends at `end` (a field whose content is not needed). */
export function skipTo(c: FileCursor, end: number): void {
  c.skip(end - c.pos, end);
}
