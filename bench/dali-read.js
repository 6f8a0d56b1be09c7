#!/usr/bin/env node
// Reading cost of a serialized DALI pipeline (model.dali) whose constant is large (fn.constant or a remap table holds
// its values in an argument): writes pipelines of 100 MB and 1 GB, each one Constant operator with that many bytes of
// floats beside an ExternalSource and an output, then prints how long reading the inputs and outputs takes and how
// many bytes it reads. Target: at most 20 ms per 100 MB (the constant is skipped whole, never read).
// Needs `npm run build`.
'use strict';
const { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync, writeSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { built } = require('./measure');

const { daliInputs, readDaliPipeline } = require(built('lib/model-files/dali.js'));

const MB = 1024 * 1024;
const varint = (n) => {
  const out = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return Buffer.from(out);
};
const len = (field, bytes) => Buffer.concat([varint(field * 8 + 2), varint(bytes.length), bytes]);
const text = (field, s) => len(field, Buffer.from(s, 'utf8'));
const num = (field, n) => Buffer.concat([varint(field * 8), varint(n)]);
const arg = (name, field, value) => len(4, Buffer.concat([text(1, name), value === undefined ? Buffer.alloc(0) : field(value)]));

/** Writes a pipeline whose Constant holds `bytes` of packed floats; the big field is written in 16 MiB pieces. */
function writePipeline(path, bytes) {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, num(2, 8));
    const floats = Buffer.concat([varint(3 * 8 + 2), varint(bytes)]);
    const argHead = Buffer.concat([text(1, 'fdata'), floats]);
    const args = Buffer.concat([varint(4 * 8 + 2), varint(argHead.length + bytes)]);
    const opHead = Buffer.concat([text(1, 'Constant'), len(3, Buffer.concat([text(1, 'c'), text(2, 'cpu')]))]);
    const opTail = text(5, 'c');
    const opLength = opHead.length + args.length + argHead.length + bytes + opTail.length;
    writeSync(fd, Buffer.concat([varint(5 * 8 + 2), varint(opLength), opHead, args, argHead]));
    const chunk = Buffer.alloc(16 * MB);
    for (let left = bytes; left > 0; left -= chunk.length) writeSync(fd, chunk, 0, Math.min(chunk.length, left));
    writeSync(fd, opTail);
    const source = Buffer.concat([
      text(1, 'ExternalSource'),
      len(3, Buffer.concat([text(1, 'DALI_INPUT_0'), text(2, 'cpu')])),
      arg('dtype', (v) => num(4, v), 0),
      arg('ndim', (v) => num(4, v), 1),
      text(5, 'DALI_INPUT_0'),
    ]);
    writeSync(fd, len(5, source));
    writeSync(fd, len(7, Buffer.concat([text(1, 'c'), text(2, 'cpu')])));
  } finally {
    closeSync(fd);
  }
}

function open(path) {
  const fd = openSync(path, 'r');
  let bytesRead = 0;
  return {
    size: fstatSync(fd).size,
    read: (buffer, length, position) => {
      const n = readSync(fd, buffer, 0, length, position);
      bytesRead += n;
      return n;
    },
    close: () => closeSync(fd),
    get bytesRead() {
      return bytesRead;
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'mme-bench-dali-'));
try {
  for (const size of [100 * MB, 1024 * MB]) {
    const path = join(dir, `${size / MB}.dali`);
    writePipeline(path, size);
    const times = [];
    let read;
    let source;
    for (let i = 0; i < 5; i++) {
      source = open(path);
      const start = process.hrtime.bigint();
      read = readDaliPipeline(source);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
      source.close();
    }
    if (!read.ok) throw new Error(read.reason);
    const inputs = daliInputs(read.pipeline).map((i) => i.name).join(',');
    const best = Math.min(...times);
    console.log(
      `model.dali ${(source.size / MB).toFixed(0)} MiB: ${best.toFixed(2)} ms (best of 5), read ${source.bytesRead} bytes; ` +
        `inputs ${inputs}, ${read.pipeline.outputs.length} output; ${((best * 100 * MB) / source.size).toFixed(2)} ms per 100 MiB`,
    );
    rmSync(path);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
