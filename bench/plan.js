#!/usr/bin/env node
// Benchmark for `mme-deploy plan` (issue 7): 10,000 models and 1,000,000 simulated requests. Prints the wall time
// of the trace generation, of one cache simulation, of the 1..4-instance curve, and of the whole plan as the CLI
// runs it (memory estimates, packing, cost, trace, curve). Target: the whole plan < 5 s on a 2-core machine.
// Usage: npm run build && node bench/plan.js [--models 10000] [--requests 1000000] [--instances 4]

'use strict';

const { built, numberOption } = require('./measure');

const MODELS = numberOption('--models', 10_000);
const REQUESTS = numberOption('--requests', 1_000_000);
const INSTANCES = numberOption('--instances', 4);
const MiB = 1024 * 1024;

function load(module) {
  return require(built(`lib/plan/${module}.js`));
}

/** Wall time, and CPU time of this process: on a shared machine the second says what the code costs. */
function time(label, fn) {
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  const result = fn();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const cpu = process.cpuUsage(cpuStart);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  console.log(`${label.padEnd(52)} ${ms.toFixed(0).padStart(6)} ms wall ${cpuMs.toFixed(0).padStart(6)} ms CPU`);
  return { result, ms };
}

function main() {
  const { seededRandom } = load('seeded-random');
  const { sampleTrace } = load('traffic');
  const { simulateCache } = load('cache-simulator');
  const { planEndpoint } = load('plan');
  const { DEFAULT_COLD_START } = load('load-time');

  // Engines between 50 MiB and 2 GiB, log-uniform: most models small, a few large.
  const random = seededRandom(2026);
  const engineMiB = Array.from({ length: MODELS }, () => Math.round(50 * Math.pow(40, random())));
  const bundles = engineMiB.map((mib, i) => ({
    name: `model-${i}.tar.gz`,
    source: `model-${i}.tar.gz`,
    kind: 'archive',
    archiveBytes: mib * MiB * 0.95,
    archiveBytesEstimated: false,
    extractedBytes: mib * MiB,
    models: [{ name: 'engine', config: { platform: 'tensorrt_plan' }, files: [{ path: '1/model.plan', size: mib * MiB }] }],
  }));
  console.log(`load average ${require('node:os').loadavg()[0].toFixed(1)} on ${require('node:os').cpus().length} cores`);
  console.log(
    `${MODELS.toLocaleString('en-US')} models, ${REQUESTS.toLocaleString('en-US')} requests, ` +
      `zipf:1 traffic, ml.g4dn.xlarge, Node ${process.version}`,
  );

  const weights = Float64Array.from({ length: MODELS }, (_, i) => 1 / (i + 1));
  const { result: trace } = time('trace: 1,000,000 zipf draws + Poisson arrivals', () =>
    sampleTrace(weights, { count: REQUESTS, rps: 100, random: seededRandom(1) }),
  );
  const gpuMiB = engineMiB.map((mib) => mib + 256);
  const input = {
    gpuMiB,
    diskMiB: engineMiB.map((mib) => mib * 1.95),
    coldFromS3Seconds: engineMiB.map((mib) => mib / 50),
    coldFromDiskSeconds: engineMiB.map((mib) => mib / 500),
    gpuCapacityMiB: 15 * 1024,
    diskCapacityMiB: (125 * 1e9) / MiB,
    trace,
    warmupRequests: REQUESTS / 10,
  };
  const { result: one } = time('simulation, 1 instance', () => simulateCache({ ...input, instances: 1 }));
  time(`curve, 1..${INSTANCES} instances`, () => {
    for (let n = 1; n <= INSTANCES; n++) simulateCache({ ...input, instances: n });
  });
  const { result: planned, ms } = time(`whole plan (planEndpoint), ${INSTANCES} instances`, () =>
    planEndpoint(bundles, {
      instanceType: 'ml.g4dn.xlarge',
      region: 'us-east-1',
      instances: INSTANCES,
      traffic: { kind: 'zipf', exponent: 1 },
      rps: 100,
      requests: REQUESTS,
      warmupFraction: 0.1,
      seed: 1,
      coldStart: DEFAULT_COLD_START,
      gpuReserveMiB: 1024,
    }),
  );
  const errors = planned.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new Error(errors[0].message);
  console.log(
    `1 instance: hit ratio ${(one.hitRatio * 100).toFixed(1)} %, ${one.loadsPerHour.toFixed(0)} loads/h; ` +
      `curve hit ratios ${planned.report.simulation.curve.map((p) => `${(p.hitRatio * 100).toFixed(1)} %`).join(', ')}`,
  );
  console.log(`target: whole plan < 5000 ms — ${ms < 5000 ? 'met' : 'NOT met'} (${ms.toFixed(0)} ms)`);
}

main();
