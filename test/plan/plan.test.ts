import { DEFAULT_COLD_START } from '../../lib/plan/load-time';
import { planEndpoint, residentAtOnce, type PlanOptions } from '../../lib/plan/plan';
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
    expect(report!.cost.savingPerYearUsd).toBeCloseTo(1.505 * 8760, 2);
    expect(report!.cost.savingPerYearUsd).toBeGreaterThan(13_000);
    expect(report!.price.source).toMatch(/on-demand list price read \d{4}-\d{2}-\d{2}/);
  });

  it('rejects a model bigger than the GPU, naming it, and still reports the models that fit', () => {
    // 15,109 MiB usable on a T4 less 1,024 reserved leaves 14,085 MiB (13.8 GiB); 15 GiB + 256 MiB does not fit.
    const { report, diagnostics } = planEndpoint([trtBundle('small.tar.gz', 100), trtBundle('huge.tar.gz', 15 * 1024)], options);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'plan-model-too-large', model: 'huge.tar.gz' });
    expect(errors[0]!.message).toMatch(/huge\.tar\.gz needs 15\.3 GiB .* more than the 13\.8 GiB .* ml\.g4dn\.xlarge/);
    expect(errors[0]!.message).toContain('15,109 MiB usable on its NVIDIA T4 minus 1024 MiB reserved');
    expect(report!.models.map((m) => [m.name, m.fits])).toEqual([
      ['small.tar.gz', true],
      ['huge.tar.gz', false],
    ]);
    expect(report!.simulation).toBeUndefined();
  });

  it('accepts a model that fills the usable GPU memory exactly, and refuses one MiB more', () => {
    // 15,109 MiB usable - 1,024 reserved = 14,085 MiB; a TensorRT model needs its engine + 256 MiB.
    const { diagnostics, report } = planEndpoint([trtBundle('exact.tar.gz', 14_085 - 256)], options);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(report!.models[0]!.gpuBytes).toBe(14_085 * MiB);
    expect(report!.capacity.residentAtOnce).toBe(1);
    const over = planEndpoint([trtBundle('over.tar.gz', 14_085 - 256 + 1)], options);
    expect(over.diagnostics).toEqual([expect.objectContaining({ code: 'plan-model-too-large', model: 'over.tar.gz' })]);
  });

  it('packs to the usable GPU memory, not the nominal 16 GiB: what fitted nominal 16 GiB less the reserve no longer does', () => {
    // The old figure: 16,384 MiB - 1,024 = 15,360 MiB for models. The usable one: 15,109 - 1,024 = 14,085 MiB.
    const one = planEndpoint([trtBundle('one.tar.gz', 14_500)], options); // 14,756 MiB
    expect(residentAtOnce([14_756], 16_384 - 1024)).toBe(1);
    expect(one.diagnostics).toEqual([expect.objectContaining({ code: 'plan-model-too-large', model: 'one.tar.gz' })]);
    expect(one.report!.capacity.instancesToHoldAll).toBe(0);

    // Two models of 7,100 MiB (14,200 together) shared one nominal T4; on the usable one they need two instances.
    const pair = planEndpoint([trtBundle('a.tar.gz', 7_100 - 256), trtBundle('b.tar.gz', 7_100 - 256)], options);
    expect(pair.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(pair.report!.capacity).toMatchObject({
      gpuMemoryMiB: 16_384,
      gpuUsableMiB: 15_109,
      gpuReserveMiB: 1024,
      modelGpuMiB: 14_085,
      residentAtOnce: 1,
      instancesToHoldAll: 2,
    });
    expect(pair.report!.simulation!.curve[0]!.residentModels).toBe(1);
  });

  it('names where the usable GPU memory comes from, in the report and its assumptions', () => {
    const t4 = planEndpoint([trtBundle('a.tar.gz', 1)], options).report!;
    expect(t4.capacity.gpuUsableSource).toContain('github.com/Tianxiaomo/pytorch-YOLOv4/issues/452');
    const usable = 'Usable GPU memory: 15,109 MiB per NVIDIA T4, not its nominal 16,384 MiB; source: CUDA total on a g4dn';
    expect(t4.assumptions).toContainEqual(expect.stringContaining(usable));
    const a10g = planEndpoint([trtBundle('a.tar.gz', 1)], { ...options, instanceType: 'ml.g5.xlarge' }).report!;
    expect(a10g.capacity).toMatchObject({ gpuUsableMiB: 22_727, modelGpuMiB: 21_703 });
    expect(a10g.capacity.gpuUsableSource).toMatch(/Dreambooth-Stable-Diffusion\/issues\/18.*SageMaker SDK table says 22,888 MiB/);
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
    expect(multi.report).toBeUndefined();
  });

  it('refuses g6, single-GPU or not, as a type AWS does not list for GPU MMEs (not as "single-GPU only")', () => {
    for (const type of ['ml.g6.xlarge', 'g6.2xlarge', 'ml.g6.12xlarge']) {
      const { report, diagnostics } = planEndpoint([trtBundle('a.tar.gz', 1)], { ...options, instanceType: type });
      expect(report).toBeUndefined();
      expect(diagnostics).toHaveLength(1);
      expect(diagnostics[0]).toMatchObject({ code: 'plan-instance-type-not-mme' });
      const message = diagnostics[0]!.message;
      expect(message).toMatch(/^ml\.g6\.\w+ \(\d+ × NVIDIA L4\) is not in AWS's list of GPU instance types for multi-model endpoints /);
      expect(message).toContain(
        '(https://docs.aws.amazon.com/sagemaker/latest/dg/multi-model-support.html); choose one of ml.g4dn.xlarge, ',
      );
      expect(diagnostics[0]!.message).not.toMatch(/single-GPU/);
    }
  });

  it('refuses a region or type the catalog has no price for, naming --price and what is priced, and uses --price when given', () => {
    const none = planEndpoint([trtBundle('a.tar.gz', 1)], { ...options, region: 'eu-west-3' });
    expect(none.report).toBeUndefined();
    expect(none.diagnostics).toEqual([expect.objectContaining({ severity: 'error', code: 'plan-no-price' })]);
    expect(none.diagnostics[0]!.message).toBe(
      'no on-demand price for ml.g4dn.xlarge in eu-west-3 in the catalog (it has one in us-east-1 only); ' +
        'pass your price per instance-hour in USD with --price, e.g. from https://aws.amazon.com/sagemaker/pricing/',
    );
    // A type priced in no region at all (AWS lists ml.p2.xlarge for GPU MMEs; no source for its price was found).
    const p2 = planEndpoint([trtBundle('a.tar.gz', 1)], { ...options, instanceType: 'ml.p2.xlarge' });
    expect(p2.diagnostics[0]!.message).toContain('(it has none for that type)');
    const given = planEndpoint([trtBundle('a.tar.gz', 1)], { ...options, region: 'eu-west-3', hourlyPriceUsd: 2 });
    expect(given.diagnostics).toEqual([]);
    expect(given.report!.cost.multiModel.perMonthUsd).toBe(1460);
    expect(given.report!.price).toEqual({ hourlyUsd: 2, source: '--price' });
  });

  it('simulates 1..N instances on the same trace, so more instances never hit less under uniform traffic', () => {
    const bundles = Array.from({ length: 40 }, (_, i) => trtBundle(`m${i}.tar.gz`, 2 * 1024));
    const { report } = planEndpoint(bundles, { ...options, instances: 4, requests: 20_000, rps: 0.01 });
    const curve = report!.simulation!.curve;
    expect(curve.map((p) => p.instances)).toEqual([1, 2, 3, 4]);
    // 2.25 GiB each: 6 fit in the 13.8 GiB models may use per instance.
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
  it('refuses a GPU reserve that leaves no usable memory for models', () => {
    const { report, diagnostics } = planEndpoint([trtBundle('a.tar.gz', 1)], { ...options, gpuReserveMiB: 15_109 });
    expect(report).toBeUndefined();
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'plan-gpu-reserve-too-large' })]);
    expect(diagnostics[0]!.message).toContain('(15,109 MiB usable)');
    expect(planEndpoint([trtBundle('a.tar.gz', 0)], { ...options, gpuReserveMiB: 15_108 }).report!.capacity.modelGpuMiB).toBe(1);
  });

  it('rejects a model whose archive and extracted copy do not fit on the model cache disk', () => {
    const { diagnostics } = planEndpoint([trtBundle('wide.tar.gz', 100)], { ...options, diskGb: 0.1 });
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'plan-model-too-large-for-disk', model: 'wide.tar.gz' })]);
  });
});
