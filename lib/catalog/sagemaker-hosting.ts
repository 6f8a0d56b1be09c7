// What a SageMaker real-time endpoint gives the container on a GPU instance: the GPU driver (chosen by the production
// variant's InferenceAmiVersion) and the size of /dev/shm. Plain data with sources.

/** The GPU driver an endpoint's instances run, as SageMaker documents it. */
export interface SageMakerGpuDriver {
  /** The driver branch, e.g. `470`. SageMaker names the branch, not the exact version. */
  readonly branch: number;
  /** The CUDA version the driver supports natively. */
  readonly cuda: string;
}

/**
 * Source, read 2026-11-30: https://docs.aws.amazon.com/sagemaker/latest/dg/inference-gpu-drivers.html: real-time
 * endpoints on g4dn/g5/p4d run driver 470 (CUDA 11.4) unless ProductionVariant.InferenceAmiVersion picks another image.
 */
export const SAGEMAKER_DEFAULT_GPU_DRIVER: SageMakerGpuDriver = { branch: 470, cuda: '11.4' };

/** InferenceAmiVersion → driver (same source: gpu-2 and gpu-2-1 → 535 / CUDA 12.2, gpu-3-1 → 550 / CUDA 12.4). */
const INFERENCE_AMI_DRIVERS: Readonly<Record<string, SageMakerGpuDriver>> = {
  'al2-ami-sagemaker-inference-gpu-2': { branch: 535, cuda: '12.2' },
  'al2-ami-sagemaker-inference-gpu-2-1': { branch: 535, cuda: '12.2' },
  'al2-ami-sagemaker-inference-gpu-3-1': { branch: 550, cuda: '12.4' },
};

/**
 * The driver of an endpoint with `inferenceAmiVersion` (the default driver when undefined), or undefined for an AMI
 * version this catalog does not know.
 */
export function sageMakerGpuDriver(inferenceAmiVersion?: string): SageMakerGpuDriver | undefined {
  if (inferenceAmiVersion === undefined) return SAGEMAKER_DEFAULT_GPU_DRIVER;
  return INFERENCE_AMI_DRIVERS[inferenceAmiVersion];
}

/** The InferenceAmiVersion values the catalog knows, in the order above. */
export function knownInferenceAmiVersions(): string[] {
  return Object.keys(INFERENCE_AMI_DRIVERS);
}

/**
 * /dev/shm inside a SageMaker endpoint container: SageMaker has no `--shm-size` setting, so the container gets Docker's
 * default of 64 MiB. AWS does not document the number; it is what users observe: python-backend models failing on
 * g4dn endpoints with "Unable to initialize shared memory key ... (67108864 bytes)" while they load locally with a
 * larger --shm-size (aws/sagemaker-python-sdk#2801, 2021-12-16; aws/amazon-sagemaker-examples#3506, still open with a
 * 2024-06-14 report), read 2026-12-01.
 */
export const SAGEMAKER_SHM_BYTES = 64 * 1024 * 1024;
