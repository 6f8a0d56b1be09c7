#!/usr/bin/env node
// Model-file reading cost for the TensorFlow and OpenVINO readers: writes a 100 MB GraphDef (one Const, then 1,000
// Consts), a 1 GB GraphDef, a SavedModel whose graph holds 100 MB of constants, and an OpenVINO model.xml of 20,000
// layers, then prints how long reading the interface takes and how many bytes it reads. Target: at most 20 ms per
// 100 MB of model file (the weights skipped, never read whole; an IR's weights are in model.bin, never opened).
// Needs `npm run build`, python3 with protobuf and protoc (test/model-files/make_model_files.py writes the files).
'use strict';
const { spawnSync } = require('node:child_process');
const { closeSync, existsSync, fstatSync, mkdtempSync, openSync, readSync, rmSync, statSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const dist = join(__dirname, '..', 'dist');
if (!existsSync(join(dist, 'lib', 'model-files', 'tensorflow.js'))) {
  console.error('dist/ is missing: run `npm run build` first.');
  process.exit(2);
}
const { readGraphDef, readSavedModel } = require(join(dist, 'lib', 'model-files', 'tensorflow.js'));
const { readOpenVinoModel } = require(join(dist, 'lib', 'model-files', 'openvino.js'));

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
    spec: { format: 'openvino', layers: 20000, inputs: [['x', 'FP32', [-1, 3, 224, 224]]], outputs: [['y', 'FP32', [-1, 1000]]] },
  },
];

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
  const jobs = Object.fromEntries(files.map((f) => [join(dir, f.file), f.spec]));
  const made = spawnSync(python, [join(__dirname, '..', 'test', 'model-files', 'make_model_files.py')], {
    input: JSON.stringify(jobs),
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (made.status !== 0) throw new Error(`make_model_files.py failed: ${made.stderr}`);
  console.log('Model-file read benchmark (best of 5 runs per file; the page cache is warm after the file was written)');
  for (const f of files) {
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
