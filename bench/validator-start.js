#!/usr/bin/env node
// CPU of starting aws-cdk-lib's template validator (the engine every `cdk synth` with the validation on starts), in a
// fresh process each, as it starts by itself and after reserveValidatorMemory (constructs/validator-memory.ts, what
// bin/app.ts calls before it synthesizes). Prints user and system CPU and the full GCs (--trace-gc) of each. Target: the
// reserve at least halves the engine's start. RUNS (default 1) runs each, interleaved; medians. Needs `npm run build`.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const helper = join(root, 'dist', 'constructs', 'validator-memory.js');
if (!existsSync(helper)) {
  console.error('dist/constructs/validator-memory.js is missing: run `npm run build` first.');
  process.exit(2);
}
const runs = Number(process.env.RUNS ?? 1);

// The child prints the CPU the engine's start took (after the reserve, when asked: the reserve is counted).
const child = (reserve) => `
  const { dirname } = require('node:path');
  const cdkLib = dirname(require.resolve('aws-cdk-lib', { paths: [${JSON.stringify(root)}] }));
  const start = process.cpuUsage();
  ${reserve ? `const r = require(${JSON.stringify(helper)}).reserveValidatorMemory(); if (!r.reserved) throw new Error(r.reason);` : ''}
  const { RegoEngine } = require(require.resolve('@aws/cloudformation-validate', { paths: [cdkLib] }));
  const rules = new RegoEngine({}).listRules().length;
  const cpu = process.cpuUsage(start);
  console.log(JSON.stringify({ user: cpu.user / 1e6, system: cpu.system / 1e6, rules }));
`;

function run(reserve) {
  const result = spawnSync(process.execPath, ['--trace-gc', '-e', child(reserve)], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
    maxBuffer: 64 * 2 ** 20,
  });
  if (result.status !== 0) throw new Error(`the engine did not start: ${result.stderr}`);
  const lines = result.stdout.trim().split('\n');
  return { ...JSON.parse(lines[lines.length - 1]), fullGcs: lines.filter((l) => l.includes('Mark-Compact')).length };
}

const cases = [
  ['engine alone', false],
  ['reserveValidatorMemory, then the engine', true],
];
const results = new Map(cases.map(([name]) => [name, []]));
for (let i = 0; i < runs; i++) for (const [name, reserve] of cases) results.get(name).push(run(reserve));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`aws-cdk-lib's template validator starting, median of ${runs} run(s) each (fresh process each)`);
const cpu = {};
for (const [name] of cases) {
  const rs = results.get(name);
  cpu[name] = median(rs.map((r) => r.user + r.system));
  const line = `${median(rs.map((r) => r.user)).toFixed(2)} s user ${median(rs.map((r) => r.system)).toFixed(2)} s sys`;
  console.log(`  ${name.padEnd(42)} ${line}, ${median(rs.map((r) => r.fullGcs))} full GCs, ${rs[0].rules} rules`);
}
const ratio = cpu[cases[1][0]] / cpu[cases[0][0]];
console.log(`target: the reserve at least halves the start's CPU: ${ratio <= 0.5 ? 'met' : 'NOT met'} (${ratio.toFixed(2)}x)`);
