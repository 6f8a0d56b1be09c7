#!/usr/bin/env node
// Startup cost of the CLI against bare Node, measured in the same run: `node -e 0`, `mme-deploy --help` and
// `mme-deploy validate` on a one-model repository. Target: both within 1.5x of bare Node. Needs `npm run build`.
'use strict';
const { spawnSync } = require('node:child_process');
const { mkdtempSync, mkdirSync, writeFileSync, rmSync, existsSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const bin = join(__dirname, '..', 'dist', 'bin', 'mme-deploy.js');
if (!existsSync(bin)) {
  console.error('dist/bin/mme-deploy.js is missing: run `npm run build` first.');
  process.exit(2);
}
const repo = mkdtempSync(join(tmpdir(), 'mme-startup-'));
mkdirSync(join(repo, 'm', '1'), { recursive: true });
writeFileSync(join(repo, 'm', '1', 'model.onnx'), ''); // an empty stand-in: validate reads model.onnx, and takes an empty one as a stand-in
writeFileSync(
  join(repo, 'm', 'config.pbtxt'),
  'name: "m"\nbackend: "onnxruntime"\nmax_batch_size: 8\ninput [ { name: "x" data_type: TYPE_FP32 dims: [ 3 ] } ]\n' +
    'output [ { name: "y" data_type: TYPE_FP32 dims: [ 3 ] } ]\n',
);

const runs = Number(process.env.RUNS ?? 25);
const cases = [
  ['node -e 0', ['-e', '0']],
  ['mme-deploy --help', [bin, '--help']],
  ['mme-deploy validate (1 model)', [bin, 'validate', repo]],
];
const times = new Map(cases.map(([name]) => [name, []]));
// Interleave the cases so that load on the machine affects all of them alike.
for (let i = 0; i < runs + 2; i++) {
  for (const [name, args] of cases) {
    const start = process.hrtime.bigint();
    const result = spawnSync(process.execPath, args, { stdio: 'ignore' });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (result.status !== 0) throw new Error(`${name} exited ${result.status}`);
    if (i >= 2) times.get(name).push(ms); // two warm-up rounds
  }
}
rmSync(repo, { recursive: true, force: true });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(times.get('node -e 0'));
console.log(`startup, median of ${runs} runs each (interleaved):`);
for (const [name] of cases) {
  const m = median(times.get(name));
  console.log(`  ${name.padEnd(32)} ${m.toFixed(1).padStart(7)} ms   ${(m / base).toFixed(2)}x bare node`);
}
const worst = Math.max(...cases.slice(1).map(([name]) => median(times.get(name)) / base));
console.log(`target: within 1.5x of bare node -> ${worst <= 1.5 ? 'met' : 'NOT met'} (worst ${worst.toFixed(2)}x)`);
