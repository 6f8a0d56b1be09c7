// `mme-deploy loadtest --endpoint E (--rate R | --concurrency C) (--duration S | --requests N)`: traffic over the
// endpoint's TargetModels as `plan` models it, latency per TargetModel and overall, errors by cause, and the model
// cache as the endpoint's CloudWatch metrics saw it beside plan's prediction. Invocations cost money: the count is
// estimated first and a confirmation asked above CONFIRM_ABOVE.

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { LatencySummary } from '../measure/latency';
import type { LoadMode, LoadTestResult, RequestRecord } from '../measure/loadtest';
import type { CachePrediction, ObservedCache } from '../measure/cache-comparison';
import { AwsCommandOptions, connectionOf } from './aws-options';
import { CliIo, ExitCode, note as noteOn, UsageError } from './io';
import { toJson } from './json';
import { formatDiagnosticText } from './report-format';

export interface LoadTestCommandOptions extends AwsCommandOptions {
  readonly endpoint?: string;
  readonly variant?: string;
  readonly traffic?: string;
  readonly rate?: string;
  readonly concurrency?: string;
  readonly duration?: string;
  readonly requests?: string;
  readonly warmup?: string;
  readonly seed?: string;
  readonly resident?: string;
  readonly coldSeconds?: string;
  readonly metricsWait?: string;
  readonly shape?: string;
  readonly csv?: string;
  readonly force?: boolean;
  readonly yes?: boolean;
}

/** Connections an open-loop run keeps at most. */
export const OPEN_LOOP_SOCKETS = 256;

/** Above this many invocations, loadtest asks before sending. */
export const CONFIRM_ABOVE = 1000;

export async function runLoadTestCommand(
  names: string[],
  options: LoadTestCommandOptions,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  if (!options.endpoint) throw new UsageError('Which endpoint? Give --endpoint NAME.');
  const mode = modeOf(options);
  const duration = optionalNumber('--duration', options.duration);
  const requests = optionalNumber('--requests', options.requests, true);
  if ((duration === undefined) === (requests === undefined)) throw new UsageError('Give either --duration SECONDS or --requests N.');
  const warmup = optionalNumber('--warmup', options.warmup, false, true) ?? 10;
  const seed = optionalNumber('--seed', options.seed, true) ?? 1;
  const resident = optionalNumber('--resident', options.resident, true);
  const coldSeconds = optionalNumber('--cold-seconds', options.coldSeconds, false, true);
  const metricsWait = optionalNumber('--metrics-wait', options.metricsWait, false, true) ?? 180;
  const connection = connectionOf(options);
  if (options.csv !== undefined && !options.force && existsSync(resolve(io.cwd, options.csv))) {
    // Checked before sending: the records of a paid run must have somewhere to go.
    throw new UsageError(`--csv ${resolve(io.cwd, options.csv)} exists; choose another file name or add --force to replace it`);
  }

  // The traffic file is read before any AWS call: a typo in it costs nothing.
  const trafficText = options.traffic ?? 'uniform';
  const traffic = await readLoadTraffic(trafficText, io);

  const { endpointTargetModels, readEndpointSources } = await import('../measure/target-models');
  const { endpoint, names: targets } = await endpointTargetModels(connection, options.endpoint, {
    names,
    ...(options.variant ? { variant: options.variant } : {}),
  });
  const weights = await trafficWeightsFor(traffic, targets, io);

  const estimate = estimateInvocations(mode, warmup, duration, requests);
  const what = estimate === undefined
    ? `closed loop with ${mode.kind === 'closed' ? mode.concurrency : 0} in flight for ${warmup + (duration ?? 0)} s: as many ` +
      'invocations as the endpoint answers'
    : `about ${estimate} invocations`;
  if (!options.json) noteOn(io, `This sends ${what} to endpoint ${endpoint.endpointName} (warm-up included); they are billed.\n`);
  if (!options.yes && (estimate === undefined || estimate > CONFIRM_ABOVE)) {
    if (!io.prompt) throw new UsageError(`Refusing to send ${what} without confirmation: stdin is not a terminal. Pass --yes.`);
    const answer = await io.prompt('Go ahead? [y/N] ');
    if (!/^y(es)?$/i.test(answer.trim())) {
      noteOn(io, 'Nothing sent.\n');
      return ExitCode.Ok;
    }
  }

  // One request per TargetModel, made as smoke makes its first.
  const { smokeRequests } = await import('../measure/smoke-inputs');
  const { encodeInferenceRequest } = await import('../kserve/kserve-codec');
  const { parseShapes } = await import('./smoke');
  const shapes = options.shape ? parseShapes(options.shape) : undefined;
  const loadTargets = [];
  for await (const source of readEndpointSources(connection, endpoint, targets, signal)) {
    if (source.failure) throw new UsageError(`${source.targetModel}: ${source.failure.message}`);
    const first = smokeRequests(source.config, source.files, shapes ? { shapes } : {})[0]!;
    loadTargets.push({ targetModel: source.targetModel, ...encodeInferenceRequest({ inputs: first.inputs }, { binary: true }) });
  }

  const { endpointInvoker } = await import('../measure/invoker');
  const { runLoadTest } = await import('../measure/loadtest');
  const invoker = await endpointInvoker({
    ...connection,
    endpoint: endpoint.endpointName,
    ...(options.variant ? { variant: options.variant } : {}),
    // Open loop: past this many connections, requests queue in the pool (still timed from their intended time)
    // rather than open ever more connections to an endpoint that has fallen behind.
    maxSockets: mode.kind === 'closed' ? mode.concurrency : OPEN_LOOP_SOCKETS,
  });
  let result: LoadTestResult;
  try {
    result = await runLoadTest(invoker, {
      targets: loadTargets,
      weights,
      mode,
      ...(duration !== undefined ? { durationSeconds: duration } : {}),
      ...(requests !== undefined ? { requests } : {}),
      warmupSeconds: warmup,
      seed,
      signal,
      keepRecords: Boolean(options.json || options.csv),
      ...(io.status
        ? {
            onProgress: (p) =>
              io.status!(`${p.warmingUp ? 'warming up' : 'measuring'}  ${p.elapsedSeconds.toFixed(0)} s  sent ${p.sent}  ` +
                `answered ${p.completed}  ${p.rate.toFixed(0)} req/s  errors ${p.errors}  in flight ${p.inFlight}`),
          }
        : {}),
    });
  } finally {
    io.status?.('');
    invoker.close();
  }

  const { observed, note } = await readMetrics(connection, endpoint.endpointName, endpoint.variantName, result, metricsWait, signal, io);
  const variant = endpoint.variants.find((v) => v.variantName === endpoint.variantName);
  const instances = variant?.currentInstanceCount ?? variant?.initialInstanceCount ?? 1;
  let prediction: CachePrediction | undefined;
  // The time a load takes, not the mean wait: requests that came while a load was in flight waited less.
  const cold = coldSeconds ?? observed?.meanLoadSeconds ?? 0;
  if (resident !== undefined) {
    const { predictCache } = await import('../measure/cache-comparison');
    const rps = mode.kind === 'open' ? mode.rate : result.overall.throughput;
    // Open loop sends evenly spaced requests, and plan is given the same; closed loop's arrivals are taken as random.
    prediction = predictCache({ weights, residentModels: resident, instances, requests: result.sent, rps, coldSeconds: cold, seed,
      arrivals: mode.kind === 'open' ? 'even' : 'poisson' });
  }

  if (options.csv !== undefined) {
    const { writeNewFile } = await import('./plan');
    await writeNewFile(resolve(io.cwd, options.csv), recordsCsv(result.records ?? []), options.force === true, undefined);
  }
  const settings = { traffic: trafficText, instances, ...(resident !== undefined ? { residentModels: resident, coldSeconds: cold } : {}) };
  if (options.json) {
    io.stdout(toJson({ endpoint: endpoint.endpointName, ...settings, ...result, cache: { observed, prediction, note } }));
  } else {
    io.stdout(formatLoadTest(endpoint.endpointName, settings, result, observed, prediction, note));
    if (options.csv !== undefined) noteOn(io, `wrote ${result.records?.length ?? 0} request records to ${options.csv}\n`);
  }
  return result.interrupted ? ExitCode.Interrupted : ExitCode.Ok;
}

function modeOf(options: LoadTestCommandOptions): LoadMode {
  const rate = optionalNumber('--rate', options.rate);
  const concurrency = optionalNumber('--concurrency', options.concurrency, true);
  if ((rate === undefined) === (concurrency === undefined)) {
    throw new UsageError('Give either --rate REQUESTS_PER_SECOND (open loop) or --concurrency N (closed loop).');
  }
  return rate !== undefined ? { kind: 'open', rate } : { kind: 'closed', concurrency: concurrency! };
}

function optionalNumber(flag: string, text: string | undefined, integer = false, zero = false): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  const ok = text.trim() !== '' && Number.isFinite(value) && (zero ? value >= 0 : value > 0) && (!integer || Number.isInteger(value));
  if (!ok) throw new UsageError(`${flag} ${text}: expected ${integer ? 'a whole number' : 'a number'} ${zero ? '≥ 0' : 'above 0'}.`);
  return value;
}

/** Invocations the run will send, warm-up included; undefined when only the endpoint's speed decides (closed loop, --duration). */
export function estimateInvocations(mode: LoadMode, warmup: number, duration?: number, requests?: number): number | undefined {
  if (mode.kind === 'open') return Math.ceil(mode.rate * warmup) + (requests ?? Math.ceil(mode.rate * (duration ?? 0)));
  return undefined;
}

type LoadTraffic = { text: string; spec: Exclude<import('../plan/traffic').TrafficSpec, { kind: 'trace' }> };

/** --traffic as loadtest takes it: uniform, zipf:S or a model,weight CSV (a trace is plan's alone). */
async function readLoadTraffic(text: string, io: CliIo): Promise<LoadTraffic> {
  const { readTraffic } = await import('./plan');
  const diagnostics: import('../diagnostics').Diagnostic[] = [];
  const spec = await readTraffic(text, io, diagnostics, { weightsOnly: true });
  if (!spec || spec.kind === 'trace') throw trafficError(text, diagnostics);
  return { text, spec };
}

function trafficError(text: string, diagnostics: readonly import('../diagnostics').Diagnostic[]): UsageError {
  const first = diagnostics.find((d) => d.severity === 'error');
  return new UsageError(`--traffic ${text}: ${first ? formatDiagnosticText(first).trim() : 'unreadable'}`);
}

async function trafficWeightsFor({ text, spec }: LoadTraffic, targets: readonly string[], io: CliIo): Promise<Float64Array> {
  const { trafficWeights } = await import('../plan/traffic');
  const result = trafficWeights(spec, targets);
  const diagnostics = result.diagnostics;
  if (diagnostics.some((d) => d.severity === 'error')) throw trafficError(text, diagnostics);
  for (const d of diagnostics.filter((x) => x.severity === 'warning')) io.stderr(`${formatDiagnosticText(d).trim()}\n`);
  return result.weights;
}

/** The window's metrics; on a real endpoint they arrive a minute or two late, so this polls until they cover the run. */
async function readMetrics(
  connection: import('../aws/aws-clients').AwsConnection,
  endpointName: string,
  variantName: string,
  result: LoadTestResult,
  waitSeconds: number,
  signal: AbortSignal,
  io: CliIo,
): Promise<{ observed?: ObservedCache; note?: string }> {
  const { createCloudWatchClient } = await import('../aws/aws-clients');
  const { observeCache } = await import('../measure/cache-comparison');
  const { explainAwsError } = await import('../aws/aws-errors');
  const client = await createCloudWatchClient(connection);
  const deadline = Date.now() + waitSeconds * 1000;
  try {
    for (;;) {
      const observed = await observeCache(client, endpointName, variantName, result.startedAt, result.endedAt);
      const answered = result.sent - result.abandoned;
      if (observed.invocations >= answered) {
        const others = observed.invocations - answered;
        return others > 0
          ? { observed, note: `The endpoint counted ${others} invocations more than this run sent: other traffic shared the window.` }
          : { observed };
      }
      if (Date.now() >= deadline || signal.aborted) {
        return { observed, note: `CloudWatch holds ${observed.invocations} of the ${answered} invocations so far; SageMaker publishes ` +
          'one-minute points a minute or two late. Run `mme-deploy status` later for the rest, or raise --metrics-wait.' };
      }
      io.status?.(`waiting for CloudWatch: ${observed.invocations} of ${answered} invocations published`);
      await new Promise((done) => setTimeout(done, 15_000));
    }
  } catch (err) {
    const message = explainAwsError(err, { ...connection, permission: 'cloudwatch:GetMetricData', resource: `endpoint ${endpointName}` });
    return { note: `Model cache metrics not read: ${message.message}` };
  } finally {
    io.status?.('');
    client.destroy();
  }
}

export function recordsCsv(records: readonly RequestRecord[]): string {
  const lines = ['sequence,target_model,intended_ms,sent_ms,latency_ms,ok,cause,warmup'];
  for (const r of records) {
    const cause = r.cause ? `"${r.cause.replace(/"/g, '""')}"` : '';
    lines.push(`${r.sequence},"${r.targetModel.replace(/"/g, '""')}",${r.intendedMs.toFixed(3)},${r.sentMs.toFixed(3)},` +
      `${r.latencyMs.toFixed(3)},${r.ok},${cause},${r.warmup}`);
  }
  return `${lines.join('\n')}\n`;
}

// ---- terminal report ----

const msText = (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    `${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}\n`.replace(/ +\n$/, '\n');
  return line(header) + rows.map(line).join('');
}

function latencyCells(l: LatencySummary): string[] {
  return l.count === 0 ? ['-', '-', '-', '-', '-'] : [l.p50, l.p90, l.p99, l.p999, l.max].map(msText);
}

export function formatLoadTest(
  endpoint: string,
  settings: { traffic: string; instances: number; residentModels?: number; coldSeconds?: number },
  result: LoadTestResult,
  observed: ObservedCache | undefined,
  prediction: CachePrediction | undefined,
  note: string | undefined,
): string {
  const mode = result.mode.kind === 'open' ? `open loop at ${result.mode.rate} req/s` : `closed loop, ${result.mode.concurrency} in flight`;
  let out = `Load test on endpoint ${endpoint}: ${mode}, traffic ${settings.traffic} over ${result.perTarget.length} TargetModel(s); ` +
    `${result.sent} sent, ${result.warmupSeconds} s of warm-up excluded, ${result.measuredSeconds.toFixed(1)} s measured` +
    `${result.interrupted ? ' (interrupted: what was measured until then)' : ''}.\n\n`;
  const header = ['TargetModel', 'requests', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'errors'];
  const errorCount = (errors: Readonly<Record<string, number>>) => String(Object.values(errors).reduce((a, b) => a + b, 0));
  const rows = result.perTarget.map((t) => [
    t.targetModel, String(t.requests), t.throughput.toFixed(1), ...latencyCells(t.latency), errorCount(t.errors),
  ]);
  const all = result.overall;
  rows.push(['all', String(all.requests), all.throughput.toFixed(1), ...latencyCells(all.latency), errorCount(all.errors)]);
  out += table(header, rows);
  const causes = Object.entries(all.errors).sort((a, b) => b[1] - a[1]);
  if (causes.length > 0) {
    out += '\nErrors by cause:\n';
    for (const [cause, count] of causes) out += `  ${cause}: ${count}. ${result.failureExamples[cause]?.message ?? ''}\n`;
  }
  if (result.abandoned > 0) out += `\n${result.abandoned} request(s) still unanswered when the run stopped are left out.\n`;
  if (result.sendLag && result.sendLag.count > 0) {
    out += `\nClient: requests left ${msText(result.sendLag.p99)} ms after their intended time at p99 (max ` +
      `${msText(result.sendLag.max)} ms); latency counts from the intended time.\n`;
  }
  out += '\n';
  if (observed) {
    const fmt = (d: Date) => d.toISOString().slice(11, 16);
    out += `Model cache, from CloudWatch ${fmt(observed.window.start)}-${fmt(observed.window.end)} UTC (warm-up included), ` +
      `${settings.instances} instance(s):\n`;
    const predicted = (value: number, error: number, digits: number) => `${value.toFixed(digits)} ± ${error.toFixed(digits)}`;
    const rowsCache: string[][] = [];
    const hitVerdict = prediction && observed.hitRatio !== undefined
      ? (Math.abs(observed.hitRatio - prediction.hitRatio) <= prediction.hitRatioError ? 'agrees' : 'differs')
      : '';
    rowsCache.push(['cache hit ratio', observed.hitRatio === undefined ? '-' : observed.hitRatio.toFixed(3),
      prediction ? predicted(prediction.hitRatio, prediction.hitRatioError, 3) : '-', hitVerdict]);
    const loadVerdict = prediction ? (Math.abs(observed.loads - prediction.loads) <= prediction.loadsError ? 'agrees' : 'differs') : '';
    rowsCache.push(['model loads', String(observed.loads), prediction ? predicted(prediction.loads, prediction.loadsError, 0) : '-',
      loadVerdict]);
    const waitedVerdict = prediction
      ? (Math.abs(observed.waited - prediction.waited) <= prediction.waitedError ? 'agrees' : 'differs')
      : '';
    rowsCache.push(['requests that waited', String(observed.waited),
      prediction ? predicted(prediction.waited, prediction.waitedError, 0) : '-', waitedVerdict]);
    rowsCache.push(['invocations counted', String(observed.invocations), prediction ? String(result.sent) : '-', '']);
    rowsCache.push(['model unloads', String(observed.unloads), '', '']);
    const load = observed.meanLoadSeconds;
    rowsCache.push(['mean load time', load === undefined ? '-' : `${msText(load * 1000)} ms`, '', '']);
    const wait = observed.meanLoadWaitSeconds;
    rowsCache.push(['mean load wait', wait === undefined ? '-' : `${msText(wait * 1000)} ms`, '', '']);
    rowsCache.push(['max loaded models', observed.maxLoadedModels === undefined ? '-' : String(observed.maxLoadedModels),
      settings.residentModels === undefined ? '' : `${settings.residentModels * settings.instances}`, '']);
    const gpu = observed.meanGpuUtilization;
    rowsCache.push(['GPU utilization (mean)', gpu === undefined ? '-' : `${gpu.toFixed(0)} %`,
      '', '']);
    rowsCache.push(['GPU memory (max)', observed.maxGpuMemoryUtilization === undefined ? '-' :
      `${observed.maxGpuMemoryUtilization.toFixed(0)} %`, '', '']);
    out += table(['', 'measured', 'plan predicts', ''], rowsCache.map((r) => r.map((c) => c)));
    if (prediction) {
      out += `plan: the same traffic from empty caches, ${settings.residentModels} model(s) resident per instance, ` +
        `${msText((settings.coldSeconds ?? 0) * 1000)} ms per load; ± is two standard deviations over ${prediction.runs} simulated ` +
        'runs of this length (about 95 % of runs fall within it).\n';
    } else {
      out += 'Give --resident N (models one instance keeps loaded, as `mme-deploy plan` reports) for plan\'s prediction beside these.\n';
    }
  }
  if (note) out += `${note}\n`;
  return out;
}
