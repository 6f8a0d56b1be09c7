#!/usr/bin/env node
// CPU of one model.py syntax check (lib/python-auto-complete/syntax-check.ts): the checker's python started, one small
// source parsed, its answer read, against a bare `python -I -S -B -c 0` of the same interpreter. Every `validate` of a
// repository with python models pays it once (and the suite ~190 times). Target: within 1.5x of the bare start.
// RUNS (default 40) checks each, after one warm-up; children's CPU from /proc/self/stat. The interpreter:
// MME_DEPLOY_PYTHON, else python3, started by its own path, which the warm-up's answer names (a version manager's shim
// is run once, as the check itself then does). Needs `npm run build`.
'use strict';
const { spawnSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const { built } = require('./measure');

const { checkPythonSyntax } = require(built('lib/python-auto-complete/syntax-check.js'));
const runs = Number(process.env.RUNS ?? 40);
/** CPU of the children waited for so far, in ms (utime and stime are fields 16 and 17, in clock ticks of 10 ms). */
const childrenMs = () => {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
};
const jobs = [{ name: 'model.py', source: Buffer.from('class TritonPythonModel:\n    def execute(self, requests):\n        return []\n') }];

(async () => {
  const first = await checkPythonSyntax(jobs, { pythonVersion: '3.10' });
  if (!first.ran) {
    console.error(`${first.python} could not run the check: ${first.reason}`);
    process.exit(2);
  }
  const python = first.executable;
  let start = childrenMs();
  for (let i = 0; i < runs; i++) await checkPythonSyntax(jobs, { pythonVersion: '3.10', python });
  const check = (childrenMs() - start) / runs;
  start = childrenMs();
  for (let i = 0; i < runs; i++) spawnSync(python, ['-I', '-S', '-B', '-c', '0']);
  const bare = (childrenMs() - start) / runs;
  console.log(`${python} (Python ${first.version}), ${runs} runs each`);
  console.log(`  bare start (-I -S -B -c 0): ${bare.toFixed(1)} ms of CPU`);
  console.log(`  one syntax check:           ${check.toFixed(1)} ms of CPU (${(check / bare).toFixed(2)}x the bare start; target 1.5x)`);
})();
