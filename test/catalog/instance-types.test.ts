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
      computeCapability: '7.5',
      vCpus: 4,
      memoryGiB: 16,
      instanceStorage: { kind: 'nvme', sizeGb: 125 },
      mmeSupported: true,
    });
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
