// Encodes one fixed-size span of the tar stream as raw deflate that joins with its neighbours (pigz-style), and
// decides cheaply how much effort the span deserves: model weights barely compress, so they are not worth LZ77.

import { promisify } from 'node:util';
import * as zlib from 'node:zlib';

/**
 * - `stored`: bytes that look random (compressed or encrypted data, most weight files): stored deflate blocks.
 * - `huffman`: numeric arrays with skewed byte statistics but no repeats (fp16/bf16/int8 tensors): Huffman coding
 *   alone gets what gzip gets, at a fraction of the cost.
 * - `deflate`: anything with repeated sequences (text, code, JSON, zero runs): full deflate at the chosen level.
 */
export type SpanEncoding = 'stored' | 'huffman' | 'deflate';

const SAMPLES = 16;
const SAMPLE_SIZE = 1024;
/** Above this many bits per byte (of 8), deflate would gain under about 1.3%: store instead. */
const STORED_ENTROPY = 7.9;
/** At least this share of sampled positions starting a 4-byte sequence seen earlier in the sample means LZ77 pays. */
const LZ_REPEAT_SHARE = 0.1;

/**
 * Chooses the encoding from 16 samples of 1 KiB spread over the span: their order-0 byte entropy and how often a
 * 4-byte sequence repeats within a sample. Pure and cheap (about 16 KiB of work per span), so every machine makes
 * the same choice and the archive bytes stay deterministic.
 */
export function chooseEncoding(span: Uint8Array, level: number): SpanEncoding {
  if (level === 0 || span.length === 0) return 'stored';
  const histogram = new Uint32Array(256);
  const seenKeys = new Int32Array(4096);
  const seenIn = new Uint8Array(4096);
  let sampled = 0;
  let repeats = 0;
  const count = span.length < SAMPLES * SAMPLE_SIZE ? 1 : SAMPLES;
  const size = Math.min(SAMPLE_SIZE, span.length);
  for (let s = 0; s < count; s++) {
    const start = count === 1 ? 0 : Math.floor(((span.length - size) * s) / (count - 1));
    let key = 0;
    for (let i = start; i < start + size; i++) {
      const byte = span[i]!;
      histogram[byte]!++;
      key = (key << 8) | byte;
      if (i - start < 3) continue;
      // A 12-bit multiplicative hash of the last four bytes; a slot remembers its sequence exactly, so a repeat is
      // never a collision (overwrites only make the estimate a little low).
      const slot = Math.imul(key, 0x9e3779b1) >>> 20;
      if (seenIn[slot] === s + 1 && seenKeys[slot] === key) repeats++;
      seenKeys[slot] = key;
      seenIn[slot] = s + 1;
    }
    sampled += size;
  }
  if (repeats >= sampled * LZ_REPEAT_SHARE) return 'deflate';
  let entropy = 0;
  for (const n of histogram) if (n > 0) entropy -= (n / sampled) * Math.log2(n / sampled);
  return entropy >= STORED_ENTROPY ? 'stored' : 'huffman';
}

const MAX_STORED = 65535;

/**
 * The span as stored deflate blocks, none of them final, in one buffer of its own: one write downstream instead of
 * one per 64 KiB block, and the span's memory is free again at once.
 */
export function storedBlocks(span: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafeSlow(storedSize(span.length));
  let at = 0;
  for (let offset = 0; offset < span.length; offset += MAX_STORED) {
    const length = Math.min(MAX_STORED, span.length - offset);
    // BFINAL=0 and BTYPE=00 on a byte boundary, then LEN and its one's complement, little-endian.
    out[at] = 0;
    out.writeUInt16LE(length, at + 1);
    out.writeUInt16LE(~length & 0xffff, at + 3);
    out.set(span.subarray(offset, offset + length), at + 5);
    at += 5 + length;
  }
  return out;
}

/** Size of `storedBlocks(span)` in bytes. */
export function storedSize(length: number): number {
  return length + 5 * Math.ceil(length / MAX_STORED);
}

/**
 * Raw deflate for a `huffman` or `deflate` span, ending on a byte boundary without a final block (a sync flush)
 * so spans concatenate into one deflate stream. `dictionary` is the 32 KiB of tar bytes before the span, so
 * back-references reach into the previous span exactly as in one long stream. Resolves to undefined when the
 * result would not be smaller than storing the span. Runs on libuv's thread pool, so several spans compress in
 * parallel on all cores without the memory of a JavaScript worker per core; the bytes equal `deflateSpanSync`'s.
 */
export async function deflateSpan(
  span: Uint8Array,
  dictionary: Uint8Array,
  level: number,
  encoding: Exclude<SpanEncoding, 'stored'>,
): Promise<Uint8Array | undefined> {
  // One output chunk big enough for the whole span: the pool then deflates it in one job, not one per 16 KiB.
  const options = { ...deflateOptions(dictionary, level, encoding), chunkSize: storedSize(span.length) + 1024 };
  const deflated = await deflateRawAsync(span, options);
  return deflated.length < storedSize(span.length) ? deflated : undefined;
}

/** `deflateSpan` on the calling thread. */
export function deflateSpanSync(
  span: Uint8Array,
  dictionary: Uint8Array,
  level: number,
  encoding: Exclude<SpanEncoding, 'stored'>,
): Uint8Array | undefined {
  const deflated = zlib.deflateRawSync(span, deflateOptions(dictionary, level, encoding));
  return deflated.length < storedSize(span.length) ? deflated : undefined;
}

const deflateRawAsync = promisify(zlib.deflateRaw);

function deflateOptions(dictionary: Uint8Array, level: number, encoding: Exclude<SpanEncoding, 'stored'>): zlib.ZlibOptions {
  return {
    level,
    strategy: encoding === 'huffman' ? zlib.constants.Z_HUFFMAN_ONLY : zlib.constants.Z_DEFAULT_STRATEGY,
    finishFlush: zlib.constants.Z_SYNC_FLUSH,
    ...(dictionary.length > 0 && encoding === 'deflate' ? { dictionary } : {}),
  };
}
