import fc from 'fast-check';
import { simulateCache, type CacheSimulationInput } from '../../lib/plan/cache-simulator';
import { seededRandom } from '../../lib/plan/seeded-random';
import { sampleTrace, type RequestTrace } from '../../lib/plan/traffic';

/** Equal-size models (1 MiB each), so capacity in MiB is capacity in models. */
function equalModels(count: number, overrides: Partial<CacheSimulationInput> & { trace: RequestTrace }): CacheSimulationInput {
  return {
    gpuMiB: new Float64Array(count).fill(1),
    diskMiB: new Float64Array(count).fill(1),
    coldFromS3Seconds: new Float64Array(count).fill(10),
    coldFromDiskSeconds: new Float64Array(count).fill(2),
    instances: 1,
    gpuCapacityMiB: count,
    diskCapacityMiB: 1e9,
    warmupRequests: 0,
    ...overrides,
  };
}

/** Slow traffic (a request every 1,000 s on average) so that no request arrives while a model is still loading. */
function trafficTrace(weights: ArrayLike<number>, count: number, seed = 7, rps = 0.001): RequestTrace {
  return sampleTrace(weights, { count, rps, random: seededRandom(seed) });
}

function zipfWeights(models: number, exponent: number): Float64Array {
  return Float64Array.from({ length: models }, (_, i) => 1 / Math.pow(i + 1, exponent));
}

describe('cache simulator', () => {
  it('loads every model exactly once when all of them fit, and then always hits', () => {
    const trace = trafficTrace(new Float64Array(50).fill(1), 20_000);
    const all = simulateCache(equalModels(50, { trace, gpuCapacityMiB: 50 }));
    expect(all.loads).toBe(50);
    expect(all.loadsFromS3).toBe(50);
    expect(all.evictions).toBe(0);
    expect(all.residentModels).toBe(50);

    const afterWarmup = simulateCache(equalModels(50, { trace, gpuCapacityMiB: 50, warmupRequests: 5_000 }));
    expect(afterWarmup.hitRatio).toBe(1);
    expect(afterWarmup.loadsPerHour).toBe(0);
    expect(afterWarmup.requests).toBe(15_000);
  });

  it('hits about K/M of uniform requests over M models with room for K (±0.01)', () => {
    const trace = trafficTrace(new Float64Array(100).fill(1), 200_000);
    for (const k of [10, 25, 60]) {
      const result = simulateCache(equalModels(100, { trace, gpuCapacityMiB: k, warmupRequests: 20_000 }));
      expect(Math.abs(result.hitRatio - k / 100)).toBeLessThan(0.01);
      expect(result.residentModels).toBe(k);
    }
  });

  it('pools the memory of several instances: N instances with room for K each hit about N·K/M (±0.01)', () => {
    const trace = trafficTrace(new Float64Array(100).fill(1), 200_000);
    const result = simulateCache(equalModels(100, { trace, gpuCapacityMiB: 10, instances: 3, warmupRequests: 20_000 }));
    expect(Math.abs(result.hitRatio - 0.3)).toBeLessThan(0.01);
    expect(result.residentModels).toBe(30);
  });

  it('hits more often under zipf skew than under uniform traffic, and more with a steeper skew', () => {
    const run = (weights: Float64Array) =>
      simulateCache(equalModels(1000, { trace: trafficTrace(weights, 100_000), gpuCapacityMiB: 50, warmupRequests: 10_000 }))
        .hitRatio;
    const uniform = run(new Float64Array(1000).fill(1));
    const zipf08 = run(zipfWeights(1000, 0.8));
    const zipf12 = run(zipfWeights(1000, 1.2));
    expect(uniform).toBeLessThan(0.07);
    expect(zipf08).toBeGreaterThan(uniform + 0.2);
    expect(zipf12).toBeGreaterThan(zipf08 + 0.1);
  });

  it('never holds more GPU memory than the instance has, evicting the least recently used model', () => {
    // Sizes 6, 5, 4 MiB on a 10 MiB GPU; requests 0, 1, 2, 0.
    const trace: RequestTrace = { models: Int32Array.from([0, 1, 2, 0]), times: Float64Array.from([0, 100, 200, 300]) };
    const result = simulateCache({
      ...equalModels(3, { trace }),
      gpuMiB: [6, 5, 4],
      gpuCapacityMiB: 10,
    });
    // 0 loads; 1 evicts 0 (6+5 > 10); 2 fits next to 1 (5+4); 0 evicts 1, the older, and then fits next to 2.
    expect(result.loads).toBe(4);
    expect(result.evictions).toBe(2);
    expect(result.residentModels).toBe(2);
    expect(result.hits).toBe(0);
  });

  it('reloads a model evicted from GPU memory from the instance disk, not from S3', () => {
    const trace: RequestTrace = { models: Int32Array.from([0, 1, 0, 1]), times: Float64Array.from([0, 100, 200, 300]) };
    const result = simulateCache(equalModels(2, { trace, gpuCapacityMiB: 1 }));
    expect(result.loadsFromS3).toBe(2);
    expect(result.loadsFromDisk).toBe(2);
    expect(result.meanColdLatencySeconds).toBe((10 + 10 + 2 + 2) / 4);
  });

  it('downloads again once the disk cache has evicted the model too', () => {
    const trace: RequestTrace = { models: Int32Array.from([0, 1, 0]), times: Float64Array.from([0, 100, 200]) };
    const result = simulateCache(equalModels(2, { trace, gpuCapacityMiB: 1, diskCapacityMiB: 1 }));
    expect(result.loadsFromS3).toBe(3);
    expect(result.diskEvictions).toBe(2);
  });

  it('counts requests that arrive while their model is still loading as waits, not hits', () => {
    // Load takes 10 s from S3; requests at 0, 1, 5 and 11 s.
    const trace: RequestTrace = { models: Int32Array.from([0, 0, 0, 0]), times: Float64Array.from([0, 1, 5, 11]) };
    const result = simulateCache(equalModels(1, { trace }));
    expect(result).toMatchObject({ loads: 1, waits: 2, hits: 1 });
    expect(result.maxColdLatencySeconds).toBe(10);
    expect(result.meanColdLatencySeconds).toBeCloseTo((10 + 9 + 5) / 3, 10);
  });

  it('sends a model to the instance that already has it loaded', () => {
    const trace: RequestTrace = {
      models: Int32Array.from([0, 1, 2, 0, 1, 2]),
      times: Float64Array.from([0, 100, 200, 300, 400, 500]),
    };
    const result = simulateCache(equalModels(3, { trace, gpuCapacityMiB: 1, instances: 3 }));
    expect(result.loads).toBe(3);
    expect(result.hits).toBe(3);
  });

  it('gives the same result for the same trace', () => {
    const input = equalModels(200, { trace: trafficTrace(zipfWeights(200, 1), 50_000, 42), gpuCapacityMiB: 30 });
    expect(simulateCache(input)).toEqual(simulateCache(input));
  });

  it('rejects a model larger than the GPU instead of looping', () => {
    const trace: RequestTrace = { models: Int32Array.from([0]), times: Float64Array.from([0]) };
    expect(() => simulateCache({ ...equalModels(1, { trace }), gpuMiB: [2], gpuCapacityMiB: 1 })).toThrow(RangeError);
  });

  it('accounts for every counted request as a hit, a wait or a load (any trace, sizes and fleet)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 8, max: 30 }),
        (sizes, picks, instances, capacity) => {
          const models = Int32Array.from(picks, (p) => p % sizes.length);
          const trace = { models, times: Float64Array.from(picks, (_, i) => i * 3) };
          const result = simulateCache({ ...equalModels(sizes.length, { trace }), gpuMiB: sizes, gpuCapacityMiB: capacity, instances });
          expect(result.hits + result.waits + result.loads).toBe(picks.length);
          expect(result.loadsFromS3).toBeGreaterThanOrEqual(new Set(models).size);
        },
      ),
    );
  });

  it('never hits less with more room, for equal sizes and instant loads (LRU is a stack algorithm)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 15 }), { minLength: 1, maxLength: 400 }),
        fc.integer({ min: 1, max: 15 }),
        (picks, k) => {
          const trace = { models: Int32Array.from(picks), times: Float64Array.from(picks, (_, i) => i) };
          const instant = { coldFromS3Seconds: new Float64Array(16), coldFromDiskSeconds: new Float64Array(16) };
          const hits = (capacity: number) => simulateCache({ ...equalModels(16, { trace, gpuCapacityMiB: capacity }), ...instant }).hits;
          expect(hits(k + 1)).toBeGreaterThanOrEqual(hits(k));
        },
      ),
    );
  });
});
