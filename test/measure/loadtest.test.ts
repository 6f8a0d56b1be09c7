// Slow: ~17 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
// `mme-deploy loadtest` against the loopback MME stand-in: the hit ratio the endpoint's metrics show agrees with
// plan's prediction within the error the output states; open-loop sending keeps its schedule while the endpoint
// stalls; closed loop, errors by cause, the confirmation and Ctrl-C.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../cli/run-cli';
import { MmeStandIn } from '../stand-in/mme-stand-in';
import { classifier, writeArchives } from '../stand-in/archives';
import { endpointInvoker, ModelInvoker } from '../../lib/measure/invoker';
import { LoadTarget, runLoadTest } from '../../lib/measure/loadtest';
import { encodeInferenceRequest } from '../../lib/kserve/kserve-codec';
import { loadScaled } from '../load-scale';

let standIn: MmeStandIn;
let dir: string;
const saved = process.env.AWS_ENDPOINT_URL;
const MODELS = Array.from({ length: 12 }, (_, i) => `m${String(i).padStart(2, '0')}.tar.gz`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loadtest-'));
  standIn = new MmeStandIn({ capacity: 4, loadMs: 20 });
  const archives = writeArchives(dir, {
    ...Object.fromEntries(MODELS.map((name) => [name, classifier(name.slice(0, 3))])),
    'oom.tar.gz': classifier('oom'),
  });
  for (const name of MODELS) await standIn.addArchive(name, archives[name]!);
  await standIn.addArchive('oom.tar.gz', archives['oom.tar.gz']!, 'out-of-memory');
  process.env.AWS_ENDPOINT_URL = await standIn.start();
});
afterAll(async () => {
  if (saved === undefined) delete process.env.AWS_ENDPOINT_URL;
  else process.env.AWS_ENDPOINT_URL = saved;
  await standIn.stop();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  standIn.reset();
  standIn.stallUntil = 0;
  standIn.loadMs = 20;
});

const body = encodeInferenceRequest(
  { inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] }] },
  { binary: true },
);
const targetsOf = (names: string[]): LoadTarget[] => names.map((targetModel) => ({ targetModel, ...body }));

describe('loadtest against the stand-in', () => {
  it("measures the hit ratio plan predicts for the same capacity and traffic, within the error it states", async () => {
    // 160 requests/s over 12 models, 4 resident, 47 ms per load: requests for a model keep arriving while it loads.
    // They are misses for the endpoint (ModelCacheHit: "the model was already loaded") and for plan alike, and they
    // count among the requests that waited (ModelLoadingWaitTime), not among the loads (ModelLoadingTime).
    // What decides the cache's behaviour is the number of requests that arrive during one load (rate × load time,
    // 7.5 here), not the time scale: plan's simulation of evenly spaced requests gives the same figures for 80/s and
    // 94 ms per load as for 160/s and 47 ms, so this runs 1,200 requests in 7.5 s rather than 15.
    // Not 50 ms: that is exactly 8 gaps of 6.25 ms, so the request 50 ms after a miss arrives as the load ends, a hit
    // or a miss by a fraction of a millisecond of timer jitter, where plan, given the measured 50.x ms, counts a miss.
    // That tie alone put the stand-in's hit ratio 0.023 above plan's prediction on average over 13 seeds (0.237
    // against 0.214, half the error stated), and plan's prediction jumps from 0.237 to 0.215 between 50.0 and 50.5 ms.
    // At 47 ms (7.5 gaps) the stand-in's hit ratio equals plan's simulation of the same sequence to the third decimal
    // for each of seeds 1 to 10. Seed 4: that sequence gives 0.252, against a prediction of 0.238 ± 0.051 (the mean
    // over 30 other sequences), so the margin is left to the stand-in's timing on a busy machine, not to the draw.
    // The prediction is for the traffic the client was told to send: a run whose requests left more than half a load
    // (23.5 ms) late at p99 (a starved event loop, which bunches them) is run again, up to three runs in all, and the
    // run that kept its schedule best is the one checked. Six runs within the whole suite: p99 lags of 12-23 ms were
    // 0.25-0.28 of the error from plan (0.26 on a quiet machine), 39-63 ms were 0.69-0.82.
    const keptMs = 47 / 2;
    // The JSON report, as the other tests here read it.
    let report;
    for (let attempt = 0; attempt < 3 && !(report && report.sendLag.p99 <= keptMs); attempt++) {
      standIn.reset();
      standIn.loadMs = 47;
      const run = await runCli([
        'loadtest', '--endpoint', 'mme', ...MODELS, '--traffic', 'zipf:1', '--rate', '160', '--requests', '1200',
        '--seed', '4', '--warmup', '0', '--resident', '4', '--metrics-wait', '0', '--yes', '--json',
      ]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const ran = JSON.parse(run.stdout);
      expect(ran.sendLag.count).toBe(1200);
      if (!report || ran.sendLag.p99 < report.sendLag.p99) report = ran;
    }
    expect(report.sent).toBe(1200);
    expect(report.overall.requests).toBe(1200);
    const { observed, prediction } = report.cache;
    expect(observed.invocations).toBe(1200);
    expect(observed.maxLoadedModels).toBe(4);
    // Requests did come while a load was in flight: more waited than there were loads, and they waited less.
    expect(observed.waited).toBeGreaterThan(observed.loads);
    expect(observed.waited).toBe(observed.invocations - observed.hits);
    expect(observed.meanLoadWaitSeconds).toBeLessThan(observed.meanLoadSeconds);
    // A load takes its 47 ms at least (more when the machine is busy); plan is given what it really took.
    expect(observed.meanLoadSeconds).toBeGreaterThanOrEqual(0.047);
    expect(report.coldSeconds).toBe(observed.meanLoadSeconds);
    // The error the output states: two standard deviations of the hit ratio over 30 simulated runs of this length.
    expect(prediction.runs).toBe(30);
    expect(prediction.hitRatioError).toBeGreaterThan(0);
    expect(prediction.hitRatioError).toBeLessThan(0.1);
    expect(Math.abs(observed.hitRatio - prediction.hitRatio)).toBeLessThanOrEqual(prediction.hitRatioError);
    // Loads and requests that waited are predicted with their own errors (the output's verdicts); both are counted.
    expect(prediction.loadsError).toBeGreaterThan(0);
    expect(prediction.waited).toBeGreaterThan(prediction.loads);
    // Not a trivial agreement: some requests missed, some hit.
    expect(observed.hitRatio).toBeGreaterThan(0.05);
    expect(observed.hitRatio).toBeLessThan(0.95);
  }, 60_000);

  it('says so when the prediction is for another capacity than the endpoint has', async () => {
    // 300 requests/s: 1 s of sending; with 10 of 12 models resident against the endpoint's 4, the hit ratios stay
    // far apart at any rate and length (about 0.9 against 0.4, each within a few hundredths).
    const run = await runCli([
      'loadtest', '--endpoint', 'mme', ...MODELS, '--traffic', 'zipf:1', '--rate', '300', '--requests', '300',
      '--warmup', '0', '--resident', '10', '--metrics-wait', '0', '--yes',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^cache hit ratio +0\.\d{3} +0\.\d{3} ± 0\.\d{3} +differs$/m);
    expect(run.stdout).toMatch(/^max loaded models +4 +10$/m);
  }, 60_000);

  it('keeps the open-loop schedule while the endpoint stalls, and counts the stall in the latency', async () => {
    const invoker = await endpointInvoker({ endpoint: 'mme', maxSockets: 4096 });
    const stallMs = 600;
    // When the stall really began (a timer is late on a busy machine), on the wall clock.
    let stallFrom = Infinity;
    const timer = setTimeout(() => {
      stallFrom = Date.now();
      standIn.stallUntil = stallFrom + stallMs;
    }, 500);
    try {
      const result = await runLoadTest(invoker, {
        targets: targetsOf(['m00.tar.gz']),
        weights: [1],
        mode: { kind: 'open', rate: 100 },
        // Sending goes on 1.5 s after the stall is due: a timer up to 1.25 s late still leaves the window read below
        // inside the run.
        durationSeconds: 2,
        keepRecords: true,
      });
      expect(result.sent).toBe(200);
      const stallAt = stallFrom - result.startedAt.getTime();
      // The requests meant to leave in the first half of the stall (100 req/s for 200 ms).
      const during = result.records!.filter((r) => r.intendedMs >= stallAt + 50 && r.intendedMs < stallAt + 250);
      expect(during.length).toBeGreaterThanOrEqual(19);
      // Sent on schedule, each before the endpoint answered any of them: a client held back by the stall (one that
      // waits for answers before sending more) could not have. An order of events, not a time limit.
      const firstAnswer = Math.min(...during.map((r) => r.intendedMs + r.latencyMs));
      for (const r of during) expect(r.sentMs).toBeLessThan(firstAnswer);
      // The first of them waited out most of the stall, measured from when it was meant to leave.
      expect(during[0]!.latencyMs).toBeGreaterThan(stallMs - 250);
      expect(result.overall.latency.p99).toBeGreaterThan(stallMs - 250);
      expect(result.overall.errors).toEqual({});
    } finally {
      clearTimeout(timer);
      invoker.close();
    }
  });

  it('runs a closed loop to the request count and counts errors by cause with their explanation', async () => {
    const invoker = await endpointInvoker({ endpoint: 'mme', maxSockets: 4 });
    try {
      const result = await runLoadTest(invoker, {
        targets: targetsOf(['m00.tar.gz', 'oom.tar.gz']),
        weights: [3, 1],
        mode: { kind: 'closed', concurrency: 4 },
        requests: 200,
      });
      expect(result.overall.requests).toBe(200);
      const oom = result.perTarget[1]!;
      expect(oom.errors['ModelError 507']).toBe(oom.requests);
      expect(oom.latency.count).toBe(0);
      expect(result.perTarget[0]!.errors).toEqual({});
      expect(result.failureExamples['ModelError 507']!.message).toContain('Out of GPU or host memory loading oom.tar.gz');
    } finally {
      invoker.close();
    }
  });

  it('stops sending when aborted and reports what was measured', async () => {
    const endpoint: ModelInvoker = await endpointInvoker({ endpoint: 'mme' });
    const abort = new AbortController();
    // Aborted at the 50th request, not after a time: a late timer on a busy machine would let more through.
    let calls = 0;
    const invoker: ModelInvoker = {
      ...endpoint,
      invoke: (...args) => {
        if (++calls === 50) abort.abort();
        return endpoint.invoke(...args);
      },
    };
    try {
      const result = await runLoadTest(invoker, {
        targets: targetsOf(['m00.tar.gz']),
        weights: [1],
        mode: { kind: 'open', rate: 100 },
        durationSeconds: 30,
        signal: abort.signal,
      });
      expect(result.interrupted).toBe(true);
      // The 50th, and those due at the same moment (sent together when the loop wakes late), of 3,000 planned.
      expect(result.sent).toBeGreaterThanOrEqual(50);
      expect(result.sent).toBeLessThan(50 + loadScaled(100));
      expect(result.overall.requests).toBe(result.sent - result.abandoned);
    } finally {
      endpoint.close();
    }
  });

  it('gives up on answers still missing a moment after an interruption, and says how many', async () => {
    const invoker: ModelInvoker = await endpointInvoker({ endpoint: 'mme' });
    const abort = new AbortController();
    standIn.stallUntil = Date.now() + 20_000;
    setTimeout(() => abort.abort(), 400);
    const started = Date.now();
    try {
      const result = await runLoadTest(invoker, {
        targets: targetsOf(['m00.tar.gz']),
        weights: [1],
        mode: { kind: 'open', rate: 50 },
        durationSeconds: 30,
        signal: abort.signal,
        drainMs: 300,
      });
      // 400 ms, then 300 ms of grace: the run does not wait out the 20 s stall (a hang would).
      expect(Date.now() - started).toBeLessThan(loadScaled(5_000));
      expect(result.interrupted).toBe(true);
      expect(result.abandoned).toBe(result.sent);
      expect(result.overall.requests).toBe(0);
    } finally {
      invoker.close();
    }
  });

  it('asks before sending more than 1,000 invocations, and sends nothing without an answer', async () => {
    const run = await runCli(['loadtest', '--endpoint', 'mme', '--rate', '100', '--duration', '60']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('This sends about 7000 invocations to endpoint mme (warm-up included); they are billed.');
    expect(run.stderr).toContain('Refusing to send about 7000 invocations without confirmation: stdin is not a terminal. Pass --yes.');
    expect(standIn.invocations.size).toBe(0);
  });

  it('writes the raw per-request records with --csv', async () => {
    const csv = join(dir, 'records.csv');
    const run = await runCli(['loadtest', '--endpoint', 'mme', 'm00.tar.gz', '--concurrency', '2', '--requests', '20', '--warmup', '0',
      '--metrics-wait', '0', '--csv', csv, '--yes']);
    expect(run.code).toBe(0);
    const lines = readFileSync(csv, 'utf8').trim().split('\n');
    expect(lines[0]).toBe('sequence,target_model,intended_ms,sent_ms,latency_ms,ok,cause,warmup');
    expect(lines).toHaveLength(21);
    expect(lines[1]).toMatch(/^0,"m00\.tar\.gz",[\d.]+,[\d.]+,[\d.]+,true,,false$/);
    const again = await runCli(['loadtest', '--endpoint', 'mme', 'm00.tar.gz', '--concurrency', '2', '--requests', '5', '--csv', csv,
      '--yes']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('exists; choose another file name or add --force');
  });

  it('refuses a usage error before sending anything', async () => {
    const both = await runCli(['loadtest', '--endpoint', 'mme', '--rate', '1', '--concurrency', '1', '--requests', '1']);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('mme-deploy: Give either --rate REQUESTS_PER_SECOND (open loop) or --concurrency N (closed loop).\n');
    const traffic = await runCli(['loadtest', '--endpoint', 'mme', '--rate', '1', '--requests', '1', '--traffic', 'zipf:x']);
    expect(traffic.code).toBe(2);
    expect(standIn.invocations.size).toBe(0);
  });
});
