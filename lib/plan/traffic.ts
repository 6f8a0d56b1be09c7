// Traffic for the cache simulator: which model each request targets and when it arrives. A spec (uniform, zipf or
// a CSV the user wrote) becomes per-model weights or a recorded trace; weights are sampled with Walker's alias method
// so each request costs O(1) however many models there are.

import { diagnostic, fewNames, type Diagnostic } from '../diagnostics';
import type { RandomSource } from './seeded-random';

/** How requests spread over the models. */
export type TrafficSpec =
  | { readonly kind: 'uniform' }
  /** Model i (0-based, in the order given) gets weight 1 / (i + 1)^exponent. */
  | { readonly kind: 'zipf'; readonly exponent: number }
  /** Relative weights by model name (a `model,weight` CSV); requests are drawn independently. */
  | { readonly kind: 'weights'; readonly file: string; readonly weights: ReadonlyMap<string, number> }
  /** A recorded sequence (a `timestamp,model` CSV), replayed as is; `--rps` does not apply. */
  | { readonly kind: 'trace'; readonly file: string; readonly requests: readonly TraceRequest[] };

export interface TraceRequest {
  /** Seconds since the first request of the file. */
  readonly time: number;
  readonly model: string;
}

/** The requests the simulator replays: model indices and arrival times in seconds, both in arrival order. */
export interface RequestTrace {
  readonly models: Int32Array;
  readonly times: Float64Array;
}

/** Parses `uniform` or `zipf:S`; anything else is taken as a CSV path by the caller. */
export function parseTrafficKeyword(text: string): TrafficSpec | { error: string } | undefined {
  if (text === 'uniform') return { kind: 'uniform' };
  const zipf = /^zipf(?::(.*))?$/.exec(text);
  if (!zipf) return undefined;
  const exponent = zipf[1] === undefined ? 1 : Number(zipf[1]);
  if (zipf[1] === '' || !Number.isFinite(exponent) || exponent < 0) {
    return { error: `--traffic ${text}: the zipf exponent must be a number ≥ 0, e.g. zipf:1.1` };
  }
  return { kind: 'zipf', exponent };
}

/**
 * Parses a traffic CSV. The header row decides its meaning: `model,weight` gives relative weights, `timestamp,model`
 * a recorded trace (timestamps in seconds or ISO 8601). Blank lines and lines starting with `#` are skipped. With
 * `weightsOnly` (loadtest draws each request, it replays no trace) only `model,weight` is taken, and named.
 */
export function parseTrafficCsv(
  text: string,
  file: string,
  options: { readonly weightsOnly?: boolean } = {},
): { spec?: TrafficSpec; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const lines = text.split(/\r?\n/);
  const lineStarts = startsOfLines(lines, text);
  // A fault on a row points at the row's first character, with the row as its excerpt.
  const error = (message: string, line?: number): void => {
    const at = line ? { line, column: 1, offset: lineStarts[line - 1]! } : undefined;
    diagnostics.push(diagnostic('error', 'traffic-csv', message, { file, text }, at));
  };
  let headerLine = 0;
  let header: string[] | undefined;
  for (let i = 0; i < lines.length && !header; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    headerLine = i + 1;
    header = line.split(',').map((cell) => cell.trim().toLowerCase());
  }
  const isWeights = header?.length === 2 && header[0] === 'model' && header[1] === 'weight';
  const isTrace = header?.length === 2 && header[0] === 'timestamp' && header[1] === 'model';
  if (options.weightsOnly && !isWeights) {
    const trace = isTrace ? ': this is a recorded trace, which only `plan` replays' : '';
    error(`the first row must be the header \`model,weight\` (relative traffic per model), found \`${header?.join(',') ?? ''}\`` +
      trace, headerLine || undefined);
    return { diagnostics };
  }
  if (!isWeights && !isTrace) {
    error(
      `the first row must be the header \`model,weight\` (relative traffic per model) or \`timestamp,model\` ` +
        `(a recorded trace), found \`${header?.join(',') ?? ''}\``,
      headerLine || undefined,
    );
    return { diagnostics };
  }
  const weights = new Map<string, number>();
  const requests: { time: number; model: string }[] = [];
  for (let i = headerLine; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const cells = line.split(',').map((cell) => cell.trim());
    if (cells.length !== 2 || cells[0] === '' || cells[1] === '') {
      error(`expected two comma-separated values, found \`${line}\``, i + 1);
      continue;
    }
    if (isWeights) {
      const [model, weightText] = cells as [string, string];
      const weight = Number(weightText);
      if (!Number.isFinite(weight) || weight < 0) {
        error(`the weight of ${model} must be a number ≥ 0, found \`${weightText}\``, i + 1);
      } else {
        weights.set(model, (weights.get(model) ?? 0) + weight);
      }
    } else {
      const [timeText, model] = cells as [string, string];
      const time = /^[-+]?\d+(\.\d+)?$/.test(timeText) ? Number(timeText) : Date.parse(timeText) / 1000;
      if (!Number.isFinite(time)) {
        error(`\`${timeText}\` is neither seconds nor an ISO 8601 date-time`, i + 1);
      } else {
        requests.push({ time, model });
      }
    }
  }
  if (diagnostics.length > 0) return { diagnostics };
  if (isWeights) {
    if (![...weights.values()].some((w) => w > 0)) {
      error('no model has a weight above 0: give at least one model some traffic');
      return { diagnostics };
    }
    return { spec: { kind: 'weights', file, weights }, diagnostics };
  }
  if (requests.length === 0) {
    error('the trace has no requests under its header');
    return { diagnostics };
  }
  // Stable sort: a trace merged from several logs need not be in order.
  requests.sort((x, y) => x.time - y.time);
  const start = requests[0]!.time;
  return {
    spec: { kind: 'trace', file, requests: requests.map((r) => ({ time: r.time - start, model: r.model })) },
    diagnostics,
  };
}

/**
 * Per-model weights for a non-trace spec, in the order of `models`. Names in a weights file that are not among the
 * models are errors (a typo would silently move traffic); models the file leaves out get no traffic (a warning).
 */
export function trafficWeights(
  spec: Exclude<TrafficSpec, { kind: 'trace' }>,
  models: readonly string[],
): { weights: Float64Array; diagnostics: Diagnostic[] } {
  const weights = new Float64Array(models.length);
  const diagnostics: Diagnostic[] = [];
  switch (spec.kind) {
    case 'uniform':
      weights.fill(1);
      break;
    case 'zipf':
      for (let i = 0; i < models.length; i++) weights[i] = 1 / Math.pow(i + 1, spec.exponent);
      break;
    case 'weights': {
      const index = new Map(models.map((name, i) => [name, i]));
      for (const [name, weight] of spec.weights) {
        const i = index.get(name);
        if (i === undefined) {
          diagnostics.push(unknownModel(spec.file, name, models));
        } else {
          weights[i] = weight;
        }
      }
      const silent = models.filter((name) => !spec.weights.has(name));
      if (silent.length > 0) {
        diagnostics.push(
          diagnostic(
            'warning',
            'traffic-missing-model',
            `${silent.length} model(s) have no row in the traffic file and get no requests: ` +
              `${fewNames(silent)}; add a \`name,weight\` row for each to include them`,
            { file: spec.file },
          ),
        );
      }
      break;
    }
  }
  return { weights, diagnostics };
}

/** Maps a recorded trace's model names to indices; unknown names are errors. */
export function traceRequests(
  spec: Extract<TrafficSpec, { kind: 'trace' }>,
  models: readonly string[],
): { trace?: RequestTrace; diagnostics: Diagnostic[] } {
  const index = new Map(models.map((name, i) => [name, i]));
  const unknown = new Set<string>();
  const trace: RequestTrace = {
    models: new Int32Array(spec.requests.length),
    times: new Float64Array(spec.requests.length),
  };
  spec.requests.forEach((request, i) => {
    const m = index.get(request.model);
    if (m === undefined) unknown.add(request.model);
    trace.models[i] = m ?? -1;
    trace.times[i] = request.time;
  });
  if (unknown.size > 0) {
    return { diagnostics: [...unknown].map((name) => unknownModel(spec.file, name, models)) };
  }
  return { trace, diagnostics: [] };
}

function unknownModel(file: string, name: string, models: readonly string[]): Diagnostic {
  return diagnostic(
    'error',
    'traffic-unknown-model',
    `the traffic file names \`${name}\`, which is not one of the planned models (${fewNames(models)}); ` +
      'use the names the plan prints',
    { file },
  );
}

/** The offset in `text` where each of `lines` (split on LF or CRLF) starts. */
function startsOfLines(lines: readonly string[], text: string): number[] {
  const starts: number[] = [];
  let offset = 0;
  for (const line of lines) {
    starts.push(offset);
    offset += line.length + (text[offset + line.length] === '\r' ? 2 : 1);
  }
  return starts;
}

/** Walker's alias table: sampling an index proportionally to its weight with one table look-up. */
export interface AliasTable {
  readonly probability: Float64Array;
  readonly alias: Int32Array;
}

/** Builds an alias table (Vose's O(n) construction). Weights must be ≥ 0 with a positive sum. */
export function buildAliasTable(weights: ArrayLike<number>): AliasTable {
  const n = weights.length;
  let total = 0;
  for (let i = 0; i < n; i++) total += weights[i]!;
  if (!(total > 0) || !Number.isFinite(total)) throw new RangeError('traffic weights must have a positive, finite sum');
  const probability = new Float64Array(n);
  const alias = new Int32Array(n);
  const scaled = new Float64Array(n);
  const small = new Int32Array(n);
  const large = new Int32Array(n);
  let smallCount = 0;
  let largeCount = 0;
  for (let i = 0; i < n; i++) {
    scaled[i] = (weights[i]! * n) / total;
    if (scaled[i]! < 1) small[smallCount++] = i;
    else large[largeCount++] = i;
  }
  while (smallCount > 0 && largeCount > 0) {
    const s = small[--smallCount]!;
    const l = large[--largeCount]!;
    probability[s] = scaled[s]!;
    alias[s] = l;
    scaled[l] = scaled[l]! + scaled[s]! - 1;
    if (scaled[l]! < 1) small[smallCount++] = l;
    else large[largeCount++] = l;
  }
  // What is left is 1 up to rounding error, except a weight-0 entry, which must never be drawn.
  while (largeCount > 0) {
    const l = large[--largeCount]!;
    probability[l] = 1;
    alias[l] = l;
  }
  let heaviest = 0;
  for (let i = 1; i < n; i++) if (weights[i]! > weights[heaviest]!) heaviest = i;
  while (smallCount > 0) {
    const s = small[--smallCount]!;
    probability[s] = weights[s]! > 0 ? 1 : 0;
    alias[s] = weights[s]! > 0 ? s : heaviest;
  }
  return { probability, alias };
}

export function sampleAlias(table: AliasTable, random: RandomSource): number {
  const n = table.probability.length;
  const i = Math.floor(random() * n);
  return random() < table.probability[i]! ? i : table.alias[i]!;
}

/**
 * Draws `count` requests with Poisson arrivals at `rps` requests per second. A model with weight 0 is never drawn.
 */
export function sampleTrace(
  weights: ArrayLike<number>,
  options: { readonly count: number; readonly rps: number; readonly random: RandomSource },
): RequestTrace {
  const table = buildAliasTable(weights);
  const models = new Int32Array(options.count);
  const times = new Float64Array(options.count);
  const { random, rps } = options;
  let time = 0;
  for (let i = 0; i < options.count; i++) {
    models[i] = sampleAlias(table, random);
    times[i] = time;
    // Exponential gaps; 1 - u is in (0, 1], so the logarithm is finite.
    time += -Math.log(1 - random()) / rps;
  }
  return { models, times };
}
