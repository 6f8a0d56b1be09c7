#!/usr/bin/env node
// Benchmark for building an invoke request (issue 27.11): encoding speed of the KServe codec for a request around
// InvokeEndpoint's 6 MiB limit, JSON and binary, and how long refusing a 7 MiB request takes (sizes are checked
// before encoding). Target: at least 100 MB/s of body encoded.
// Usage: npm run build && node bench/invoke-encode.js [--elements 1800000]

'use strict';

const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');

const ROOT = path.resolve(__dirname, '..');
const CODEC = path.join(ROOT, 'dist/lib/kserve/kserve-codec.js');
const BUILDER = path.join(ROOT, 'dist/lib/kserve/invoke-request.js');
const args = process.argv.slice(2);
const elements = Number(args[args.indexOf('--elements') + 1] || 1_800_000) || 1_800_000;
const LIMIT = 6 * 1024 * 1024;

async function main() {
  for (const file of [CODEC, BUILDER]) {
    if (!fs.existsSync(file)) {
      console.error(`${path.relative(ROOT, file)} is missing: run \`npm run build\` first.`);
      process.exit(2);
    }
  }
  const { encodeInferenceRequest } = require(CODEC);
  const { buildInvokeRequest } = require(BUILDER);
  const data = Array.from({ length: elements }, () => Math.random());
  const request = { inputs: [{ name: 'x', datatype: 'FP32', shape: [1, elements], data }] };
  for (const binary of [false, true]) {
    const best = fastest(() => encodeInferenceRequest(request, { binary }));
    const mb = best.value.body.length / 1e6;
    console.log(
      `encode ${binary ? 'binary' : 'JSON  '} ${elements} FP32: ${mb.toFixed(1)} MB in ${best.ms.toFixed(0)} ms ` +
        `(${(mb / (best.ms / 1000)).toFixed(0)} MB/s, best of 3)`,
    );
  }
  // The CLI's path: a JSON input file of ~7 MiB, refused against the 6 MiB limit.
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mme-bench-invoke-'));
  try {
    const count = Math.ceil((7 * 1024 * 1024) / 19);
    fs.writeFileSync(path.join(work, 'x.json'), JSON.stringify(data.slice(0, count)));
    const size = fs.statSync(path.join(work, 'x.json')).size;
    const started = process.hrtime.bigint();
    let outcome = 'accepted';
    try {
      const spec = { inputs: ['x=@x.json'], shape: `1,${count}`, datatype: 'FP32' };
      await buildInvokeRequest(spec, undefined, { cwd: work, maxBytes: LIMIT });
    } catch (err) {
      outcome = `refused: ${err.message}`;
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    console.log(`--input of ${(size / 1024 / 1024).toFixed(1)} MiB JSON (${count} FP32) against 6 MiB: ${ms.toFixed(0)} ms, ${outcome}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const load = os.loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(`machine: ${os.cpus().length} cores, node ${process.version}, load average ${load}`);
}

function fastest(fn) {
  let best;
  for (let i = 0; i < 3; i++) {
    const started = process.hrtime.bigint();
    const value = fn();
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (!best || ms < best.ms) best = { value, ms };
  }
  return best;
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
