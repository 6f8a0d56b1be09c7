// `smoke`: does every TargetModel answer as its config promises? Each is invoked once cold (the first call, which on an
// endpoint includes the download and the load) and a few times warm, with requests made from its config, and each
// answer is checked against the config. A failure comes back explained, never thrown.

import { encodeInferenceRequest, decodeInferenceResponse } from '../kserve/kserve-codec';
import { MmeError } from '../errors';
import { checkOutputs, OutputMismatch } from './check-outputs';
import type { InvocationFailure, ModelInvoker } from './invoker';
import { Latencies } from './latency';
import { smokeRequests, SmokeInputOptions } from './smoke-inputs';
import type { TargetModelSource } from './target-models';

export interface SmokeOptions extends SmokeInputOptions {
  /** Warm invocations after the first. @default 5 */
  readonly warm?: number;
  readonly signal?: AbortSignal;
  /** Called when a TargetModel is done, for progress. */
  readonly onResult?: (result: SmokeResult) => void;
}

export interface SmokeResult {
  readonly targetModel: string;
  readonly ok: boolean;
  /** Where the request values came from: `warmup 'name'` samples, or `generated` from the config. */
  readonly inputs?: string;
  /** The first invocation, milliseconds. */
  readonly coldMs?: number;
  readonly warm?: { readonly count: number; readonly p50Ms: number; readonly p99Ms: number };
  /** Outputs checked against the config, over every answer. */
  readonly outputsChecked: number;
  /** Why it failed: the invocation's failure, or the answer's mismatches. */
  readonly failure?: InvocationFailure;
  readonly mismatches?: readonly OutputMismatch[];
}

export interface SmokeReport {
  readonly site: string;
  readonly results: readonly SmokeResult[];
  readonly passed: number;
  readonly failed: number;
}

/** Smoke-tests each source in turn; a model that fails does not stop the others. */
export async function smokeTest(
  sources: AsyncIterable<TargetModelSource> | Iterable<TargetModelSource>,
  invoker: ModelInvoker,
  options: SmokeOptions = {},
): Promise<SmokeReport> {
  const results: SmokeResult[] = [];
  for await (const source of sources) {
    if (options.signal?.aborted) throw new MmeError('ABORTED', 'interrupted: smoke stopped before every TargetModel was checked.');
    const result = await smokeOne(source, invoker, options);
    results.push(result);
    options.onResult?.(result);
  }
  const failed = results.filter((r) => !r.ok).length;
  return { site: invoker.site, results, passed: results.length - failed, failed };
}

async function smokeOne(source: TargetModelSource, invoker: ModelInvoker, options: SmokeOptions): Promise<SmokeResult> {
  const { targetModel, config } = source;
  if (source.failure) return { targetModel, ok: false, outputsChecked: 0, failure: source.failure };
  let requests;
  try {
    requests = smokeRequests(config, source.files, options);
  } catch (err) {
    if (!(err instanceof MmeError)) throw err;
    const failure = { cause: 'request', code: err.code, message: `${source.source}: ${err.message}` };
    return { targetModel, ok: false, outputsChecked: 0, failure };
  }
  const bodies = requests.map((r) => ({
    batch: Number(config.max_batch_size ?? 0) > 0 ? (r.inputs[0]?.shape[0] ?? 1) : 1,
    ...encodeInferenceRequest({ inputs: r.inputs }, { binary: true }),
  }));
  const inputs = [...new Set(requests.map((r) => r.source))].join(', ');
  const warmCount = options.warm ?? 5;
  const warm = new Latencies();
  let coldMs: number | undefined;
  let outputsChecked = 0;
  for (let call = 0; call <= warmCount; call++) {
    if (options.signal?.aborted) throw new MmeError('ABORTED', 'interrupted: smoke stopped before every TargetModel was checked.');
    const request = bodies[call % bodies.length]!;
    const started = performance.now();
    const outcome = await invoker.invoke(targetModel, request.body, request.contentType, options.signal);
    const milliseconds = performance.now() - started;
    const partial = { targetModel, inputs, ...(coldMs !== undefined ? { coldMs } : {}), outputsChecked };
    if (!outcome.ok) return { ...partial, ok: false, failure: outcome.failure };
    let mismatches: OutputMismatch[];
    try {
      mismatches = checkOutputs(config, decodeInferenceResponse(outcome.body, outcome.contentType), request.batch);
    } catch (err) {
      if (!(err instanceof MmeError)) throw err;
      const message = `${targetModel} answered a body that cannot be decoded: ${err.message}`;
      const failure = { cause: 'bad-response', code: err.code, message };
      return { ...partial, ok: false, failure };
    }
    if (mismatches.length > 0) return { ...partial, ok: false, mismatches };
    outputsChecked += (config.output ?? []).length;
    if (call === 0) coldMs = milliseconds;
    else warm.record(milliseconds);
  }
  return {
    targetModel,
    ok: true,
    inputs,
    ...(coldMs !== undefined ? { coldMs } : {}),
    ...(warm.count > 0 ? { warm: { count: warm.count, p50Ms: warm.at(50), p99Ms: warm.at(99) } } : {}),
    outputsChecked,
  };
}
