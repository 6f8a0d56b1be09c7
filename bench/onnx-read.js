#!/usr/bin/env node
// ONNX reading cost: writes real ONNX models with python onnx (one 100 MB initializer, 100 MB in 1,000 initializers,
// one 1 GB initializer), then prints how long reading their interface takes and how many bytes it reads.
// Target: at most 20 ms per 100 MB model file, and never the whole file. Needs `npm run build` and python3 with onnx.
'use strict';
const { spawnSync } = require('node:child_process');
const { mkdtempSync, rmSync, statSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { built } = require('./measure');

const { readOnnxModel } = require(built('lib/model-files/onnx.js'));
const { checkOnnxModel } = require(built('lib/repository/onnx-rules.js'));
const { loadRepository } = require(built('lib/repository/validate.js'));

const python = process.env.MME_DEPLOY_TEST_PYTHON ?? '/usr/bin/python3';
const dir = mkdtempSync(join(tmpdir(), 'mme-bench-onnx-'));
const MB = 1024 * 1024;
const models = [
  { name: 'one-100MB', tensors: 1, bytes: 100 * MB },
  { name: 'many-100MB', tensors: 1000, bytes: 100 * MB },
  { name: 'one-1GB', tensors: 1, bytes: 1024 * MB },
];
const script = `
import sys, numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
path, tensors, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n = total // 4 // tensors
inits = [numpy_helper.from_array(np.zeros((n,), dtype=np.float32), f"w{i}") for i in range(tensors)]
nodes = [helper.make_node("Add", ["x" if i == 0 else f"h{i-1}", f"w{i}"], ["y" if i == tensors - 1 else f"h{i}"]) for i in range(tensors)]
g = helper.make_graph(nodes, "bench", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", n])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", n])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, path)
`;

async function main() {
  console.log('ONNX read benchmark (best of 5 runs per file; the page cache is warm after the file was written)');
  for (const m of models) {
    const modelDir = join(dir, m.name, '1');
    require('node:fs').mkdirSync(modelDir, { recursive: true });
    const path = join(modelDir, 'model.onnx');
    const made = spawnSync(python, ['-c', script, path, String(m.tensors), String(m.bytes)], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`python onnx could not write ${m.name}: ${made.stderr}`);
    const size = statSync(path).size;
    let best = Infinity;
    let read;
    for (let i = 0; i < 5; i++) {
      const start = process.hrtime.bigint();
      read = readOnnxModel(path);
      best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6);
    }
    if (!read.ok) throw new Error(`${m.name}: ${read.reason}`);
    // The whole rule: auto-complete and checks, as validate runs it.
    const loaded = (await loadRepository(dir)).models.find((x) => x.name === m.name);
    let bestRule = Infinity;
    for (let i = 0; i < 5; i++) {
      const start = process.hrtime.bigint();
      checkOnnxModel(loaded);
      bestRule = Math.min(bestRule, Number(process.hrtime.bigint() - start) / 1e6);
    }
    const per100 = (best / (size / (100 * MB))).toFixed(3);
    console.log(
      `  ${m.name.padEnd(11)} ${(size / MB).toFixed(0).padStart(5)} MiB, ${String(m.tensors).padStart(4)} initializers: ` +
        `read ${best.toFixed(2)} ms (${per100} ms per 100 MiB), rule ${bestRule.toFixed(2)} ms, ` +
        `${read.model.bytesRead} bytes read (${((100 * read.model.bytesRead) / size).toFixed(4)}% of the file)`,
    );
  }
  console.log('  target: <= 20 ms per 100 MiB and never the whole file');
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dir, { recursive: true, force: true }));

