// GPU instance types SageMaker real-time endpoints offer, with the hardware facts a GPU multi-model endpoint depends
// on (GPU count and memory, compute capability, local NVMe or EBS). Plain data: the CLI loads it, so no aws-cdk-lib.
//
// Sources, read 2026-11-30:
// - GPU MME support table: https://docs.aws.amazon.com/sagemaker/latest/dg/multi-model-support.html ("Multi-model
//   endpoints support the following GPU instance types": ml.p2.xlarge, ml.p3.2xlarge, ml.g5.xlarge–16xlarge,
//   ml.g4dn.xlarge–16xlarge, all with one GPU). g6 is not in that table, so it is marked unsupported here even for
//   its single-GPU sizes; flip `mmeSupported` when AWS lists it.
// - vCPUs, memory, GPUs, instance store: https://aws.amazon.com/ec2/instance-types/g4/, /g5/, /g6/, /p3/, /p2/
//   (SageMaker ml.* types use the EC2 hardware of the same name).
// - GPU memory in MiB: sagemaker-python-sdk image_uri_config/instance_gpu_info.json (g4dn 16384, g5 24576 per GPU);
//   L4 (g6) 24 GiB, V100 (p3) 16 GiB, K80 (p2) 12 GiB per the EC2 pages above.
// - Compute capability: https://developer.nvidia.com/cuda-gpus (T4 7.5, A10G 8.6, L4 8.9, V100 7.0, K80 3.7).

export type InstanceStorage = { kind: 'nvme'; sizeGb: number } | { kind: 'ebs' };

export interface GpuInstanceType {
  /** SageMaker name, e.g. `ml.g4dn.xlarge`. */
  name: string;
  /** Family, e.g. `g4dn`. */
  family: string;
  gpuCount: number;
  gpuModel: string;
  /** Memory of one GPU. */
  gpuMemoryMiB: number;
  /** CUDA compute capability of the GPU (the `sm_XY` TensorRT engines are built for). */
  computeCapability: string;
  vCpus: number;
  memoryGiB: number;
  /** Local NVMe instance store (SageMaker rejects VolumeSizeInGB and KmsKeyId there) or EBS only. */
  instanceStorage: InstanceStorage;
  /** Listed by AWS as a GPU multi-model endpoint instance type. */
  mmeSupported: boolean;
}

const T4 = { gpuModel: 'NVIDIA T4', gpuMemoryMiB: 16384, computeCapability: '7.5' };
const A10G = { gpuModel: 'NVIDIA A10G', gpuMemoryMiB: 24576, computeCapability: '8.6' };
const L4 = { gpuModel: 'NVIDIA L4', gpuMemoryMiB: 24576, computeCapability: '8.9' };
const V100 = { gpuModel: 'NVIDIA V100', gpuMemoryMiB: 16384, computeCapability: '7.0' };
const K80 = { gpuModel: 'NVIDIA K80', gpuMemoryMiB: 12288, computeCapability: '3.7' };

function nvme(sizeGb: number): InstanceStorage {
  return { kind: 'nvme', sizeGb };
}
const EBS: InstanceStorage = { kind: 'ebs' };

type Row = [size: string, gpuCount: number, vCpus: number, memoryGiB: number, storage: InstanceStorage, mme: boolean];

function family(name: string, gpu: typeof T4, rows: Row[]): GpuInstanceType[] {
  return rows.map(([size, gpuCount, vCpus, memoryGiB, instanceStorage, mmeSupported]) => ({
    name: `ml.${name}.${size}`,
    family: name,
    gpuCount,
    ...gpu,
    vCpus,
    memoryGiB,
    instanceStorage,
    mmeSupported,
  }));
}

export const INSTANCE_TYPES: readonly GpuInstanceType[] = Object.freeze([
  ...family('g4dn', T4, [
    ['xlarge', 1, 4, 16, nvme(125), true],
    ['2xlarge', 1, 8, 32, nvme(225), true],
    ['4xlarge', 1, 16, 64, nvme(225), true],
    ['8xlarge', 1, 32, 128, nvme(900), true],
    ['16xlarge', 1, 64, 256, nvme(900), true],
    ['12xlarge', 4, 48, 192, nvme(900), false],
  ]),
  ...family('g5', A10G, [
    ['xlarge', 1, 4, 16, nvme(250), true],
    ['2xlarge', 1, 8, 32, nvme(450), true],
    ['4xlarge', 1, 16, 64, nvme(600), true],
    ['8xlarge', 1, 32, 128, nvme(900), true],
    ['16xlarge', 1, 64, 256, nvme(1900), true],
    ['12xlarge', 4, 48, 192, nvme(3800), false],
    ['24xlarge', 4, 96, 384, nvme(3800), false],
    ['48xlarge', 8, 192, 768, nvme(7600), false],
  ]),
  ...family('g6', L4, [
    ['xlarge', 1, 4, 16, nvme(250), false],
    ['2xlarge', 1, 8, 32, nvme(450), false],
    ['4xlarge', 1, 16, 64, nvme(600), false],
    ['8xlarge', 1, 32, 128, nvme(900), false],
    ['16xlarge', 1, 64, 256, nvme(1880), false],
    ['12xlarge', 4, 48, 192, nvme(3760), false],
    ['24xlarge', 4, 96, 384, nvme(3760), false],
    ['48xlarge', 8, 192, 768, nvme(7520), false],
  ]),
  ...family('p3', V100, [
    ['2xlarge', 1, 8, 61, EBS, true],
    ['8xlarge', 4, 32, 244, EBS, false],
    ['16xlarge', 8, 64, 488, EBS, false],
  ]),
  ...family('p2', K80, [
    ['xlarge', 1, 4, 61, EBS, true],
    ['8xlarge', 8, 32, 488, EBS, false],
    ['16xlarge', 16, 64, 732, EBS, false],
  ]),
]);

const BY_NAME = new Map(INSTANCE_TYPES.map((t) => [t.name, t]));

/** The catalog entry for `ml.g4dn.xlarge` (the `ml.` prefix may be left out); undefined when unknown. */
export function findInstanceType(name: string): GpuInstanceType | undefined {
  const key = name.startsWith('ml.') ? name : `ml.${name}`;
  return BY_NAME.get(key);
}

/** Names of the single-GPU instance types a GPU multi-model endpoint accepts, in catalog order. */
export function mmeInstanceTypeNames(): string[] {
  return INSTANCE_TYPES.filter((t) => t.mmeSupported && t.gpuCount === 1).map((t) => t.name);
}
