// What the endpoint's model cache did during a load test, from its CloudWatch metrics, beside what `plan`'s cache
// simulation predicts for the same traffic, instance count and models per instance. The prediction's statistical
// error is the spread of the simulated hit ratio over independent runs of the same length: cache hits are correlated
// (a model stays loaded), so a binomial error would be too small; replicated runs carry that correlation.

import type { CloudWatchClient, MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import { loadCloudWatch } from '../aws/aws-clients';
import { STATUS_METRICS } from '../aws/endpoint-status';
import { simulateCache } from '../plan/cache-simulator';
import { seededRandom } from '../plan/seeded-random';
import { sampleTrace } from '../plan/traffic';

export interface ObservedCache {
  readonly window: { readonly start: Date; readonly end: Date };
  /** Invocations the endpoint counted in the window (ModelCacheHit's SampleCount). */
  readonly invocations: number;
  /** Invocations whose model was loaded (ModelCacheHit's Sum). */
  readonly hits: number;
  readonly hitRatio?: number;
  /** Loads: ModelLoadingTime's SampleCount, one per LoadModel call. */
  readonly loads: number;
  /** Mean time from download to loaded model per load: (ModelDownloadingTime + ModelLoadingTime) / loads, seconds. */
  readonly meanLoadSeconds?: number;
  /** Requests that waited for a download or a load, their own or one in flight: ModelLoadingWaitTime's SampleCount. */
  readonly waited: number;
  /** Their mean wait, seconds. */
  readonly meanLoadWaitSeconds?: number;
  /** Unloads (ModelUnloadingTime's SampleCount). */
  readonly unloads: number;
  readonly maxLoadedModels?: number;
  readonly meanGpuUtilization?: number;
  readonly maxGpuMemoryUtilization?: number;
}

const MINUTE = 60_000;
const MODEL_NAMESPACE = 'AWS/SageMaker';

function namespacesOf(metric: string): readonly string[] {
  return STATUS_METRICS.find((m) => m.name === metric)?.namespaces ?? [MODEL_NAMESPACE];
}

/** The queries: each metric and statistic, in every namespace it may be published in (see STATUS_METRICS). */
export function cacheMetricQueries(endpointName: string, variantName: string, period = 60): MetricDataQuery[] {
  const wanted: [string, string, string][] = [
    ['hits', 'ModelCacheHit', 'Sum'],
    ['invocations', 'ModelCacheHit', 'SampleCount'],
    ['loads', 'ModelLoadingTime', 'SampleCount'],
    ['loadTime', 'ModelLoadingTime', 'Sum'],
    ['downloadTime', 'ModelDownloadingTime', 'Sum'],
    ['waited', 'ModelLoadingWaitTime', 'SampleCount'],
    ['waitTime', 'ModelLoadingWaitTime', 'Sum'],
    ['unloads', 'ModelUnloadingTime', 'SampleCount'],
    ['loaded', 'LoadedModelCount', 'Maximum'],
    ['gpu', 'GPUUtilization', 'Average'],
    ['gpuMemory', 'GPUMemoryUtilization', 'Maximum'],
  ];
  return wanted.flatMap(([id, name, stat]) =>
    namespacesOf(name).map((namespace, index) => ({
      Id: `${id}${index}`,
      MetricStat: {
        Metric: {
          Namespace: namespace,
          MetricName: name,
          Dimensions: [
            { Name: 'EndpointName', Value: endpointName },
            { Name: 'VariantName', Value: variantName },
          ],
        },
        Period: period,
        Stat: stat,
      },
      ReturnData: true,
    })),
  );
}

/** Reads the window's metrics, widened to whole minutes (SageMaker publishes one-minute points). */
export async function observeCache(
  client: CloudWatchClient,
  endpointName: string,
  variantName: string,
  from: Date,
  to: Date,
): Promise<ObservedCache> {
  const { paginateGetMetricData } = await loadCloudWatch();
  const start = new Date(Math.floor(from.getTime() / MINUTE) * MINUTE);
  const end = new Date(Math.ceil((to.getTime() + 1) / MINUTE) * MINUTE);
  const values = new Map<string, number[]>();
  const request = { MetricDataQueries: cacheMetricQueries(endpointName, variantName), StartTime: start, EndTime: end };
  for await (const page of paginateGetMetricData({ client }, request)) {
    for (const result of page.MetricDataResults ?? []) {
      const id = (result.Id ?? '').replace(/\d+$/, '');
      values.set(id, [...(values.get(id) ?? []), ...(result.Values ?? [])]);
    }
  }
  const sum = (id: string) => (values.get(id) ?? []).reduce((a, b) => a + b, 0);
  const max = (id: string) => ((values.get(id) ?? []).length > 0 ? Math.max(...values.get(id)!) : undefined);
  const mean = (id: string) => ((values.get(id) ?? []).length > 0 ? sum(id) / values.get(id)!.length : undefined);
  const invocations = sum('invocations');
  const hits = sum('hits');
  const loads = sum('loads');
  const waited = sum('waited');
  const optional = <T>(key: string, value: T | undefined) => (value === undefined ? {} : { [key]: value });
  return {
    window: { start, end },
    invocations,
    hits,
    ...optional('hitRatio', invocations > 0 ? hits / invocations : undefined),
    loads,
    ...optional('meanLoadSeconds', loads > 0 ? (sum('loadTime') + sum('downloadTime')) / loads / 1e6 : undefined),
    waited,
    ...optional('meanLoadWaitSeconds', waited > 0 ? sum('waitTime') / waited / 1e6 : undefined),
    unloads: sum('unloads'),
    ...optional('maxLoadedModels', max('loaded')),
    ...optional('meanGpuUtilization', mean('gpu')),
    ...optional('maxGpuMemoryUtilization', max('gpuMemory')),
  };
}

export interface PredictionInput {
  /** Relative traffic per TargetModel. */
  readonly weights: ArrayLike<number>;
  /** Models one instance keeps loaded at once (plan's "models per instance"). */
  readonly residentModels: number;
  readonly instances: number;
  /** Requests in the window, and their rate. */
  readonly requests: number;
  readonly rps: number;
  /** Seconds from a miss to a loaded model. */
  readonly coldSeconds: number;
  /**
   * How requests arrive: `even`, one every 1/rps seconds, as an open-loop load test sends them; `poisson`, at random
   * (exponential gaps), as independent callers do. It matters once requests come while a load is in flight: evenly
   * spaced, fewer of them fall within one load than at random, so more are hits.
   * @default 'poisson'
   */
  readonly arrivals?: 'even' | 'poisson';
  /** Independent simulated runs. @default 30 */
  readonly runs?: number;
  readonly seed?: number;
}

export interface CachePrediction {
  readonly hitRatio: number;
  /** Two standard deviations of the hit ratio over the runs: about 95 % of runs of this length fall within it. */
  readonly hitRatioError: number;
  readonly loads: number;
  readonly loadsError: number;
  /** Requests that waited for a load: the loads, and the requests that came while one was in flight. */
  readonly waited: number;
  readonly waitedError: number;
  readonly runs: number;
}

/**
 * plan's simulation (lib/plan/cache-simulator.ts) for the same traffic, from empty caches: every model counts as one
 * unit of GPU memory, an instance holds `residentModels` units, and the disk holds every model.
 */
export function predictCache(input: PredictionInput): CachePrediction {
  const runs = input.runs ?? 30;
  const models = input.weights.length;
  const ones = new Float64Array(models).fill(1);
  const cold = new Float64Array(models).fill(input.coldSeconds);
  const ratios: number[] = [];
  const loads: number[] = [];
  const waited: number[] = [];
  for (let run = 0; run < runs; run++) {
    const trace = sampleTrace(input.weights, { count: input.requests, rps: input.rps, random: seededRandom((input.seed ?? 1) + run) });
    if (input.arrivals === 'even') trace.times.forEach((_, i, times) => (times[i] = i / input.rps));
    const result = simulateCache({
      gpuMiB: ones,
      diskMiB: ones,
      coldFromS3Seconds: cold,
      coldFromDiskSeconds: cold,
      instances: input.instances,
      gpuCapacityMiB: input.residentModels,
      diskCapacityMiB: models,
      trace,
      warmupRequests: 0,
    });
    ratios.push(result.hitRatio);
    loads.push(result.loads);
    waited.push(result.loads + result.waits);
  }
  const meanOf = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const sdOf = (xs: number[]) => {
    const m = meanOf(xs);
    return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / Math.max(1, xs.length - 1));
  };
  return {
    hitRatio: meanOf(ratios),
    hitRatioError: 2 * sdOf(ratios),
    loads: meanOf(loads),
    loadsError: 2 * sdOf(loads),
    waited: meanOf(waited),
    waitedError: 2 * sdOf(waited),
    runs,
  };
}
