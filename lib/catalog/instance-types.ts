// GPU instance types SageMaker real-time endpoints offer, with the hardware facts a GPU multi-model endpoint depends
// on (GPU count and memory, compute capability, local NVMe or EBS). Plain data: the CLI loads it, so no aws-cdk-lib.
//
// Sources, read 2026-11-30 (usable GPU memory re-read 2026-12-01):
// - GPU MME support table: GPU_MME_INSTANCE_TYPES_URL, "Supported algorithms, frameworks, and instances for
//   multi-model endpoints" ("Multi-model endpoints support the following GPU instance types": ml.p2.xlarge,
//   ml.p3.2xlarge, ml.g5.xlarge–16xlarge, ml.g4dn.xlarge–16xlarge, all with one GPU). Nothing else is in that table:
//   not g6 (not even its single-GPU sizes) and no multi-GPU type, so `mmeSupported` is false for them; flip it when
//   AWS lists them.
// - vCPUs, memory, GPUs, instance store: https://aws.amazon.com/ec2/instance-types/g4/, /g5/, /g6/, /p3/, /p2/
//   (SageMaker ml.* types use the EC2 hardware of the same name).
// - Nominal GPU memory (what the marketing pages say, 16/24/12 GiB): aws/sagemaker-python-sdk
//   sagemaker-core/src/sagemaker/core/image_uri_config/instance_gpu_info.json:637 (ml.g4dn.xlarge 16384 MiB) and :644
//   (ml.g5.2xlarge 24576 MiB; the table has no ml.g5.xlarge row, :643 spells it "ml.g5n.xlarge").
// - Usable GPU memory: see USABLE below; a model can never use the nominal figure.
// - Compute capability: https://developer.nvidia.com/cuda-gpus (T4 7.5, A10G 8.6, L4 8.9, V100 7.0, K80 3.7).

/** The page that lists the GPU instance types a multi-model endpoint accepts. */
export const GPU_MME_INSTANCE_TYPES_URL = 'https://docs.aws.amazon.com/sagemaker/latest/dg/multi-model-support.html';

export type InstanceStorage = { kind: 'nvme'; sizeGb: number } | { kind: 'ebs' };

export interface GpuInstanceType {
  /** SageMaker name, e.g. `ml.g4dn.xlarge`. */
  name: string;
  /** Family, e.g. `g4dn`. */
  family: string;
  gpuCount: number;
  gpuModel: string;
  /** Nominal memory of one GPU (16 GiB for a T4): more than any process can allocate. */
  gpuMemoryMiB: number;
  /**
   * Memory of one GPU that CUDA reports as its total on this instance type (ECC on, driver-reserved memory left out):
   * the most a process can ever allocate, before its own CUDA context.
   */
  usableGpuMemoryMiB: number;
  /** Where `usableGpuMemoryMiB` comes from, short enough for a report line. */
  usableGpuMemorySource: string;
  /** CUDA compute capability of the GPU (the `sm_XY` TensorRT engines are built for). */
  computeCapability: string;
  vCpus: number;
  memoryGiB: number;
  /** Local NVMe instance store (SageMaker rejects VolumeSizeInGB and KmsKeyId there) or EBS only. */
  instanceStorage: InstanceStorage;
  /** Listed by AWS as a GPU multi-model endpoint instance type. */
  mmeSupported: boolean;
}

// Usable GPU memory. What CUDA reports as a GPU's total is below the nominal size: with ECC on (as on EC2) part of a
// GDDR board's memory holds check bits (nvidia-smi's total for a T4 is 15360 MiB, 15/16 of 16 GiB), and the driver
// keeps some for itself. AWS
// publishes no usable figure for these GPUs (the SageMaker SDK's table lists 16384 MiB per T4 and 24576 MiB per
// A10G for the single-GPU types), so each figure below is the total CUDA reported on that EC2/SageMaker instance
// type in a public issue, printed by PyTorch in GiB to two decimals; we take the low end of that rounding
// (e.g. 14.76 GiB -> 14.755 × 1024 = 15,109 MiB), which errs on the side of packing less.
// - T4 (g4dn): "14.76 GiB total capacity" on a g4dn.16xlarge, github.com/Tianxiaomo/pytorch-YOLOv4/issues/452.
//   nvidia-smi shows 15360 MiB on a g4dn.xlarge (github.com/zylon-ai/private-gpt/issues/1173): its total
//   includes the driver's reserved memory, which CUDA does not count.
// - A10G (g5): "22.20 GiB total capacity" on a g5.12xlarge, github.com/XavierXiao/Dreambooth-Stable-Diffusion/issues/18.
//   The SageMaker SDK's table gives 183104 MiB for the 8 A10Gs of ml.g5.48xlarge, 22,888 MiB each
//   (aws/sagemaker-python-sdk sagemaker-core/src/sagemaker/core/image_uri_config/instance_gpu_info.json:650);
//   nvidia-smi shows 23028 MiB (github.com/NVIDIA/DCGM/issues/232). Both are above what CUDA reports.
// - V100 (p3): "15.75 GiB total capacity" on a p3.2xlarge, github.com/pytorch/pytorch/issues/16036.
// - K80 (p2): 11.17 GiB on a p2.xlarge, github.com/localminimum/QANet/issues/23 (and "11.17 GiB total capacity" on
//   another K80, github.com/piegu/fastai-projects/issues/2).
// - L4 (g6): no CUDA figure was found to cite. g6 is no GPU MME type, so plan never packs it; the figure is
//   nvidia-smi's total, 23034 MiB (github.com/modal-labs/modal-client/pull/2797), an upper bound.
const T4 = {
  gpuModel: 'NVIDIA T4',
  gpuMemoryMiB: 16384,
  usableGpuMemoryMiB: 15109,
  usableGpuMemorySource: 'CUDA total on a g4dn, 14.76 GiB (github.com/Tianxiaomo/pytorch-YOLOv4/issues/452)',
  computeCapability: '7.5',
};
const A10G = {
  gpuModel: 'NVIDIA A10G',
  gpuMemoryMiB: 24576,
  usableGpuMemoryMiB: 22727,
  usableGpuMemorySource:
    'CUDA total on a g5, 22.20 GiB (github.com/XavierXiao/Dreambooth-Stable-Diffusion/issues/18); ' +
    'the SageMaker SDK table says 22,888 MiB',
  computeCapability: '8.6',
};
const L4 = {
  gpuModel: 'NVIDIA L4',
  gpuMemoryMiB: 24576,
  usableGpuMemoryMiB: 23034,
  usableGpuMemorySource: 'nvidia-smi total, an upper bound; no CUDA figure cited (github.com/modal-labs/modal-client/pull/2797)',
  computeCapability: '8.9',
};
const V100 = {
  gpuModel: 'NVIDIA V100',
  gpuMemoryMiB: 16384,
  usableGpuMemoryMiB: 16122,
  usableGpuMemorySource: 'CUDA total on a p3.2xlarge, 15.75 GiB (github.com/pytorch/pytorch/issues/16036)',
  computeCapability: '7.0',
};
const K80 = {
  gpuModel: 'NVIDIA K80',
  gpuMemoryMiB: 12288,
  usableGpuMemoryMiB: 11432,
  usableGpuMemorySource: 'CUDA total on a p2.xlarge, 11.17 GiB (github.com/localminimum/QANet/issues/23)',
  computeCapability: '3.7',
};

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

/**
 * Why `type` cannot host a GPU multi-model endpoint, or undefined when it can: AWS's table lists only single-GPU
 * types and no g6 (GPU_MME_INSTANCE_TYPES_URL). `plan`, the constructs and the MME commands give this one reason.
 */
export function notMmeReason(type: GpuInstanceType): string | undefined {
  if (type.mmeSupported && type.gpuCount === 1) return undefined;
  return (
    `${type.name} (${type.gpuCount} × ${type.gpuModel}) is not in AWS's list of GPU instance types for multi-model ` +
    `endpoints (${GPU_MME_INSTANCE_TYPES_URL}); choose one of ${mmeInstanceTypeNames().join(', ')}`
  );
}

/** Names of the single-GPU instance types a GPU multi-model endpoint accepts, in catalog order. */
export function mmeInstanceTypeNames(): string[] {
  return INSTANCE_TYPES.filter((t) => t.mmeSupported && t.gpuCount === 1).map((t) => t.name);
}
