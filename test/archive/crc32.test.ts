// The CRC-32 that writes and checks every gzip trailer: zlib's own where Node has it (>= 20.15), and the table-driven
// fallback that Node 20.0-20.14 (which `engines` allows) run, checked against zlib and the standard check value.

import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';

type Crc32 = (data: Uint8Array, previous?: number) => number;

/** lib/archive/crc32 loaded as on a Node 20 without zlib.crc32. */
function fallbackCrc32(): Crc32 {
  let loaded!: Crc32;
  jest.isolateModules(() => {
    jest.doMock('node:zlib', () => ({ ...jest.requireActual('node:zlib'), crc32: undefined }));
    loaded = (require('../../lib/archive/crc32') as { crc32: Crc32 }).crc32;
  });
  jest.dontMock('node:zlib');
  return loaded;
}

const nativeCrc32 = (zlib as unknown as { crc32: Crc32 }).crc32;

describe('crc32', () => {
  const fallback = fallbackCrc32();
  const { crc32 } = require('../../lib/archive/crc32') as { crc32: Crc32 };

  it('gives the standard check value for "123456789" (0xCBF43926), natively and in the fallback', () => {
    const check = Buffer.from('123456789');
    expect(crc32(check)).toBe(0xcbf43926);
    expect(fallback(check)).toBe(0xcbf43926);
    expect(fallback(new Uint8Array(0))).toBe(0);
  });

  it('agrees with zlib on random data, whole and continued chunk by chunk', () => {
    for (const size of [1, 7, 255, 4096, 65_537]) {
      const data = randomBytes(size);
      const whole = nativeCrc32(data);
      expect(fallback(data)).toBe(whole);
      let running = 0;
      for (let at = 0; at < size; at += 1000) running = fallback(data.subarray(at, at + 1000), running);
      expect(running).toBe(whole);
    }
  });
});
