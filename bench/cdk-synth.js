#!/usr/bin/env node
// `cdk synth` time of the app (bin/app.ts, as cdk.json runs it: tsx) against a bare L1 stack with the same resources
// (bench/cdk-synth-l1-app.ts, built from the app's own template), each a fresh process like `cdk synth` starts.
// Target: the app within 1.5x of the L1 stack. Also prints the app with cdk-nag and with the example models (packed
// once, then cached) for reference. RUNS (default 7) runs each, interleaved; medians.
'use strict';
const { spawnSync } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const root = join(__dirname, '..');
const cdkContext = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')).context;
const work = mkdtempSync(join(tmpdir(), 'mme-bench-synth-'));
const runs = Number(process.env.RUNS ?? 7);

function run(script, context, outdir, extraEnv = {}) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, ['--import', 'tsx', script], {
    cwd: root,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: work,
      CDK_OUTDIR: outdir,
      CDK_CONTEXT_JSON: JSON.stringify({ ...cdkContext, ...context }),
      CDK_VALIDATION: 'false',
      ...extraEnv,
    },
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${script} exited ${result.status}: ${result.stderr}`);
  return ms;
}

// The app's template (no models, no nag) is the L1 twin's input.
const appOut = join(work, 'app');
run('bin/app.ts', { nag: false, modelRepositories: '' }, appOut);
const synthesized = JSON.parse(readFileSync(join(appOut, 'TritonMme.template.json'), 'utf8'));
// The twin's own stack adds the bootstrap-version parameter and rule again.
delete synthesized.Parameters?.BootstrapVersion;
delete synthesized.Rules?.CheckBootstrapVersion;
const template = join(work, 'l1-input.template.json');
writeFileSync(template, JSON.stringify(synthesized));
const resources = Object.keys(synthesized.Resources).length;

const cases = [
  ['bare L1 stack (same resources)', 'bench/cdk-synth-l1-app.ts', {}, { BENCH_TEMPLATE: template }],
  ['mme-deploy app, no nag, no models', 'bin/app.ts', { nag: false, modelRepositories: '' }, {}],
  ['mme-deploy app with cdk-nag', 'bin/app.ts', { modelRepositories: '' }, {}],
  ['mme-deploy app default (nag, example models cached)', 'bin/app.ts', {}, {}],
];
const times = new Map(cases.map(([name]) => [name, []]));
for (let i = 0; i < runs + 1; i++) {
  for (const [name, script, context, env] of cases) {
    const ms = run(script, context, join(work, name.replace(/\W+/g, '-')), env);
    if (i >= 1) times.get(name).push(ms); // one warm-up round (tsx cache, packed archive)
  }
}
rmSync(work, { recursive: true, force: true });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(times.get(cases[0][0]));
console.log(`cdk synth, ${resources} resources, median of ${runs} runs each (fresh process each)`);
for (const [name] of cases) {
  const m = median(times.get(name));
  console.log(`  ${name.padEnd(52)} ${m.toFixed(0).padStart(6)} ms  ${(m / base).toFixed(2)}x`);
}
const ratio = median(times.get(cases[1][0])) / base;
console.log(`target: app (no nag, no models) <= 1.5x the L1 stack: ${ratio <= 1.5 ? 'met' : 'NOT met'} (${ratio.toFixed(2)}x)`);
