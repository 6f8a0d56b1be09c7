// CRC-32 (the gzip trailer's checksum), incrementally over a stream of chunks.

import * as zlib from 'node:zlib';

let table: Uint32Array | undefined;

/**
 * CRC-32 of `data` continuing from `previous` (0 to start). Uses zlib's own (Node >= 20.15); older Node 20
 * releases fall back to a table-driven version that is slower but equal.
 */
export function crc32(data: Uint8Array, previous = 0): number {
  const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  if (native) return native(data, previous);
  table ??= makeTable();
  let crc = ~previous >>> 0;
  for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

function makeTable(): Uint32Array {
  const entries = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    entries[n] = c >>> 0;
  }
  return entries;
}
