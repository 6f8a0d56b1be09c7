import { DEFAULT_COLD_START, estimateColdStart, parseColdStartParameters } from '../../lib/plan/load-time';

describe('cold-start estimate', () => {
  it('adds download, extract and load times at the stated throughputs', () => {
    const estimate = estimateColdStart(
      { archiveBytes: 500e6, extractedBytes: 600e6, gpuBytes: 1e9, tritonModels: 2, pythonEnvBytes: 150e6 },
      { downloadMBps: 100, extractMBps: 150, loadMBps: 500, perModelSeconds: 1 },
    );
    expect(estimate.downloadSeconds).toBeCloseTo(5, 10);
    expect(estimate.extractSeconds).toBeCloseTo(4, 10);
    // 2 s of GPU bytes + 1 s unpacking the conda environment + 2 models × 1 s.
    expect(estimate.loadSeconds).toBeCloseTo(5, 10);
    expect(estimate.fromS3Seconds).toBeCloseTo(14, 10);
    expect(estimate.fromDiskSeconds).toBeCloseTo(5, 10);
  });

  it('reads any subset of --cold-start over the defaults and refuses unknown keys or zero throughput', () => {
    expect(parseColdStartParameters('download=400,per-model=0')).toEqual({
      ...DEFAULT_COLD_START,
      downloadMBps: 400,
      perModelSeconds: 0,
    });
    expect(parseColdStartParameters('upload=3')).toHaveProperty('error');
    expect(parseColdStartParameters('load=0')).toHaveProperty('error');
    expect(parseColdStartParameters('extract=')).toHaveProperty('error');
  });
});
