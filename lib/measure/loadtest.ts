// `loadtest`: traffic over TargetModels as `plan` models it (weights per model, drawn with plan's alias table),
// in open loop (a fixed rate; each request has an intended send time and its latency is counted from that time, so
// a stalled endpoint cannot slow the client down and hide its own stall: no coordinated omission) or closed loop
// (C requests always in flight). A warm-up period is excluded from every figure.

import { setMaxListeners } from 'node:events';
import type { LatencySummary } from './latency';
import { Latencies } from './latency';
import type { InvocationFailure, ModelInvoker } from './invoker';
import { buildAliasTable, sampleAlias } from '../plan/traffic';
import { seededRandom } from '../plan/seeded-random';

export interface LoadTarget {
  readonly targetModel: string;
  readonly body: Uint8Array;
  readonly contentType: string;
}

export type LoadMode =
  /** `rate` requests per second, sent at their intended times whatever the endpoint does. */
  | { readonly kind: 'open'; readonly rate: number }
  /** `concurrency` requests in flight; each sends the next when its answer arrives. */
  | { readonly kind: 'closed'; readonly concurrency: number };

export interface LoadTestOptions {
  readonly targets: readonly LoadTarget[];
  /** Relative traffic per target, in the order of `targets` (plan's trafficWeights). */
  readonly weights: ArrayLike<number>;
  readonly mode: LoadMode;
  /** Seconds measured after the warm-up; this or `requests` is required. */
  readonly durationSeconds?: number;
  /** Requests measured after the warm-up. */
  readonly requests?: number;
  /** Seconds at the start whose requests are sent but not counted. @default 0 */
  readonly warmupSeconds?: number;
  /** Seed of the choice of TargetModel per request. @default 1 */
  readonly seed?: number;
  /** Aborting stops sending; answers already on their way are awaited for `drainMs`, then given up. */
  readonly signal?: AbortSignal;
  /** @default 5000 */
  readonly drainMs?: number;
  /** Keep one record per request (for --json and --csv). @default false */
  readonly keepRecords?: boolean;
  readonly onProgress?: (progress: LoadProgress) => void;
  /** @default 1000 */
  readonly progressIntervalMs?: number;
}

export interface LoadProgress {
  readonly elapsedSeconds: number;
  readonly sent: number;
  readonly completed: number;
  readonly errors: number;
  readonly inFlight: number;
  /** Answers per second over the last interval. */
  readonly rate: number;
  readonly warmingUp: boolean;
}

/** One request. Times are milliseconds since the test started. */
export interface RequestRecord {
  readonly sequence: number;
  readonly targetModel: string;
  /** When the request was meant to be sent (open loop), or when it was sent (closed loop). */
  readonly intendedMs: number;
  readonly sentMs: number;
  /** From the intended time to the whole answer. */
  readonly latencyMs: number;
  readonly ok: boolean;
  readonly cause?: string;
  readonly warmup: boolean;
}

export interface LoadFigures {
  readonly requests: number;
  /** Answers (successes and failures) per second over the measured window. */
  readonly throughput: number;
  /** Latency of successful requests. */
  readonly latency: LatencySummary;
  readonly errors: Readonly<Record<string, number>>;
}

export interface LoadTestResult {
  readonly mode: LoadMode;
  readonly startedAt: Date;
  /** The end of the warm-up: the measured window starts here. */
  readonly measuredFrom: Date;
  readonly endedAt: Date;
  readonly measuredSeconds: number;
  readonly warmupSeconds: number;
  /** Requests sent in all, warm-up included (what the endpoint saw, and was billed for). */
  readonly sent: number;
  readonly interrupted: boolean;
  /** Requests given up on after an interruption (their answers never arrived). */
  readonly abandoned: number;
  readonly overall: LoadFigures;
  readonly perTarget: readonly (LoadFigures & { readonly targetModel: string })[];
  /** Open loop: how late the client sent each request after its intended time (the client's own overhead). */
  readonly sendLag?: LatencySummary;
  /** One explained failure per cause, for the report. */
  readonly failureExamples: Readonly<Record<string, InvocationFailure>>;
  readonly records?: readonly RequestRecord[];
}

class Tally {
  readonly latencies = new Latencies();
  readonly errors = new Map<string, number>();
  requests = 0;

  add(ok: boolean, latencyMs: number, cause?: string): void {
    this.requests++;
    if (ok) this.latencies.record(latencyMs);
    else this.errors.set(cause!, (this.errors.get(cause!) ?? 0) + 1);
  }

  figures(seconds: number): LoadFigures {
    return {
      requests: this.requests,
      throughput: seconds > 0 ? this.requests / seconds : 0,
      latency: this.latencies.summary(),
      errors: Object.fromEntries(this.errors),
    };
  }
}

/** Runs the load test to its end, or until `signal` aborts; never throws for a failed request. */
export async function runLoadTest(invoker: ModelInvoker, options: LoadTestOptions): Promise<LoadTestResult> {
  const { targets, mode } = options;
  if (targets.length === 0) throw new RangeError('no targets');
  if (options.durationSeconds === undefined && options.requests === undefined) throw new RangeError('duration or requests needed');
  const warmupMs = (options.warmupSeconds ?? 0) * 1000;
  const table = buildAliasTable(options.weights);
  const random = seededRandom(options.seed ?? 1);
  const overall = new Tally();
  const perTarget = targets.map(() => new Tally());
  const sendLag = new Latencies();
  const records: RequestRecord[] | undefined = options.keepRecords ? [] : undefined;
  const failureExamples: Record<string, InvocationFailure> = {};
  // One controller for every request: it is aborted only to give up what is still unanswered after an interruption.
  const giveUp = new AbortController();
  // Every request in flight listens to it: thousands of listeners are expected, not a leak.
  setMaxListeners(0, giveUp.signal);
  const inFlight = { size: 0 };
  const stopped = new AbortController();
  const onAbort = () => stopped.abort();
  options.signal?.addEventListener('abort', onAbort);
  if (options.signal?.aborted) stopped.abort();

  const startedAt = new Date();
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  let sent = 0;
  let completed = 0;
  let errors = 0;
  let measuredSent = 0;
  let lastMeasuredEnd = warmupMs;
  const endMs = options.durationSeconds !== undefined ? warmupMs + options.durationSeconds * 1000 : Infinity;
  const wantCounted = options.requests ?? Infinity;

  /** Sends one request; `intended` is its scheduled time (ms since t0). Resolves when it is answered. */
  const send = (intended: number): Promise<void> => {
    const sequence = sent++;
    const index = sampleAlias(table, random);
    const target = targets[index]!;
    const sentMs = now();
    const warmup = intended < warmupMs;
    if (!warmup) measuredSent++;
    if (mode.kind === 'open' && !warmup) sendLag.record(sentMs - intended);
    inFlight.size++;
    return invoker.invoke(target.targetModel, target.body, target.contentType, giveUp.signal).then((outcome) => {
      inFlight.size--;
      if (giveUp.signal.aborted) return;
      const done = now();
      const latencyMs = done - intended;
      completed++;
      const cause = outcome.ok ? undefined : outcome.failure.cause;
      if (!outcome.ok) {
        errors++;
        failureExamples[cause!] ??= outcome.failure;
      }
      if (!warmup) {
        lastMeasuredEnd = Math.max(lastMeasuredEnd, done);
        overall.add(outcome.ok, latencyMs, cause);
        perTarget[index]!.add(outcome.ok, latencyMs, cause);
      }
      records?.push({
        sequence,
        targetModel: target.targetModel,
        intendedMs: intended,
        sentMs,
        latencyMs,
        ok: outcome.ok,
        ...(cause ? { cause } : {}),
        warmup,
      });
    });
  };

  const progressTimer = startProgress(options, () => ({ sent, completed, errors, inFlight: inFlight.size, warmupMs, now }));
  try {
    if (mode.kind === 'open') {
      const interval = 1000 / mode.rate;
      const warmupCount = Math.ceil(warmupMs / interval);
      const total = options.requests !== undefined ? warmupCount + options.requests : Math.ceil(endMs / interval);
      await openLoop(total, interval, now, send, stopped.signal);
    } else {
      const worker = async () => {
        while (!stopped.signal.aborted && measuredSent < wantCounted) {
          const at = now();
          if (at >= endMs) break;
          await send(at);
        }
      };
      await Promise.all(Array.from({ length: mode.concurrency }, worker));
    }
  } finally {
    clearInterval(progressTimer);
  }
  const interrupted = stopped.signal.aborted;
  // After an interruption, answers on their way get a moment to arrive; the rest are given up.
  const abandoned = await drain(inFlight, giveUp, interrupted ? (options.drainMs ?? 5000) : Infinity);
  options.signal?.removeEventListener('abort', onAbort);
  const endedMs = now();
  const measuredSeconds = Math.max(0, (Math.min(lastMeasuredEnd, endedMs) - warmupMs) / 1000);
  return {
    mode,
    startedAt,
    measuredFrom: new Date(startedAt.getTime() + warmupMs),
    endedAt: new Date(startedAt.getTime() + endedMs),
    measuredSeconds,
    warmupSeconds: warmupMs / 1000,
    sent,
    interrupted,
    abandoned,
    overall: overall.figures(measuredSeconds),
    perTarget: targets.map((t, i) => ({ targetModel: t.targetModel, ...perTarget[i]!.figures(measuredSeconds) })),
    ...(mode.kind === 'open' ? { sendLag: sendLag.summary() } : {}),
    failureExamples,
    ...(records ? { records: records.sort((a, b) => a.sequence - b.sequence) } : {}),
  };
}

/**
 * Sends request i at `i * interval` ms, never waiting for answers. A timer wakes the loop at the next intended time;
 * when it wakes late (a busy event loop), every request now due is sent at once, each still timed from its own
 * intended time.
 */
function openLoop(total: number, interval: number, now: () => number, send: (intended: number) => Promise<void>, stop: AbortSignal) {
  return new Promise<void>((done) => {
    let next = 0;
    const tick = () => {
      if (stop.aborted) return done();
      const at = now();
      while (next < total && next * interval <= at) {
        void send(next * interval);
        next++;
      }
      if (next >= total) return done();
      setTimeout(tick, Math.max(0, next * interval - now() - 0.5));
    };
    stop.addEventListener('abort', () => done(), { once: true });
    tick();
  });
}

async function drain(inFlight: { size: number }, giveUp: AbortController, graceMs: number): Promise<number> {
  const deadline = performance.now() + graceMs;
  while (inFlight.size > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const abandoned = inFlight.size;
  if (abandoned > 0) giveUp.abort();
  return abandoned;
}

function startProgress(
  options: LoadTestOptions,
  state: () => { sent: number; completed: number; errors: number; inFlight: number; warmupMs: number; now: () => number },
): ReturnType<typeof setInterval> | undefined {
  const { onProgress } = options;
  if (!onProgress) return undefined;
  let lastCompleted = 0;
  let lastAt = 0;
  const timer = setInterval(() => {
    const s = state();
    const at = s.now();
    const rate = at > lastAt ? ((s.completed - lastCompleted) * 1000) / (at - lastAt) : 0;
    lastCompleted = s.completed;
    lastAt = at;
    onProgress({
      elapsedSeconds: at / 1000,
      sent: s.sent,
      completed: s.completed,
      errors: s.errors,
      inFlight: s.inFlight,
      rate,
      warmingUp: at < s.warmupMs,
    });
  }, options.progressIntervalMs ?? 1000);
  timer.unref();
  return timer;
}
