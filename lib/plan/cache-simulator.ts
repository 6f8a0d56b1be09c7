// Simulates how a SageMaker GPU multi-model endpoint caches models over a request trace: two least-recently-used
// tiers per instance (GPU memory, then the instance's disk), affinity routing, and the time a cold model takes to
// become ready. Pure and O(1) per request (intrusive doubly linked lists over typed arrays), so a million requests
// over ten thousand models take well under a second.

import type { RequestTrace } from './traffic';

/** What the simulator knows about each model (index i describes model i), and about the fleet. */
export interface CacheSimulationInput {
  /** GPU memory each model holds while loaded, MiB. */
  readonly gpuMiB: ArrayLike<number>;
  /** Disk each model takes once downloaded and extracted, MiB. */
  readonly diskMiB: ArrayLike<number>;
  /** Seconds from request to ready when the model must come from S3 (download + extract + load). */
  readonly coldFromS3Seconds: ArrayLike<number>;
  /** Seconds from request to ready when the model is still on the instance's disk (load only). */
  readonly coldFromDiskSeconds: ArrayLike<number>;
  readonly instances: number;
  /** GPU memory per instance available to models, MiB. */
  readonly gpuCapacityMiB: number;
  /** Disk per instance available to the model cache, MiB. */
  readonly diskCapacityMiB: number;
  readonly trace: RequestTrace;
  /** Requests at the start of the trace that warm the caches and are not counted. */
  readonly warmupRequests: number;
}

export interface CacheSimulationResult {
  readonly instances: number;
  /** Requests counted (after warm-up). */
  readonly requests: number;
  /** Requests whose model was loaded and ready (what CloudWatch counts as ModelCacheHit). */
  readonly hits: number;
  /** Requests that found their model still loading after another request triggered the load. */
  readonly waits: number;
  /** Loads triggered: from S3 plus from the instance's disk. */
  readonly loads: number;
  readonly loadsFromS3: number;
  readonly loadsFromDisk: number;
  /** Models unloaded from GPU memory to make room. */
  readonly evictions: number;
  /** Models deleted from an instance's disk to make room. */
  readonly diskEvictions: number;
  /** hits / requests. */
  readonly hitRatio: number;
  /** Length of the counted window, seconds. */
  readonly durationSeconds: number;
  readonly loadsPerHour: number;
  readonly loadsFromS3PerHour: number;
  /** Mean time a request that missed the cache (cold or waiting) spent waiting for its model, seconds. */
  readonly meanColdLatencySeconds: number;
  readonly maxColdLatencySeconds: number;
  /** Total wait spread over every counted request, seconds. */
  readonly meanAddedLatencySeconds: number;
  /** Models loaded in GPU memory at the end of the trace, summed over instances. */
  readonly residentModels: number;
}

const NONE = -1;

/**
 * Replays `trace` against `instances` instances. Routing, as SageMaker describes it for MMEs: a request goes to an
 * instance that has its model loaded; otherwise to the instance that still has it on disk; otherwise to the
 * instance with the most free GPU memory that can take it without evicting, or failing that the instance whose
 * least-recently-used model is the oldest. Loading evicts least-recently-used models until the new one fits.
 * Load times do not queue behind one another (Triton loads models in parallel).
 */
export function simulateCache(input: CacheSimulationInput): CacheSimulationResult {
  const { instances, trace } = input;
  // Copies into typed arrays keep every access in the loop below monomorphic, whatever array type the caller used.
  const gpuMiB = Float64Array.from(input.gpuMiB);
  const diskMiB = Float64Array.from(input.diskMiB);
  const coldFromS3Seconds = Float64Array.from(input.coldFromS3Seconds);
  const coldFromDiskSeconds = Float64Array.from(input.coldFromDiskSeconds);
  const gpuCapacity = input.gpuCapacityMiB;
  const diskCapacity = input.diskCapacityMiB;
  const modelCount = gpuMiB.length;
  if (!Number.isInteger(instances) || instances < 1) throw new RangeError(`instances must be ≥ 1, got ${instances}`);
  for (let m = 0; m < modelCount; m++) {
    if (gpuMiB[m]! > gpuCapacity) throw new RangeError(`model ${m} needs ${gpuMiB[m]} MiB, more than ${gpuCapacity}`);
    if (diskMiB[m]! > diskCapacity) {
      throw new RangeError(`model ${m} needs ${diskMiB[m]} MiB of disk, more than ${diskCapacity}`);
    }
  }

  // Two tiers per instance: GPU memory, and the disk that keeps downloaded archives after an unload. A model
  // loaded in GPU memory is always on that instance's disk too.
  const gpu = new RecencyLists(modelCount, instances);
  const disk = new RecencyLists(modelCount, instances);
  const readyAt = new Float64Array(modelCount);
  const lastUsed = new Float64Array(modelCount);

  // Plain locals, not captured by any closure, so that the loop keeps them in registers.
  let hits = 0;
  let waits = 0;
  let loadsFromS3 = 0;
  let loadsFromDisk = 0;
  let evictions = 0;
  let diskEvictions = 0;
  let waitedSeconds = 0;
  let maxWait = 0;

  const count = trace.models.length;
  const warmup = Math.min(Math.max(0, Math.floor(input.warmupRequests)), count);
  for (let r = 0; r < count; r++) {
    const m = trace.models[r]!;
    const t = trace.times[r]!;
    const counted = r >= warmup;
    let i = gpu.at[m]!;
    let wait = 0;
    if (i !== NONE) {
      gpu.touch(i, m);
      disk.touch(i, m);
      if (readyAt[m]! <= t) {
        if (counted) hits++;
      } else {
        wait = readyAt[m]! - t;
        if (counted) waits++;
      }
    } else {
      i = disk.at[m]!;
      const onDisk = i !== NONE;
      if (onDisk) {
        disk.touch(i, m);
      } else {
        i = instances === 1 ? 0 : chooseInstance(gpu, gpuCapacity, gpuMiB[m]!, lastUsed);
        while (disk.used[i]! + diskMiB[m]! > diskCapacity && disk.tail[i] !== NONE) {
          const victim = disk.tail[i]!;
          disk.remove(i, victim, diskMiB[victim]!);
          if (counted) diskEvictions++;
          // Only reachable when the disk is smaller than what GPU memory holds: the model goes with its files.
          if (gpu.at[victim] === i) {
            gpu.remove(i, victim, gpuMiB[victim]!);
            if (counted) evictions++;
          }
        }
        disk.add(i, m, diskMiB[m]!);
      }
      while (gpu.used[i]! + gpuMiB[m]! > gpuCapacity && gpu.tail[i] !== NONE) {
        const victim = gpu.tail[i]!;
        gpu.remove(i, victim, gpuMiB[victim]!);
        if (counted) evictions++;
      }
      gpu.add(i, m, gpuMiB[m]!);
      wait = onDisk ? coldFromDiskSeconds[m]! : coldFromS3Seconds[m]!;
      readyAt[m] = t + wait;
      if (counted) {
        if (onDisk) loadsFromDisk++;
        else loadsFromS3++;
      }
    }
    lastUsed[m] = t;
    if (counted && wait > 0) {
      waitedSeconds += wait;
      if (wait > maxWait) maxWait = wait;
    }
  }

  const requests = count - warmup;
  const loads = loadsFromS3 + loadsFromDisk;
  const durationSeconds = windowSeconds(trace.times, warmup);
  const perHour = (n: number) => (durationSeconds > 0 ? (n * 3600) / durationSeconds : 0);
  let residentModels = 0;
  for (let m = 0; m < modelCount; m++) if (gpu.at[m] !== NONE) residentModels++;
  return {
    instances,
    requests,
    hits,
    waits,
    loads,
    loadsFromS3,
    loadsFromDisk,
    evictions,
    diskEvictions,
    hitRatio: requests > 0 ? hits / requests : 0,
    durationSeconds,
    loadsPerHour: perHour(loads),
    loadsFromS3PerHour: perHour(loadsFromS3),
    meanColdLatencySeconds: loads + waits > 0 ? waitedSeconds / (loads + waits) : 0,
    maxColdLatencySeconds: maxWait,
    meanAddedLatencySeconds: requests > 0 ? waitedSeconds / requests : 0,
    residentModels,
  };
}

/**
 * One least-recently-used list per instance over the same models, as an intrusive doubly linked list in typed
 * arrays: a model is on at most one instance's list (requests go where the model already is), so one pair of
 * prev/next arrays serves all instances and every operation is O(1).
 */
class RecencyLists {
  /** The instance whose list holds each model, or NONE. */
  readonly at: Int32Array;
  readonly head: Int32Array;
  /** The least recently used model of each instance, or NONE. */
  readonly tail: Int32Array;
  /** MiB held per instance. */
  readonly used: Float64Array;
  private readonly prev: Int32Array;
  private readonly next: Int32Array;

  constructor(models: number, instances: number) {
    this.at = new Int32Array(models).fill(NONE);
    this.prev = new Int32Array(models);
    this.next = new Int32Array(models);
    this.head = new Int32Array(instances).fill(NONE);
    this.tail = new Int32Array(instances).fill(NONE);
    this.used = new Float64Array(instances);
  }

  add(i: number, m: number, size: number): void {
    this.at[m] = i;
    this.used[i] = this.used[i]! + size;
    this.pushFront(i, m);
  }

  remove(i: number, m: number, size: number): void {
    this.unlink(i, m);
    this.at[m] = NONE;
    this.used[i] = this.used[i]! - size;
  }

  /** Marks `m` the most recently used model of instance `i`. */
  touch(i: number, m: number): void {
    if (this.head[i] === m) return;
    this.unlink(i, m);
    this.pushFront(i, m);
  }

  private unlink(i: number, m: number): void {
    const p = this.prev[m]!;
    const n = this.next[m]!;
    if (p === NONE) this.head[i] = n;
    else this.next[p] = n;
    if (n === NONE) this.tail[i] = p;
    else this.prev[n] = p;
  }

  private pushFront(i: number, m: number): void {
    const h = this.head[i]!;
    this.prev[m] = NONE;
    this.next[m] = h;
    if (h === NONE) this.tail[i] = m;
    else this.prev[h] = m;
    this.head[i] = m;
  }
}

/**
 * Where a model no instance has goes: the instance with the most free GPU memory that takes it without evicting,
 * else the instance whose least-recently-used model is the oldest (so the fleet behaves like one LRU cache).
 */
function chooseInstance(gpu: RecencyLists, capacity: number, size: number, lastUsed: Float64Array): number {
  const instances = gpu.used.length;
  let best = NONE;
  let bestFree = -1;
  for (let i = 0; i < instances; i++) {
    const free = capacity - gpu.used[i]!;
    if (free >= size && free > bestFree) {
      best = i;
      bestFree = free;
    }
  }
  if (best !== NONE) return best;
  let oldest = Infinity;
  for (let i = 0; i < instances; i++) {
    const tail = gpu.tail[i]!;
    const age = tail === NONE ? -Infinity : lastUsed[tail]!;
    if (age < oldest) {
      oldest = age;
      best = i;
    }
  }
  return best;
}

/** The counted window: from the first counted request to the last, plus one mean gap so one request is not 0 s. */
function windowSeconds(times: Float64Array, warmup: number): number {
  const n = times.length - warmup;
  if (n <= 0) return 0;
  const span = times[times.length - 1]! - times[warmup]!;
  return n > 1 ? span + span / (n - 1) : 0;
}
