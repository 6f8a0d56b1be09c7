import { DEFAULT_COLD_START } from '../../lib/plan/load-time';
import { planEndpoint, type PlanOptions } from '../../lib/plan/plan';
import type { BundleFiles } from '../../lib/plan/read-bundles';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** A TargetModel holding one TensorRT model whose engine is `engineMiB` (GPU estimate: engine + 256 MiB). */
function trtBundle(name: string, engineMiB: number): BundleFiles {
  return {
    name,
    source: `/models/${name}`,
    kind: 'archive',
    archiveBytes: engineMiB * MiB,
    archiveBytesEstimated: false,
    extractedBytes: engineMiB * MiB,
    models: [{ name: 'engine', config: { platform: 'tensorrt_plan' }, files: [{ path: '1/model.plan', size: engineMiB * MiB }] }],
  };
}

const options: PlanOptions = {
  instanceType: 'ml.g4dn.xlarge',
  region: 'us-east-1',
  instances: 1,
  traffic: { kind: 'uniform' },
  rps: 1,
  requests: 5_000,
  warmupFraction: 0.1,
  seed: 1,
  coldStart: DEFAULT_COLD_START,
  gpuReserveMiB: 1024,
};

describe('planning an endpoint', () => {
  it('reproduces the seed: two ensembles on one ml.g4dn.4xlarge in us-east-1 save 50 %, one instance-year', () => {
    const { report, diagnostics } = planEndpoint([trtBundle('model_tf_dali.tar.gz', 100), trtBundle('model_trt_python.tar.gz', 90)], {
      ...options,
      instanceType: 'ml.g4dn.4xlarge',
    });
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(report!.cost).toMatchObject({ savingPercent: 50, hourlyPriceUsd: 1.505 });
    expect(report!.cost!.savingPerYearUsd).toBeCloseTo(1.505 * 8760, 2);
    expect(report!.cost!.savingPerYearUsd).toBeGreaterThan(13_000);
    expect(report!.price.source).toMatch(/on-demand list price read \d{4}-\d{2}-\d{2}/);
  });

  it('rejects a model bigger than the GPU, naming it, and still reports the models that fit', () => {
    // 15 GiB usable on a 16 GiB T4; 15 GiB + 256 MiB does not fit.
    const { report, diagnostics } = planEndpoint([trtBundle('small.tar.gz', 100), trtBundle('huge.tar.gz', 15 * 1024)], options);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'plan-model-too-large', model: 'huge.tar.gz' });
    expect(errors[0]!.message).toMatch(/huge\.tar\.gz needs 15\.3 GiB .* more than the 15\.0 GiB .* ml\.g4dn\.xlarge/);
    expect(report!.models.map((m) => [m.name, m.fits])).toEqual([
      ['small.tar.gz', true],
      ['huge.tar.gz', false],
    ]);
    expect(report!.simulation).toBeUndefined();
  });

  it('accepts a model that fills the usable GPU memory exactly', () => {
    const { diagnostics, report } = planEndpoint([trtBundle('exact.tar.gz', 15 * 1024 - 256)], options);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(report!.models[0]!.gpuBytes).toBe(15 * GiB);
    expect(report!.capacity.residentAtOnce).toBe(1);
  });

  it('lets --memory replace the estimate, both ways', () => {
    const tooBig = planEndpoint([trtBundle('a.tar.gz', 100)], { ...options, memoryOverridesGiB: new Map([['a.tar.gz', 20]]) });
    expect(tooBig.diagnostics).toEqual([expect.objectContaining({ code: 'plan-model-too-large' })]);
    expect(tooBig.diagnostics[0]!.message).toContain('from --memory');
    const fits = planEndpoint([trtBundle('b.tar.gz', 16 * 1024)], { ...options, memoryOverridesGiB: new Map([['b.tar.gz', 2]]) });
    expect(fits.diagnostics).toEqual([]);
    expect(fits.report!.models[0]).toMatchObject({ gpuBytes: 2 * GiB, memorySource: 'override' });
  });

  it('fits a model that is too large for a T4 on an A10G', () => {
    const { diagnostics } = planEndpoint([trtBundle('big.tar.gz', 20 * 1024)], { ...options, instanceType: 'ml.g5.xlarge' });
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('rejects a --memory override for a model that is not planned', () => {
    const { diagnostics } = planEndpoint([trtBundle('a.tar.gz', 1)], { ...options, memoryOverridesGiB: new Map([['b.tar.gz', 1]]) });
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'plan-unknown-memory-override' })]);
  });

  it('rejects unknown and multi-GPU instance types, listing the ones an MME accepts', () => {
    const unknown = planEndpoint([trtBundle('a.tar.gz', 1)], { ...options, instanceType: 'ml.g9.xlarge' });
    expect(unknown.diagnostics[0]).toMatchObject({ code: 'plan-unknown-instance-type' });
    expect(unknown.diagnostics[0]!.message).toContain('ml.g4dn.xlarge');
    const multi = planEndpoint([trtBundle('a.tar.gz', 1)], { ...options, instanceType: 'ml.g5.12xlarge' });
    expect(multi.diagnostics[0]).toMatchObject({ code: 'plan-instance-type-not-mme' });
  });

  it('warns and leaves out the cost when there is no price, and uses --price when given', () => {
    const none = planEndpoint([trtBundle('a.tar.gz', 1)], { ...options, region: 'eu-west-3' });
    expect(none.diagnostics).toEqual([expect.objectContaining({ severity: 'warning', code: 'plan-no-price' })]);
    expect(none.report!.cost).toBeUndefined();
    const given = planEndpoint([trtBundle('a.tar.gz', 1)], { ...options, region: 'eu-west-3', hourlyPriceUsd: 2 });
    expect(given.report!.cost!.multiModel.perMonthUsd).toBe(1460);
    expect(given.report!.price.source).toBe('--price');
  });

  it('simulates 1..N instances on the same trace, so more instances never hit less under uniform traffic', () => {
    const bundles = Array.from({ length: 40 }, (_, i) => trtBundle(`m${i}.tar.gz`, 2 * 1024));
    const { report } = planEndpoint(bundles, { ...options, instances: 4, requests: 20_000, rps: 0.01 });
    const curve = report!.simulation!.curve;
    expect(curve.map((p) => p.instances)).toEqual([1, 2, 3, 4]);
    // 2.25 GiB each: 6 fit in 15 GiB per instance.
    expect(report!.capacity.residentAtOnce).toBe(6);
    expect(report!.capacity.instancesToHoldAll).toBe(7);
    for (let i = 1; i < curve.length; i++) expect(curve[i]!.hitRatio).toBeGreaterThan(curve[i - 1]!.hitRatio);
    expect(Math.abs(curve[0]!.hitRatio - 6 / 40)).toBeLessThan(0.02);
  });

  it('gives the same report for the same seed and a different trace for another', () => {
    const bundles = Array.from({ length: 30 }, (_, i) => trtBundle(`m${i}.tar.gz`, 3 * 1024));
    const run = (seed: number) => planEndpoint(bundles, { ...options, seed, traffic: { kind: 'zipf', exponent: 1 } }).report;
    expect(run(5)).toEqual(run(5));
    expect(run(5)!.simulation!.curve).not.toEqual(run(6)!.simulation!.curve);
  });
});

describe('planning limits', () => {
  it('refuses a GPU reserve that leaves no memory for models', () => {
    const { report, diagnostics } = planEndpoint([trtBundle('a.tar.gz', 1)], { ...options, gpuReserveMiB: 16384 });
    expect(report).toBeUndefined();
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'plan-gpu-reserve-too-large' })]);
  });

  it('rejects a model whose archive and extracted copy do not fit on the model cache disk', () => {
    const { diagnostics } = planEndpoint([trtBundle('wide.tar.gz', 100)], { ...options, diskGb: 0.1 });
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'plan-model-too-large-for-disk', model: 'wide.tar.gz' })]);
  });
});
