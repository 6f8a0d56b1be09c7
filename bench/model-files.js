#!/usr/bin/env node
// Model-file reading cost for the TensorFlow and OpenVINO readers: writes a 100 MB GraphDef (one Const, then 1,000
// Consts), a 1 GB GraphDef, a SavedModel whose graph holds 100 MB of constants, and OpenVINO model.xml files of 20,000
// and 470,000 layers (4.3 and 100 MiB), then prints how long reading the interface takes and how many bytes it reads;
// each IR is followed by a baseline measured in the same run (read the file and search it for one word). Target: at
// most 20 ms per 100 MB of model file (the weights skipped, never read whole; an IR's weights are in model.bin, never
// opened). `ONLY=model.xml node bench/model-files.js` runs the files whose name holds that text.
// Needs `npm run build`, python3 with protobuf and protoc (test/model-files/make_model_files.py writes the files).
'use strict';
const { spawnSync } = require('node:child_process');
const { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync, statSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { built } = require('./measure');

const { readGraphDef, readSavedModel } = require(built('lib/model-files/tensorflow.js'));
const { readOpenVinoModel } = require(built('lib/model-files/openvino.js'));

const python = process.env.MME_DEPLOY_TEST_PYTHON ?? '/usr/bin/python3';
const dir = mkdtempSync(join(tmpdir(), 'mme-bench-model-files-'));
const MB = 1024 * 1024;
const nodes = [
  ['input', 'Placeholder'],
  ['logits', 'MatMul'],
  ['probs', 'Softmax'],
];
const signature = {
  serving_default: { inputs: [['x', 'x:0', 'DT_FLOAT', [-1, 224, 224, 3]]], outputs: [['y', 'Identity:0', 'DT_FLOAT', [-1, 1000]]] },
};
const files = [
  { name: 'graphdef one Const', file: 'one.graphdef', read: readGraphDef, spec: { format: 'graphdef', nodes, constBytes: 100 * MB } },
  {
    name: 'graphdef 1,000 Consts',
    file: 'many.graphdef',
    read: readGraphDef,
    spec: { format: 'graphdef', nodes, constBytes: 100 * MB, consts: 1000 },
  },
  { name: 'graphdef 1 GB', file: 'big.graphdef', read: readGraphDef, spec: { format: 'graphdef', nodes, constBytes: 1024 * MB } },
  {
    name: 'saved_model.pb',
    file: 'saved_model.pb',
    read: readSavedModel,
    spec: { format: 'savedmodel', graphBytes: 100 * MB, metaGraphs: [{ tags: ['serve'], signatures: signature }] },
  },
  {
    name: 'model.xml 20,000 layers',
    file: 'model.xml',
    read: readOpenVinoModel,
    openvino: true,
    spec: { format: 'openvino', layers: 20000, inputs: [['x', 'FP32', [-1, 3, 224, 224]]], outputs: [['y', 'FP32', [-1, 1000]]] },
  },
  {
    // A 20,000-layer IR's figure is mostly the reader's fixed cost; this one shows what a big IR adds.
    name: 'model.xml 470,000 layers',
    file: 'big-model.xml',
    read: readOpenVinoModel,
    spec: { format: 'openvino', layers: 470000, inputs: [['x', 'FP32', [-1, 3, 224, 224]]], outputs: [['y', 'FP32', [-1, 1000]]] },
    openvino: true,
  },
];
// What the machine does in the same run: read the file a chunk at a time and search it for one word (the least an IR
// search can do), so a figure taken under load can be compared.
const CHUNK = 256 * 1024;
function readAndSearch(source) {
  const buffer = Buffer.allocUnsafe(CHUNK);
  const word = Buffer.from('Result');
  let hits = 0;
  for (let position = 0; position < source.size; position += CHUNK) {
    const view = buffer.subarray(0, source.read(buffer, CHUNK, position));
    for (let i = view.indexOf(word); i >= 0; i = view.indexOf(word, i + 1)) hits++;
  }
  return { ok: hits >= 0 };
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

function main() {
  const chosen = files.filter((f) => !process.env.ONLY || f.name.includes(process.env.ONLY));
  const jobs = Object.fromEntries(chosen.map((f) => [join(dir, f.file), f.spec]));
  const made = spawnSync(python, [join(__dirname, '..', 'test', 'model-files', 'make_model_files.py')], {
    input: JSON.stringify(jobs),
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (made.status !== 0) throw new Error(`make_model_files.py failed: ${made.stderr}`);
  console.log('Model-file read benchmark (best of 5 runs per file; the page cache is warm after the file was written)');
  const runs = chosen.flatMap((f) => (f.openvino ? [f, { ...f, name: '  baseline: read + indexOf', read: readAndSearch }] : [f]));
  for (const f of runs) {
    const path = join(dir, f.file);
    const size = statSync(path).size;
    let best = Infinity;
    let bytesRead = 0;
    for (let i = 0; i < 5; i++) {
      const source = open(path);
      const start = process.hrtime.bigint();
      const result = f.read(source);
      best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6);
      bytesRead = source.bytesRead;
      source.close();
      if (!result.ok) throw new Error(`${f.name}: ${result.reason}`);
    }
    const per100 = (best / (size / (100 * MB))).toFixed(3);
    console.log(
      `  ${f.name.padEnd(24)} ${(size / MB).toFixed(1).padStart(7)} MiB: read ${best.toFixed(2)} ms ` +
        `(${per100} ms per 100 MiB), ${bytesRead} bytes read (${((100 * bytesRead) / size).toFixed(4)}% of the file)`,
    );
  }
  console.log("  target: <= 20 ms per 100 MiB; protobuf weights never read whole (an IR holds no weights: searched, not parsed)");
}

try {
  main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
