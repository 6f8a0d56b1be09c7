import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { INSTANCE_TYPES, findInstanceType, mmeInstanceTypeNames } from '../../lib/catalog/instance-types';

describe('GPU instance catalog', () => {
  it('describes ml.g4dn.xlarge as one 16 GiB T4 (sm 7.5) with 125 GB of NVMe, 4 vCPUs and 16 GiB', () => {
    expect(findInstanceType('ml.g4dn.xlarge')).toEqual({
      name: 'ml.g4dn.xlarge',
      family: 'g4dn',
      gpuCount: 1,
      gpuModel: 'NVIDIA T4',
      gpuMemoryMiB: 16384,
      usableGpuMemoryMiB: 15109,
      usableGpuMemorySource: 'CUDA total on a g4dn, 14.76 GiB (github.com/Tianxiaomo/pytorch-YOLOv4/issues/452)',
      computeCapability: '7.5',
      vCpus: 4,
      memoryGiB: 16,
      instanceStorage: { kind: 'nvme', sizeGb: 125 },
      mmeSupported: true,
    });
  });

  it('gives every GPU a usable memory below its nominal size, with a source', () => {
    const usable = (name: string) => findInstanceType(name)!.usableGpuMemoryMiB;
    // What CUDA reports as the total on the EC2 type (the low end of PyTorch's two-decimal GiB), not the box size.
    expect([usable('ml.g4dn.xlarge'), usable('ml.g5.xlarge'), usable('ml.p3.2xlarge'), usable('ml.p2.xlarge')]).toEqual([
      Math.floor(14.755 * 1024),
      Math.floor(22.195 * 1024),
      Math.floor(15.745 * 1024),
      Math.floor(11.165 * 1024),
    ]);
    // Below the SageMaker SDK's 22,888 MiB per A10G (ml.g5.48xlarge: 183,104 MiB over 8 GPUs).
    expect(usable('ml.g5.16xlarge')).toBeLessThan(183_104 / 8);
    for (const t of INSTANCE_TYPES) {
      expect(t.usableGpuMemoryMiB).toBeLessThan(t.gpuMemoryMiB);
      expect(t.usableGpuMemorySource).toMatch(/github\.com\/[\w.-]+\/[\w.-]+\/(issues|pull)\/\d+/);
    }
  });

  it('finds a type with or without the ml. prefix and returns undefined for unknown names', () => {
    expect(findInstanceType('g5.2xlarge')?.name).toBe('ml.g5.2xlarge');
    expect(findInstanceType('ml.m5.xlarge')).toBeUndefined();
    expect(findInstanceType('ml.g4dn.huge')).toBeUndefined();
  });

  it('lists exactly the single-GPU types of the AWS GPU MME table', () => {
    expect(mmeInstanceTypeNames()).toEqual([
      'ml.g4dn.xlarge',
      'ml.g4dn.2xlarge',
      'ml.g4dn.4xlarge',
      'ml.g4dn.8xlarge',
      'ml.g4dn.16xlarge',
      'ml.g5.xlarge',
      'ml.g5.2xlarge',
      'ml.g5.4xlarge',
      'ml.g5.8xlarge',
      'ml.g5.16xlarge',
      'ml.p3.2xlarge',
      'ml.p2.xlarge',
    ]);
  });

  it('keeps the multi-GPU siblings so they can be rejected by name', () => {
    for (const [name, gpus] of [
      ['ml.g4dn.12xlarge', 4],
      ['ml.g5.12xlarge', 4],
      ['ml.g5.48xlarge', 8],
      ['ml.g6.12xlarge', 4],
      ['ml.p3.8xlarge', 4],
      ['ml.p3.16xlarge', 8],
      ['ml.p2.16xlarge', 16],
    ] as const) {
      expect(findInstanceType(name)).toMatchObject({ gpuCount: gpus, mmeSupported: false });
    }
  });

  it('marks every MME-supported type as single-GPU and every NVMe family (g4dn, g5, g6) as NVMe, p2/p3 as EBS', () => {
    for (const t of INSTANCE_TYPES) {
      if (t.mmeSupported) expect(t.gpuCount).toBe(1);
      expect(t.instanceStorage.kind).toBe(['g4dn', 'g5', 'g6'].includes(t.family) ? 'nvme' : 'ebs');
      expect(t.name).toBe(`ml.${t.family}.${t.name.split('.')[2]}`);
    }
    expect(new Set(INSTANCE_TYPES.map((t) => t.name)).size).toBe(INSTANCE_TYPES.length);
  });

  it('loads without aws-cdk-lib (the CLI imports the catalog)', () => {
    // A fresh Node process: jest's module registry would not show what Node itself loads.
    const script =
      "for (const m of ['instance-types', 'prices', 'triton-images']) require('./lib/catalog/' + m);" +
      "process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes('aws-cdk-lib'))));";
    const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: join(__dirname, '..', '..'), encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual([]);
  });
});
