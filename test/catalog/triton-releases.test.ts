// The Triton release catalog: what each release needs from GPU and driver and ships for models, each fact sourced.

import { findInstanceType } from '../../lib/catalog/instance-types';
import {
  SAGEMAKER_DEFAULT_GPU_DRIVER,
  SAGEMAKER_SHM_BYTES,
  knownInferenceAmiVersions,
  sageMakerGpuDriver,
} from '../../lib/catalog/sagemaker-hosting';
import { DEFAULT_TRITON_VERSION, listedTritonVersions } from '../../lib/catalog/triton-images';
import {
  compareVersions,
  driverSupport,
  meetsComputeCapability,
  tritonMinComputeCapability,
  tritonPythonVersion,
  tritonRelease,
  tritonReleases,
} from '../../lib/catalog/triton-releases';

describe('Triton release catalog', () => {
  it('records the default release with the facts the image and the validator use', () => {
    expect(tritonRelease(DEFAULT_TRITON_VERSION)).toMatchObject({
      version: '24.09',
      cuda: '12.6.1',
      minComputeCapability: '6.0',
      tensorrt: '10.4.0.26',
      python: '3.10',
    });
  });

  it('gives every fact a source URL and the date it was read', () => {
    for (const release of tritonReleases()) {
      expect(release.sources.length).toBeGreaterThan(0);
      for (const source of release.sources) {
        expect(source.url).toMatch(/^https:\/\//);
        expect(source.read).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      }
    }
  });

  it('returns undefined for a release it does not record', () => {
    expect(tritonRelease('23.01')).toBeUndefined();
  });

  it('knows the minimum compute capability of any YY.MM release, recorded or not', () => {
    expect(tritonMinComputeCapability('24.09')).toBe('6.0');
    expect(tritonMinComputeCapability('23.05')).toBe('6.0');
    expect(tritonMinComputeCapability('25.01')).toBe('7.5');
    expect(tritonMinComputeCapability('26.03')).toBe('7.5');
    expect(() => tritonMinComputeCapability('latest')).toThrow(/not of the form YY.MM/);
  });

  it('knows the Python of every image SageMaker lists, and of any YY.MM release, from the Ubuntu it is built on', () => {
    const pythons = Object.fromEntries(listedTritonVersions().map((v) => [v, tritonPythonVersion(v)]));
    expect(pythons).toEqual({
      '23.12': '3.10', '24.01': '3.10', '24.03': '3.10', '24.05': '3.10', '24.09': '3.10',
      '25.04': '3.12', '25.09': '3.12', '26.05': '3.12',
    });
    // The switch to Ubuntu 24.04 came with 24.11; Ubuntu 22.04 with 23.05.
    expect([tritonPythonVersion('24.10'), tritonPythonVersion('24.11')]).toEqual(['3.10', '3.12']);
    expect([tritonPythonVersion('23.04'), tritonPythonVersion('23.05')]).toEqual(['3.8', '3.10']);
    // A recorded release gives its own.
    for (const release of tritonReleases()) expect(tritonPythonVersion(release.version)).toBe(release.python);
    expect(() => tritonPythonVersion('24.9')).toThrow(/not of the form YY.MM/);
  });

  it('lets the CDK refuse p2 (K80) for every release and p3 (V100) from 25.01', () => {
    const k80 = findInstanceType('ml.p2.xlarge')!.computeCapability;
    const v100 = findInstanceType('ml.p3.2xlarge')!.computeCapability;
    const t4 = findInstanceType('ml.g4dn.xlarge')!.computeCapability;
    expect(meetsComputeCapability(k80, tritonMinComputeCapability('24.09'))).toBe(false);
    expect(meetsComputeCapability(v100, tritonMinComputeCapability('24.09'))).toBe(true);
    expect(meetsComputeCapability(v100, tritonMinComputeCapability('25.01'))).toBe(false);
    expect(meetsComputeCapability(t4, tritonMinComputeCapability('25.01'))).toBe(true);
  });

  it('tells native drivers from forward-compatible and unsupported ones', () => {
    const release = tritonRelease('24.09')!;
    expect(driverSupport(release, '560.35.03')).toBe('native');
    expect(driverSupport(release, '570.124.06')).toBe('native');
    expect(driverSupport(release, '470.256.02')).toBe('forward-compatibility');
    expect(driverSupport(release, '470')).toBe('forward-compatibility');
    expect(driverSupport(release, '470.42.01')).toBe('unsupported');
    expect(driverSupport(release, '550.54.15')).toBe('unsupported');
    expect(driverSupport(release, '418.226.00')).toBe('unsupported');
  });

  it('compares dotted versions numerically', () => {
    expect(compareVersions('12.10', '12.6.1')).toBe(1);
    expect(compareVersions('7.5', '7.5.0')).toBe(0);
    expect(compareVersions('3.7', '6.0')).toBe(-1);
  });
});

describe('SageMaker hosting facts', () => {
  it('maps InferenceAmiVersion to its driver branch, 470 by default', () => {
    expect(sageMakerGpuDriver()).toEqual(SAGEMAKER_DEFAULT_GPU_DRIVER);
    expect(SAGEMAKER_DEFAULT_GPU_DRIVER.branch).toBe(470);
    expect(sageMakerGpuDriver('al2-ami-sagemaker-inference-gpu-3-1')).toEqual({ branch: 550, cuda: '12.4' });
    expect(sageMakerGpuDriver('al2-ami-sagemaker-inference-gpu-9')).toBeUndefined();
    expect(knownInferenceAmiVersions()).toHaveLength(3);
  });

  it('gives endpoint containers the 64 MiB /dev/shm users observe', () => {
    expect(SAGEMAKER_SHM_BYTES).toBe(67108864);
  });
});
