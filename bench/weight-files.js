// Files shaped like model weights, for the benchmarks that need a big repository (package, push).
'use strict';
const { randomFillSync } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

/** Writes `sizeMib` MiB to `file` in 4 MiB chunks, each filled by `fill(buffer)`. */
function writeLarge(file, sizeMib, fill) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.allocUnsafe(4 << 20);
  try {
    for (let written = 0; written < sizeMib << 20; written += chunk.length) {
      fill(chunk);
      fs.writeSync(fd, chunk, 0, Math.min(chunk.length, (sizeMib << 20) - written));
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Incompressible bytes, like most trained weights. */
function fillRandom(buffer) {
  randomFillSync(buffer);
}

// fp16 weights of a trained layer: random sign and mantissa, exponents clustered around 2^-4 (|w| ~ 0.01-0.2).
const EXPONENTS = [10, 11, 11, 12, 12, 12, 13, 13, 13, 13, 13, 14, 14, 14, 14, 15];
function fillFp16(buffer) {
  randomFillSync(buffer);
  for (let i = 1; i < buffer.length; i += 2) {
    const r = buffer[i];
    buffer[i] = (r & 0x83) | (EXPONENTS[(r >> 2) & 15] << 2);
  }
}

function mib(bytes) {
  return (bytes / (1 << 20)).toFixed(1);
}

module.exports = { writeLarge, fillRandom, fillFp16, mib };
