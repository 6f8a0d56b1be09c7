// Typed knobs of Triton's SageMaker `serve` script (the SAGEMAKER_TRITON_* variables it turns into tritonserver flags)
// and their rendering into the container environment. Source: triton-inference-server/server:docker/sagemaker/serve:28-183.

import { Size } from 'aws-cdk-lib';

/** How the `/invocations` route interprets requests (`SAGEMAKER_TRITON_INFERENCE_TYPE`). */
export enum TritonInferenceType {
  INFER = 'infer',
  GENERATE = 'generate',
  GENERATE_STREAM = 'generate_stream',
}

/** Triton server settings passed through the SageMaker `serve` script. Every knob is left unset by default. */
export interface TritonEnvironment {
  /**
   * Register each ensemble's models under a per-archive namespace, so two archives may both hold a model named
   * `preprocess` (`SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING`, whose value is passed verbatim to
   * `--model-namespacing`).
   * @default - namespacing on (the serve script's default)
   */
  readonly modelNamespacing?: boolean;
  /**
   * Threads of the SageMaker HTTP frontend (`SAGEMAKER_TRITON_THREAD_COUNT`).
   * @default - 8 (the serve script's default)
   */
  readonly threadCount?: number;
  /**
   * Threads of Triton's buffer manager (`SAGEMAKER_TRITON_BUFFER_MANAGER_THREAD_COUNT`).
   * @default - Triton's default
   */
  readonly bufferManagerThreadCount?: number;
  /**
   * Verbose log level, 0 turns verbose logging off (`SAGEMAKER_TRITON_LOG_VERBOSE`).
   * @default - verbose logging on (the serve script passes `--log-verbose=true`)
   */
  readonly logVerbose?: number;
  /** Info logs (`SAGEMAKER_TRITON_LOG_INFO`). @default - Triton's default (on) */
  readonly logInfo?: boolean;
  /** Warning logs (`SAGEMAKER_TRITON_LOG_WARNING`). @default - Triton's default (on) */
  readonly logWarning?: boolean;
  /** Error logs (`SAGEMAKER_TRITON_LOG_ERROR`). @default - Triton's default (on) */
  readonly logError?: boolean;
  /**
   * Shared-memory region each Python backend model instance maps in /dev/shm when it loads, at least 1 MiB
   * (`SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE`). SageMaker endpoints get a 64 MiB /dev/shm and no way to enlarge it, so
   * a smaller region lets more python model instances load (4 at the default 16 MiB).
   * @default - 16 MiB
   */
  readonly pythonShmDefaultSize?: Size;
  /**
   * Growth step of the Python backend's shared memory, more than 0 (`SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE`).
   * @default - 1 MiB
   */
  readonly pythonShmGrowthSize?: Size;
  /**
   * Fraction (0 < f ≤ 1) of each GPU's memory that model loading may use; loads beyond it fail instead of running
   * the GPU out of memory (`SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT` → `--model-load-gpu-limit <gpu>:<f>`).
   * @default - no limit
   */
  readonly modelLoadGpuLimit?: number;
  /**
   * TensorFlow backend major version (`SAGEMAKER_TRITON_TENSORFLOW_VERSION`).
   * @default - the image's default
   */
  readonly tensorflowVersion?: number;
  /**
   * Request kind of `/invocations` (`SAGEMAKER_TRITON_INFERENCE_TYPE`).
   * @default TritonInferenceType.INFER
   */
  readonly inferenceType?: TritonInferenceType;
  /**
   * Extra tritonserver arguments, appended verbatim (`SAGEMAKER_TRITON_ADDITIONAL_ARGS`, images 23.06 and later).
   * @default - none
   */
  readonly additionalArgs?: string[];
  /**
   * Let Triton serve Prometheus metrics inside the container (`SAGEMAKER_TRITON_ALLOW_METRICS`).
   * @default false
   */
  readonly allowMetrics?: boolean;
  /** Port of those metrics (`SAGEMAKER_TRITON_METRICS_PORT`). @default - Triton's default */
  readonly metricsPort?: number;
}

/** The environment variables `knobs` stand for, plus the problems found (sentences naming the knob). */
export function renderTritonEnvironment(knobs: TritonEnvironment = {}): { env: Record<string, string>; errors: string[] } {
  const env: Record<string, string> = {};
  const errors: string[] = [];
  const positiveInt = (name: string, value: number | undefined, variable: string) => {
    if (value === undefined) return;
    if (!Number.isInteger(value) || value < 1) errors.push(`environment.${name} must be a positive integer, got ${value}.`);
    else env[variable] = String(value);
  };
  const flag = (value: boolean | undefined, variable: string) => {
    if (value !== undefined) env[variable] = String(value);
  };

  flag(knobs.modelNamespacing, 'SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING');
  positiveInt('threadCount', knobs.threadCount, 'SAGEMAKER_TRITON_THREAD_COUNT');
  positiveInt('bufferManagerThreadCount', knobs.bufferManagerThreadCount, 'SAGEMAKER_TRITON_BUFFER_MANAGER_THREAD_COUNT');
  if (knobs.logVerbose !== undefined) {
    if (!Number.isInteger(knobs.logVerbose) || knobs.logVerbose < 0) {
      errors.push(`environment.logVerbose must be an integer of 0 or more, got ${knobs.logVerbose}.`);
    } else env.SAGEMAKER_TRITON_LOG_VERBOSE = String(knobs.logVerbose);
  }
  flag(knobs.logInfo, 'SAGEMAKER_TRITON_LOG_INFO');
  flag(knobs.logWarning, 'SAGEMAKER_TRITON_LOG_WARNING');
  flag(knobs.logError, 'SAGEMAKER_TRITON_LOG_ERROR');
  if (knobs.pythonShmDefaultSize !== undefined) {
    const bytes = knobs.pythonShmDefaultSize.toBytes();
    // python_backend refuses less than 1 MiB (src/python_be.cc:2308; its message wrongly says 4 MiBs).
    if (bytes < 1024 * 1024) {
      errors.push(`environment.pythonShmDefaultSize must be at least 1 MiB (the Python backend's minimum), got ${bytes} bytes.`);
    } else env.SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE = String(bytes);
  }
  if (knobs.pythonShmGrowthSize !== undefined) {
    const bytes = knobs.pythonShmGrowthSize.toBytes();
    if (bytes <= 0) errors.push('environment.pythonShmGrowthSize must be more than 0 bytes.');
    else env.SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE = String(bytes);
  }
  if (knobs.modelLoadGpuLimit !== undefined) {
    const f = knobs.modelLoadGpuLimit;
    if (!(f > 0 && f <= 1)) errors.push(`environment.modelLoadGpuLimit is a fraction of GPU memory, 0 < f ≤ 1, got ${f}.`);
    else env.SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT = String(f);
  }
  positiveInt('tensorflowVersion', knobs.tensorflowVersion, 'SAGEMAKER_TRITON_TENSORFLOW_VERSION');
  if (knobs.inferenceType !== undefined) env.SAGEMAKER_TRITON_INFERENCE_TYPE = knobs.inferenceType;
  if (knobs.additionalArgs !== undefined && knobs.additionalArgs.length > 0) {
    env.SAGEMAKER_TRITON_ADDITIONAL_ARGS = knobs.additionalArgs.join(' ');
  }
  flag(knobs.allowMetrics, 'SAGEMAKER_TRITON_ALLOW_METRICS');
  if (knobs.metricsPort !== undefined) {
    if (!Number.isInteger(knobs.metricsPort) || knobs.metricsPort < 1 || knobs.metricsPort > 65535) {
      errors.push(`environment.metricsPort must be a TCP port (1-65535), got ${knobs.metricsPort}.`);
    } else env.SAGEMAKER_TRITON_METRICS_PORT = String(knobs.metricsPort);
  }
  return { env, errors };
}
