// Plans a GPU multi-model endpoint before it exists: per model, the GPU memory it needs and whether it fits; per
// instance type, how many models stay resident and what the MME costs against one endpoint per model; and a
// simulation of the MME's cache over a traffic trace for 1..N instances. Pure: the bundles are read elsewhere.

import { findInstanceType, mmeInstanceTypeNames, notMmeReason, type GpuInstanceType } from '../catalog/instance-types';
import { onDemandHourlyPriceUsd, PRICES_DATE, PRICES_SOURCE, regionsPricing } from '../catalog/prices';
import { diagnostic, type Diagnostic } from '../diagnostics';
import { simulateCache, type CacheSimulationResult } from './cache-simulator';
import { compareHostingCost, type CostComparison } from './cost';
import { estimateColdStart, type ColdStartEstimate, type ColdStartParameters } from './load-time';
import { estimateModelMemory, MEMORY_ASSUMPTION, type ModelMemoryEstimate } from './memory-estimate';
import type { BundleFiles } from './read-bundles';
import { seededRandom } from './seeded-random';
import { sampleTrace, traceRequests, trafficWeights, type RequestTrace, type TrafficSpec } from './traffic';

export interface PlanOptions {
  /** SageMaker instance type, `ml.` prefix optional. */
  readonly instanceType: string;
  readonly region: string;
  /** Instances of the MME; the simulation covers 1..instances. */
  readonly instances: number;
  /**
   * USD per instance-hour, replacing the catalog's on-demand price. Required where the catalog has none for the type
   * in the region (the plan is refused with `plan-no-price` then).
   */
  readonly hourlyPriceUsd?: number;
  readonly traffic: TrafficSpec;
  /** Requests per second over all models (not used for a recorded trace). */
  readonly rps: number;
  /** Requests to simulate (a recorded trace is replayed whole instead). */
  readonly requests: number;
  /** Share of the requests, from the start, that only warm the caches. */
  readonly warmupFraction: number;
  readonly seed: number;
  readonly coldStart: ColdStartParameters;
  /** GPU memory kept back from models for the Triton process's CUDA context and allocator pools, MiB. */
  readonly gpuReserveMiB: number;
  /** Model cache disk per instance, GB; defaults to the NVMe instance store, or EBS_DEFAULT_GB. */
  readonly diskGb?: number;
  /** GPU memory per TargetModel name, GiB, replacing the estimate. */
  readonly memoryOverridesGiB?: ReadonlyMap<string, number>;
}

export const DEFAULT_GPU_RESERVE_MIB = 1024;
/** Assumed model cache volume on instance types without NVMe when `--disk-gb` is not given. */
export const EBS_DEFAULT_GB = 30;

/** One TargetModel as planned: its files (name, source, sizes) and what the plan derived from them. */
export interface PlannedModel
  extends Pick<BundleFiles, 'name' | 'source' | 'kind' | 'archiveBytes' | 'archiveBytesEstimated' | 'extractedBytes'> {
  /** GPU bytes the plan uses: the override when given, else the estimate. */
  readonly gpuBytes: number;
  readonly gpuEstimateBytes: number;
  readonly memorySource: 'estimate' | 'override';
  /** Whether it fits in the GPU memory models may use on one instance. */
  readonly fits: boolean;
  /** The Triton models inside (an ensemble and its steps). */
  readonly parts: readonly ModelMemoryEstimate[];
  readonly coldStart: ColdStartEstimate;
  /** Its share of the simulated requests. */
  readonly trafficShare: number;
}

export interface PlanReport {
  readonly instanceType: GpuInstanceType;
  readonly region: string;
  readonly price: { readonly hourlyUsd: number; readonly source: string };
  readonly capacity: {
    /** Nominal memory of the GPU (16 GiB for a T4), for reference only. */
    readonly gpuMemoryMiB: number;
    /** Memory of the GPU that CUDA reports as its total on this instance type: what the packing starts from. */
    readonly gpuUsableMiB: number;
    /** Where `gpuUsableMiB` comes from. */
    readonly gpuUsableSource: string;
    readonly gpuReserveMiB: number;
    /** GPU memory models may use on one instance: usable minus reserve. */
    readonly modelGpuMiB: number;
    readonly diskGb: number;
    readonly diskSource: 'nvme' | 'ebs-assumed' | 'option';
    /** Most models resident at once on one instance (smallest first). */
    readonly residentAtOnce: number;
    readonly totalGpuMiB: number;
    /** Instances that keep every model loaded at once (first-fit decreasing packing). */
    readonly instancesToHoldAll: number;
  };
  readonly models: readonly PlannedModel[];
  readonly cost: CostComparison;
  /** Absent when a model does not fit (there is nothing meaningful to simulate). */
  readonly simulation?: {
    readonly traffic: string;
    readonly rps: number;
    readonly requests: number;
    readonly warmupRequests: number;
    readonly seed: number;
    readonly curve: readonly CacheSimulationResult[];
  };
  readonly assumptions: readonly string[];
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** What a plan runs on: the instance type, its price and the GPU memory models may use, once the options are checked. */
export interface PlanTarget {
  readonly instanceType: GpuInstanceType;
  readonly hourlyPriceUsd: number;
  readonly priceSource: string;
  /** The GPU's usable memory (CUDA's total) minus the reserve. */
  readonly modelGpuMiB: number;
}

/**
 * Checks the options that need no model (instance type, price, GPU reserve): the problems a command line can have
 * before any file is read. One error at most, as a diagnostic; the target when there is none.
 */
export function checkPlanTarget(
  options: Pick<PlanOptions, 'instanceType' | 'region' | 'hourlyPriceUsd' | 'gpuReserveMiB'>,
): { target?: PlanTarget; diagnostics: Diagnostic[] } {
  const refuse = (code: string, message: string) => ({ diagnostics: [diagnostic('error', code, message, { file: '' })] });

  const instanceType = findInstanceType(options.instanceType);
  if (!instanceType) {
    return refuse(
      'plan-unknown-instance-type',
      `unknown instance type ${options.instanceType}; GPU multi-model endpoints run on ${mmeInstanceTypeNames().join(', ')}`,
    );
  }
  const notMme = notMmeReason(instanceType);
  if (notMme) return refuse('plan-instance-type-not-mme', notMme);

  const hourlyPriceUsd = options.hourlyPriceUsd ?? onDemandHourlyPriceUsd(instanceType.name, options.region);
  if (hourlyPriceUsd === undefined) {
    const covered = regionsPricing(instanceType.name);
    return refuse(
      'plan-no-price',
      `no on-demand price for ${instanceType.name} in ${options.region} in the catalog ` +
        `(${covered.length > 0 ? `it has one in ${covered.join(', ')} only` : 'it has none for that type'}); ` +
        'pass your price per instance-hour in USD with --price, e.g. from https://aws.amazon.com/sagemaker/pricing/',
    );
  }

  const modelGpuMiB = instanceType.usableGpuMemoryMiB - options.gpuReserveMiB;
  if (modelGpuMiB <= 0) {
    return refuse(
      'plan-gpu-reserve-too-large',
      `--gpu-reserve ${options.gpuReserveMiB} MiB leaves no GPU memory for models on ${instanceType.name} ` +
        `(${instanceType.usableGpuMemoryMiB.toLocaleString('en-US')} MiB usable); give a reserve below that`,
    );
  }
  const priceSource =
    options.hourlyPriceUsd !== undefined ? '--price' : `on-demand list price read ${PRICES_DATE}: ${PRICES_SOURCE}`;
  return { target: { instanceType, hourlyPriceUsd, priceSource, modelGpuMiB }, diagnostics: [] };
}

export function planEndpoint(
  bundles: readonly BundleFiles[],
  options: PlanOptions,
): { report?: PlanReport; diagnostics: Diagnostic[] } {
  const checked = checkPlanTarget(options);
  if (!checked.target) return { diagnostics: checked.diagnostics };
  const { instanceType, hourlyPriceUsd, priceSource, modelGpuMiB } = checked.target;
  const gpuUsableMiB = instanceType.usableGpuMemoryMiB;

  const diagnostics: Diagnostic[] = [];
  const error = (code: string, message: string, file = '', model?: string) =>
    diagnostics.push(diagnostic('error', code, message, { file, ...(model ? { model } : {}) }));

  const { diskGb, diskSource } =
    options.diskGb !== undefined
      ? { diskGb: options.diskGb, diskSource: 'option' as const }
      : instanceType.instanceStorage.kind === 'nvme'
        ? { diskGb: instanceType.instanceStorage.sizeGb, diskSource: 'nvme' as const }
        : { diskGb: EBS_DEFAULT_GB, diskSource: 'ebs-assumed' as const };
  const diskMiB = (diskGb * 1e9) / MiB;

  const overrides = options.memoryOverridesGiB ?? new Map<string, number>();
  const names = new Set(bundles.map((b) => b.name));
  for (const name of overrides.keys()) {
    if (!names.has(name)) {
      error(
        'plan-unknown-memory-override',
        `--memory names ${name}, which is not one of the planned models (${[...names].join(', ')})`,
      );
    }
  }

  const models = bundles.map((bundle): Omit<PlannedModel, 'trafficShare'> => {
    const parts = bundle.models.map(estimateModelMemory);
    const gpuEstimateBytes = parts.reduce((sum, p) => sum + p.gpuBytes, 0);
    const override = overrides.get(bundle.name);
    const gpuBytes = override !== undefined ? Math.ceil(override * GiB) : gpuEstimateBytes;
    return {
      name: bundle.name,
      source: bundle.source,
      kind: bundle.kind,
      archiveBytes: bundle.archiveBytes,
      archiveBytesEstimated: bundle.archiveBytesEstimated,
      extractedBytes: bundle.extractedBytes,
      gpuBytes,
      gpuEstimateBytes,
      memorySource: override !== undefined ? 'override' : 'estimate',
      fits: gpuBytes / MiB <= modelGpuMiB,
      parts,
      coldStart: estimateColdStart(
        {
          archiveBytes: bundle.archiveBytes,
          extractedBytes: bundle.extractedBytes,
          gpuBytes,
          // An ensemble loads in no time next to its steps.
          tritonModels: parts.filter((p) => p.backend !== 'ensemble').length,
          pythonEnvBytes: parts.reduce((sum, p) => sum + p.pythonEnvBytes, 0),
        },
        options.coldStart,
      ),
    };
  });

  for (const model of models) {
    if (!model.fits) {
      const why = model.memorySource === 'override' ? 'from --memory' : describeParts(model.parts);
      error(
        'plan-model-too-large',
        `${model.name} needs ${gib(model.gpuBytes)} GiB of GPU memory (${why}), ` +
          `more than the ${gib(modelGpuMiB * MiB)} GiB models can use on ${instanceType.name} ` +
          `(${gpuUsableMiB.toLocaleString('en-US')} MiB usable on its ${instanceType.gpuModel} ` +
          `minus ${options.gpuReserveMiB} MiB reserved). ` +
          `Choose an instance type with a larger GPU, split the ensemble into smaller archives, or, if the estimate ` +
          `is too high, give the measured figure with --memory ${model.name}=GiB.`,
        model.source,
        model.name,
      );
    }
    const diskNeed = (model.archiveBytes + model.extractedBytes) / MiB;
    if (diskNeed > diskMiB) {
      error(
        'plan-model-too-large-for-disk',
        `${model.name} needs ${gib(diskNeed * MiB)} GiB of disk (archive + extracted copy), more than the ${diskGb} GB ` +
          `model cache of ${instanceType.name}${diskSource === 'ebs-assumed' ? ' (assumed; set --disk-gb)' : ''}`,
        model.source,
        model.name,
      );
    }
    if (model.parts.some((p) => p.backend === 'tensorflow')) {
      diagnostics.push(
        diagnostic(
          'warning',
          'plan-tensorflow-unload',
          `${model.name} uses the TensorFlow backend, which does not return GPU memory when a model is unloaded ` +
            `(AWS's Triton ensemble MME notebook): on an MME that evicts models the real footprint grows beyond ` +
            `this plan; keep TensorFlow models always resident or convert them to TensorRT or ONNX`,
          { file: model.source, model: model.name },
        ),
      );
    }
  }

  // Traffic: weights for the shares, and the trace to replay.
  const modelNames = models.map((m) => m.name);
  let trace: RequestTrace | undefined;
  let shares: Float64Array<ArrayBufferLike> = new Float64Array(models.length);
  if (options.traffic.kind === 'trace') {
    const result = traceRequests(options.traffic, modelNames);
    diagnostics.push(...result.diagnostics);
    trace = result.trace;
    if (trace) for (const m of trace.models) shares[m] = shares[m]! + 1;
  } else {
    const result = trafficWeights(options.traffic, modelNames);
    diagnostics.push(...result.diagnostics);
    shares = result.weights;
    if (!result.diagnostics.some((d) => d.severity === 'error') && models.length > 0 && shares.some((w) => w > 0)) {
      trace = sampleTrace(shares, { count: options.requests, rps: options.rps, random: seededRandom(options.seed) });
    }
  }
  const shareTotal = shares.reduce((sum, w) => sum + w, 0);
  const planned: PlannedModel[] = models.map((m, i) => ({
    ...m,
    trafficShare: shareTotal > 0 ? shares[i]! / shareTotal : 0,
  }));

  const gpuMiB = planned.map((m) => m.gpuBytes / MiB);
  const capacity = {
    gpuMemoryMiB: instanceType.gpuMemoryMiB,
    gpuUsableMiB,
    gpuUsableSource: instanceType.usableGpuMemorySource,
    gpuReserveMiB: options.gpuReserveMiB,
    modelGpuMiB,
    diskGb,
    diskSource,
    residentAtOnce: residentAtOnce(gpuMiB, modelGpuMiB),
    totalGpuMiB: Math.round(gpuMiB.reduce((sum, x) => sum + x, 0)),
    instancesToHoldAll: planned.every((m) => m.fits) ? binsFirstFitDecreasing(gpuMiB, modelGpuMiB) : 0,
  };

  const allFit = !diagnostics.some((d) => d.severity === 'error');
  let simulation: PlanReport['simulation'];
  if (allFit && trace) {
    const warmupRequests = Math.floor(trace.models.length * options.warmupFraction);
    const input = {
      gpuMiB,
      diskMiB: planned.map((m) => (m.archiveBytes + m.extractedBytes) / MiB),
      coldFromS3Seconds: planned.map((m) => m.coldStart.fromS3Seconds),
      coldFromDiskSeconds: planned.map((m) => m.coldStart.fromDiskSeconds),
      gpuCapacityMiB: modelGpuMiB,
      diskCapacityMiB: diskMiB,
      trace,
      warmupRequests,
    };
    const curve: CacheSimulationResult[] = [];
    for (let n = 1; n <= options.instances; n++) curve.push(simulateCache({ ...input, instances: n }));
    simulation = {
      traffic: describeTraffic(options.traffic),
      rps: options.traffic.kind === 'trace' ? observedRps(trace) : options.rps,
      requests: trace.models.length,
      warmupRequests,
      seed: options.seed,
      curve,
    };
  }

  const report: PlanReport = {
    instanceType,
    region: options.region,
    price: { hourlyUsd: hourlyPriceUsd, source: priceSource },
    capacity,
    models: planned,
    cost: compareHostingCost({ hourlyPriceUsd, mmeInstances: options.instances, models: planned.length }),
    ...(simulation ? { simulation } : {}),
    assumptions: assumptions(options, instanceType, diskSource),
  };
  return { report, diagnostics };
}

function assumptions(
  options: PlanOptions,
  instanceType: GpuInstanceType,
  diskSource: PlanReport['capacity']['diskSource'],
): string[] {
  const c = options.coldStart;
  return [
    MEMORY_ASSUMPTION,
    `Usable GPU memory: ${instanceType.usableGpuMemoryMiB.toLocaleString('en-US')} MiB per ${instanceType.gpuModel}, ` +
      `not its nominal ${instanceType.gpuMemoryMiB.toLocaleString('en-US')} MiB; source: ${instanceType.usableGpuMemorySource}.`,
    `${options.gpuReserveMiB} MiB of GPU memory per instance is kept for the Triton server's CUDA context and allocator pools.`,
    `Cold start = download archive at ${c.downloadMBps} MB/s + extract at ${c.extractMBps} MB/s + load GPU bytes at ` +
      `${c.loadMBps} MB/s + ${c.perModelSeconds} s per Triton model other than an ensemble (+ unpacking conda-pack ` +
      `environments at the extract rate); a model still on the instance's disk needs the load only. Loads do not ` +
      'queue behind each other.',
    'Routing: to an instance with the model loaded, else one with it on disk, else the one with the most free GPU ' +
      'memory, else the one whose least-recently-used model is oldest; eviction is least-recently-used, from GPU ' +
      'memory (the files stay on disk) and from disk (archive + extracted copy).',
    ...(diskSource === 'ebs-assumed' ? [`The model cache volume is assumed to be ${EBS_DEFAULT_GB} GB (EBS); set --disk-gb.`] : []),
    `Cost: on-demand hourly price × ${730} h a month / ${8760} h a year; one single-model endpoint means one instance per model.`,
    'A repository is costed at its unpacked size; pass the packed .tar.gz for the exact download size.',
  ];
}

function describeTraffic(spec: TrafficSpec): string {
  switch (spec.kind) {
    case 'uniform':
      return 'uniform';
    case 'zipf':
      return `zipf:${spec.exponent}`;
    case 'weights':
      return `weights from ${spec.file}`;
    case 'trace':
      return `trace ${spec.file}`;
  }
}

function observedRps(trace: RequestTrace): number {
  const n = trace.times.length;
  const span = n > 1 ? trace.times[n - 1]! - trace.times[0]! : 0;
  return span > 0 ? (n - 1) / span : 0;
}

function describeParts(parts: readonly ModelMemoryEstimate[]): string {
  return parts
    .filter((p) => p.gpuBytes > 0)
    .map((p) => `${p.model} ${p.backend} ${gib(p.gpuBytes)} GiB`)
    .join(', ');
}

function gib(bytes: number): string {
  return (bytes / GiB).toFixed(1);
}

/** How many of the models fit together on one GPU, smallest first (the most that can ever be resident at once). */
export function residentAtOnce(gpuMiB: readonly number[], capacityMiB: number): number {
  const sorted = [...gpuMiB].sort((a, b) => a - b);
  let used = 0;
  let count = 0;
  for (const size of sorted) {
    if (used + size > capacityMiB) break;
    used += size;
    count++;
  }
  return count;
}

/** Instances needed to keep every model loaded at once, by first-fit decreasing (within 11/9 of the optimum). */
export function binsFirstFitDecreasing(gpuMiB: readonly number[], capacityMiB: number): number {
  const free: number[] = [];
  for (const size of [...gpuMiB].sort((a, b) => b - a)) {
    const bin = free.findIndex((f) => f >= size);
    if (bin >= 0) free[bin]! -= size;
    else free.push(capacityMiB - size);
  }
  return free.length;
}
