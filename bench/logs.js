#!/usr/bin/env node
// Log parser throughput: a recorded-looking log of a three-instance multi-model endpoint (bench/endpoint-log-fixture.js:
// pings, requests, loads, failures with tracebacks, evictions, a scale-in), parsed into events as `mme-deploy logs`
// does after reading it from CloudWatch. Prints the median time per log and lines/s, and checks the events found
// against the ones the log holds; then the whole `mme-deploy logs` process reading the 10,000 lines from a local
// CloudWatch Logs stand-in in pages of 1,000. Target: 10,000 lines in < 1 s. Needs `npm run build`.
'use strict';
const { spawn } = require('node:child_process');
const { mkdtempSync, rmSync } = require('node:fs');
const { createServer } = require('node:http');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { built } = require('./measure');
const { generateEndpointLog } = require('./endpoint-log-fixture');

const { parseEndpointLog } = require(built('lib/logs/endpoint-log-parser.js'));
const runs = Number(process.env.RUNS ?? 15);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

console.log(`endpoint log parsing, median of ${runs} runs (after 2 warm-up runs):`);
let worst10k = 0;
for (const [lines, escaped] of [
  [10_000, true],
  [10_000, false],
  [100_000, true],
]) {
  const { records, expected } = generateEndpointLog({ lines, escaped, seed: 7 });
  const times = [];
  let events = [];
  for (let i = 0; i < runs + 2; i++) {
    const start = process.hrtime.bigint();
    events = parseEndpointLog(records);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (i >= 2) times.push(ms);
  }
  const ms = median(times);
  if (lines === 10_000) worst10k = Math.max(worst10k, ms);
  const failures = events.filter((e) => e.failure).length;
  const ok = events.length === expected.length ? 'as many as the log holds' : `MISMATCH: ${expected.length} in the log`;
  console.log(
    `  ${String(records.length).padStart(7)} lines, 3 instances, ${escaped ? 'escaped' : 'raw    '}  ${ms.toFixed(1).padStart(7)} ms  ` +
      `${Math.round(records.length / (ms / 1000)).toLocaleString('en-US').padStart(10)} lines/s  ` +
      `${events.length} events (${failures} failures, ${ok})`,
  );
}
console.log(`target: 10,000 lines in < 1000 ms -> ${worst10k < 1000 ? 'met' : 'NOT met'} (worst ${worst10k.toFixed(1)} ms)`);

// ---- the whole command, against a local stand-in for CloudWatch Logs ----
const { records } = generateEndpointLog({ lines: 10_000, seed: 7 });
const PAGE = 1000;
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    const token = Number(JSON.parse(body).nextToken ?? 0);
    const events = records
      .slice(token, token + PAGE)
      .map((r) => ({ logStreamName: r.stream, timestamp: r.timestamp, message: r.message, eventId: r.eventId }));
    const next = token + PAGE < records.length ? { nextToken: String(token + PAGE) } : {};
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify({ events, ...next }));
  });
});
/** Runs the CLI as its own process (the stand-in answers from this one, so the wait must not block). */
function runCli(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

server.listen(0, '127.0.0.1', async () => {
  const home = mkdtempSync(join(tmpdir(), 'bench-logs-'));
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_REGION: 'us-east-1',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: `http://127.0.0.1:${server.address().port}`,
    AWS_ENDPOINT_URL_SAGEMAKER: `http://127.0.0.1:${server.address().port}`,
  };
  const bin = built('bin/mme-deploy.js');
  const since = new Date(records[0].timestamp).toISOString();
  const wall = [];
  let lines = 0;
  for (let i = 0; i < 7; i++) {
    const start = process.hrtime.bigint();
    const run = await runCli([bin, 'logs', '--endpoint', 'bench', '--since', since, '--json'], env);
    if (run.status !== 0) throw new Error(`mme-deploy logs exited ${run.status}: ${run.stderr}`);
    wall.push(Number(process.hrtime.bigint() - start) / 1e6);
    lines = run.stdout.trimEnd().split('\n').length;
  }
  rmSync(home, { recursive: true, force: true });
  server.close();
  const ms = median(wall.slice(1));
  console.log(
    `mme-deploy logs (a process: start, ${Math.ceil(records.length / PAGE)} FilterLogEvents pages from 127.0.0.1, parse, --json): ` +
      `${records.length} lines -> ${lines} events in ${ms.toFixed(0)} ms (median of 6) -> ${ms < 1000 ? 'met' : 'NOT met'}`,
  );
});
