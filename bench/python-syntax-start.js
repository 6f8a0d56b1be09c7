#!/usr/bin/env node
// CPU of one model.py syntax check (lib/python-auto-complete/syntax-check.ts): the checker's python started, one small
// source parsed, its answer read, against a bare `python -I -S -B -c 0` of the same interpreter. Every `validate` of a
// repository with python models pays it once (and the suite ~190 times). Target: within 1.5x of the bare start.
// RUNS (default 40) checks each, after one warm-up; children's CPU from /proc/self/stat. The interpreter:
// MME_DEPLOY_PYTHON, else python3, started by its own path, which the warm-up's answer names (a version manager's shim
// is run once, as the check itself then does). Needs `npm run build`.
'use strict';
const { spawnSync } = require('node:child_process');
const { built, childrenCpuSeconds } = require('./measure');

const { checkPythonSyntax } = require(built('lib/python-auto-complete/syntax-check.js'));
const runs = Number(process.env.RUNS ?? 40);
/** CPU of the children waited for so far, in ms. */
const childrenMs = () => childrenCpuSeconds() * 1000;
const SOURCE = 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n';
// A source no earlier check sent: the check answers one it already found valid from memory, starting no python.
const jobsOf = (run) => [{ name: 'model.py', source: Buffer.from(`# run ${run}\n${SOURCE}`) }];

(async () => {
  const first = await checkPythonSyntax(jobsOf(-1), { pythonVersion: '3.10' });
  if (!first.ran) {
    console.error(`${first.python} could not run the check: ${first.reason}`);
    process.exit(2);
  }
  const python = first.executable;
  let start = childrenMs();
  for (let i = 0; i < runs; i++) await checkPythonSyntax(jobsOf(i), { pythonVersion: '3.10', python });
  const check = (childrenMs() - start) / runs;
  start = childrenMs();
  for (let i = 0; i < runs; i++) spawnSync(python, ['-I', '-S', '-B', '-c', '0']);
  const bare = (childrenMs() - start) / runs;
  console.log(`${python} (Python ${first.version}), ${runs} runs each`);
  console.log(`  bare start (-I -S -B -c 0): ${bare.toFixed(1)} ms of CPU`);
  console.log(`  one syntax check:           ${check.toFixed(1)} ms of CPU (${(check / bare).toFixed(2)}x the bare start; target 1.5x)`);
})();
