import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';
import { chooseEncoding, deflateSpan, deflateSpanSync, storedBlocks, storedSize } from '../../lib/archive/deflate-span';

const MiB = 1024 * 1024;

/** fp16 weights of a trained layer: random sign and mantissa, exponents clustered as in |w| ~ 0.01-0.2. */
function fp16Like(size: number): Buffer {
  const data = randomBytes(size);
  for (let i = 1; i < size; i += 2) data[i] = (data[i]! & 0x83) | ((10 + (data[i]! % 6)) << 2);
  return data;
}

/** Inflates spans joined the way the packer joins them (non-final blocks, then an empty final stored block). */
function inflateJoined(pieces: Uint8Array[]): Buffer {
  return zlib.inflateRawSync(Buffer.concat([...pieces, Uint8Array.of(1, 0, 0, 0xff, 0xff)]));
}

describe('span encoding', () => {
  it('stores random bytes (compressed or encrypted data, most weights)', () => {
    expect(chooseEncoding(randomBytes(MiB), 6)).toBe('stored');
  });

  it('uses Huffman coding alone for fp16-like tensors', () => {
    expect(chooseEncoding(fp16Like(MiB), 6)).toBe('huffman');
  });

  it('uses full deflate for text and for zero runs', () => {
    expect(chooseEncoding(Buffer.from('name: "bert"\ninput [ { name: "IDS" } ]\n'.repeat(30_000)).subarray(0, MiB), 6)).toBe('deflate');
    expect(chooseEncoding(Buffer.alloc(MiB), 6)).toBe('deflate');
  });

  it('stores everything at level 0', () => {
    expect(chooseEncoding(Buffer.alloc(MiB), 0)).toBe('stored');
  });

  it('decides from the bytes alone, the same way every time', () => {
    const span = Buffer.concat([Buffer.from('header text '.repeat(1000)), fp16Like(MiB - 12_000)]);
    const first = chooseEncoding(span, 6);
    expect(chooseEncoding(Buffer.from(span), 6)).toBe(first);
  });

  it('writes stored blocks that inflate back to the span and are exactly storedSize bytes', () => {
    const span = randomBytes(200_000);
    const stored = storedBlocks(span);
    expect(stored.length).toBe(storedSize(span.length));
    expect(inflateJoined([stored]).equals(span)).toBe(true);
  });

  it('deflates a span that back-references the previous one through the dictionary', async () => {
    const previous = Buffer.from('shared vocabulary line\n'.repeat(3000));
    const span = Buffer.from('shared vocabulary line\n'.repeat(2000));
    const dictionary = previous.subarray(previous.length - 32 * 1024);
    const first = (await deflateSpan(previous, new Uint8Array(0), 6, 'deflate'))!;
    const second = (await deflateSpan(span, dictionary, 6, 'deflate'))!;
    expect(second.length).toBeLessThan(200);
    expect(inflateJoined([first, second]).equals(Buffer.concat([previous, span]))).toBe(true);
  });

  it('gives the same bytes on the thread pool and on the calling thread', async () => {
    const span = Buffer.concat([Buffer.from('text '.repeat(50_000)), fp16Like(400_000)]);
    const dictionary = randomBytes(32 * 1024);
    for (const encoding of ['deflate', 'huffman'] as const) {
      const pooled = (await deflateSpan(span, dictionary, 6, encoding))!;
      expect(Buffer.from(pooled).equals(Buffer.from(deflateSpanSync(span, dictionary, 6, encoding)!))).toBe(true);
    }
  });

  it('declines to deflate a span when the result would not be smaller than storing it', async () => {
    expect(await deflateSpan(randomBytes(100_000), new Uint8Array(0), 6, 'huffman')).toBeUndefined();
    expect(deflateSpanSync(randomBytes(100_000), new Uint8Array(0), 6, 'huffman')).toBeUndefined();
  });
});
