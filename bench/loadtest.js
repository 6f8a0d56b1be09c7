#!/usr/bin/env node
// Is the load-test client ever the bottleneck? Against a loopback stand-in of InvokeEndpoint (a child process that
// answers every POST with a small KServe binary+json body), it runs in turn:
//   bare    a bare node:http client loop on a keep-alive pool, open loop at --rate, no signing, no decoding;
//   loadtest `loadtest`'s own engine (runLoadTest + the SigV4-signing invoker), open loop at the same rate;
// then both closed loop with --concurrency requests in flight, for the highest rate each reaches.
// Targets: loadtest sustains >= 2,000 requests/s on 2 cores, and its p99 latency exceeds the bare loop's by < 1 ms.
// Options: --rate 2000 --duration 10 --warmup 2 --concurrency 32 --targets 1 (TargetModels drawn uniformly: each is
// signed once a second, so many TargetModels is the signer's worst case). Needs `npm run build`.
'use strict';

const { spawn } = require('node:child_process');
const { existsSync } = require('node:fs');
const http = require('node:http');
const { join } = require('node:path');
const { numberOption } = require('./measure');

const dist = join(__dirname, '..', 'dist', 'lib');
if (!existsSync(join(dist, 'measure', 'loadtest.js'))) {
  console.error('dist/lib/measure is missing: run `npm run build` first.');
  process.exit(2);
}
const { runLoadTest } = require(join(dist, 'measure', 'loadtest.js'));
const { endpointInvoker } = require(join(dist, 'measure', 'invoker.js'));
const { Latencies } = require(join(dist, 'measure', 'latency.js'));

const rate = numberOption('--rate', 2000);
const duration = numberOption('--duration', 10);
const warmup = numberOption('--warmup', 2);
const concurrency = numberOption('--concurrency', 32);
const sockets = numberOption('--sockets', 256);
const targetCount = numberOption('--targets', 1);

// The stand-in: one process, answers at once. Its response is what Triton sends for one FP32 output of 4 values.
const SERVER = `
const http = require('node:http');
const blob = Buffer.alloc(16);
const header = Buffer.from(JSON.stringify({ model_name: 'm', outputs: [{ name: 'Y', datatype: 'FP32', shape: [1, 4],
  parameters: { binary_data_size: 16 } }] }));
const body = Buffer.concat([header, blob]);
const type = 'application/vnd.sagemaker-triton.binary+json;json-header-size=' + header.length;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'Content-Type': type, 'Content-Length': body.length }); res.end(body); });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

const requestHeader = Buffer.from('{"inputs":[{"name":"X","datatype":"FP32","shape":[1,3],"parameters":{"binary_data_size":12}}],' +
  '"parameters":{"binary_data_output":true}}');
const requestBody = Buffer.concat([requestHeader, Buffer.alloc(12)]);
const contentType = `application/vnd.sagemaker-triton.binary+json;json-header-size=${requestHeader.length}`;

async function main() {
  const server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve) => server.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
  process.env.AWS_ENDPOINT_URL = `http://127.0.0.1:${port}`;
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  process.env.AWS_REGION ??= 'us-east-1';
  try {
    console.log(`loopback stand-in on port ${port}; ${targetCount} TargetModel(s); open loop at ${rate} req/s for ${duration} s ` +
      `after ${warmup} s of warm-up; load average ${require('node:os').loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
    const bareOpen = await bareLoop(port, { kind: 'open', rate });
    const ours = await oursLoop({ kind: 'open', rate });
    const bareClosed = await bareLoop(port, { kind: 'closed', concurrency });
    const oursClosed = await oursLoop({ kind: 'closed', concurrency });
    const row = (name, r) =>
      `${name.padEnd(26)} ${r.throughput.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(3)} ms  p99 ${r.p99.toFixed(3)} ms  ` +
      `max ${r.max.toFixed(1)} ms  send lag p99 ${r.lagP99 === undefined ? '-' : `${r.lagP99.toFixed(3)} ms`}  ` +
      `client CPU ${r.cpuPerRequest.toFixed(1)} µs/req  errors ${r.errors}`;
    console.log(row('bare http, open loop', bareOpen));
    console.log(row('loadtest, open loop', ours));
    console.log(row(`bare http, ${concurrency} in flight`, bareClosed));
    console.log(row(`loadtest, ${concurrency} in flight`, oursClosed));
    console.log(`\nclient overhead at p99 (open loop, loadtest - bare): ${(ours.p99 - bareOpen.p99).toFixed(3)} ms (target < 1 ms)`);
    console.log(`open-loop rate sustained by loadtest: ${ours.throughput.toFixed(0)} of ${rate} req/s (target >= 2000)`);
    console.log(`closed-loop ceiling: loadtest ${oursClosed.throughput.toFixed(0)} req/s, bare ${bareClosed.throughput.toFixed(0)} req/s ` +
      `(ratio ${(oursClosed.throughput / bareClosed.throughput).toFixed(2)})`);
    // On a shared machine absolute figures move with the load; these ratios, measured back to back, move less.
    console.log(`client CPU per request, loadtest / bare: open loop ${(ours.cpuPerRequest / bareOpen.cpuPerRequest).toFixed(2)}, ` +
      `closed loop ${(oursClosed.cpuPerRequest / bareClosed.cpuPerRequest).toFixed(2)}`);
  } finally {
    server.kill();
  }
}

/** loadtest's engine and invoker, as the command runs them. */
async function oursLoop(mode) {
  const invoker = await endpointInvoker({ endpoint: 'bench', maxSockets: mode.kind === 'closed' ? mode.concurrency : sockets });
  const cpu = process.cpuUsage();
  const result = await runLoadTest(invoker, {
    targets: Array.from({ length: targetCount }, (_, i) => ({ targetModel: `m${i}.tar.gz`, body: requestBody, contentType })),
    weights: new Array(targetCount).fill(1),
    mode,
    durationSeconds: duration,
    warmupSeconds: warmup,
  });
  const used = process.cpuUsage(cpu);
  invoker.close();
  const l = result.overall.latency;
  return {
    throughput: result.overall.throughput,
    p50: l.p50,
    p99: l.p99,
    max: l.max,
    lagP99: result.sendLag?.p99,
    cpuPerRequest: (used.user + used.system) / result.sent,
    errors: Object.values(result.overall.errors).reduce((a, b) => a + b, 0),
  };
}

/** The same schedule with a bare node:http request per call: what any client must pay. */
async function bareLoop(port, mode) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: mode.kind === 'closed' ? mode.concurrency : sockets, scheduling: 'lifo' });
  const latencies = new Latencies();
  const lag = new Latencies();
  let sent = 0;
  let counted = 0;
  let errors = 0;
  const warmupMs = warmup * 1000;
  const endMs = warmupMs + duration * 1000;
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const send = (intended) =>
    new Promise((resolve) => {
      sent++;
      const measured = intended >= warmupMs;
      if (measured && mode.kind === 'open') lag.record(now() - intended);
      const req = http.request(
        { host: '127.0.0.1', port, method: 'POST', path: '/endpoints/bench/invocations', agent,
          headers: { 'content-type': contentType, 'content-length': requestBody.length } },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (measured) {
              counted++;
              latencies.record(now() - intended);
            }
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(requestBody);
    });
  const cpu = process.cpuUsage();
  if (mode.kind === 'open') {
    const interval = 1000 / mode.rate;
    const total = Math.ceil(endMs / interval);
    const pending = [];
    await new Promise((done) => {
      let next = 0;
      const tick = () => {
        const at = now();
        while (next < total && next * interval <= at) pending.push(send(next++ * interval));
        if (next >= total) return done();
        setTimeout(tick, Math.max(0, next * interval - now() - 0.5));
      };
      tick();
    });
    await Promise.all(pending);
  } else {
    const worker = async () => {
      while (now() < endMs) await send(now());
    };
    await Promise.all(Array.from({ length: mode.concurrency }, worker));
  }
  const used = process.cpuUsage(cpu);
  agent.destroy();
  const s = latencies.summary();
  return {
    throughput: counted / Math.max(1e-9, (now() - warmupMs) / 1000),
    p50: s.p50,
    p99: s.p99,
    max: s.max,
    lagP99: mode.kind === 'open' ? lag.summary().p99 : undefined,
    cpuPerRequest: (used.user + used.system) / sent,
    errors,
  };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
