// The one table of Triton failures whose cause can be read off Triton's text: what went wrong, the fix in one
// sentence, and the `mme-deploy validate` rule that reports the same mistake before a push, where there is one.
// `logs` and `status` read it for the reasons in the endpoint's log (lib/logs/known-failures.ts), `invoke` and
// `local` for the error text a container answers with (container-failures.ts). A text that matches nothing here is
// still reported, verbatim, without a fix.

import { INSTANCE_TYPES } from './instance-types';

/** A failure whose cause is known, with what to do about it. */
export interface KnownFailure {
  /** Stable kebab-case code, e.g. `tensorrt-compute-capability`. */
  readonly code: string;
  /** One sentence: what went wrong. */
  readonly title: string;
  /** One sentence: how to fix it. */
  readonly fix: string;
  /** The `mme-deploy validate` rule that reports this before a push, where there is one. */
  readonly rule?: string;
}

interface FailureRule {
  readonly code: string;
  /** Tested against the reason and every context line, joined by newlines. */
  readonly pattern: RegExp;
  readonly describe: (m: RegExpExecArray, text: string) => Omit<KnownFailure, 'code'>;
}

// Strings SageMaker's Triton front end treats as out-of-memory when a LOAD or INVOKE fails, answering 507 so that
// SageMaker evicts models (server src/sagemaker_server.cc:894-911). "No space left on device" is in that list too but
// is the disk, so it has its own rule; "OOM" is matched as a word here to keep it out of words that merely contain it.
const OUT_OF_MEMORY = new RegExp(
  [
    /CUDA out of memory/,
    /CUDA_OUT_OF_MEMORY/,
    /Out of memory/,
    /Out Of Memory/,
    /out of memory/,
    /MemoryError/,
    /OutOfMemory/,
    /\bOOM\b/,
    /Dst tensor is not initialized/,
    /Src tensor is not initialized/,
    /CNMEM_STATUS_OUT_OF_MEMORY/,
    /CUDNN_STATUS_NOT_INITIALIZED/,
    /CUBLAS_STATUS_ALLOC_FAILED/,
    /CUBLAS_STATUS_NOT_INITIALIZED/,
    /[Ff]ailed to allocate memory/,
  ]
    .map((r) => r.source)
    .join('|'),
);

/** How to make models fit in GPU memory: the out-of-memory rule's fix, also said where a 507 is explained. */
export const MEMORY_REMEDY =
  'Lower instance_group count or max_batch_size, put fewer or smaller models on each instance (`mme-deploy plan` ' +
  'estimates the fit), use an instance type with more GPU memory, or cap what one load may take with the ' +
  "construct's environment.modelLoadGpuLimit (SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT), which keeps memory free for " +
  'inference';

const RULES: readonly FailureRule[] = [
  // ---- TensorRT (messages of the TensorRT runtime, passed through tensorrt_backend src/logging.cc:36-41 and
  //      src/loader.cc:86-89 "unable to create TensorRT engine: <last TensorRT error>") ----
  {
    // e.g. "6: The engine plan file is generated on an incompatible device, expecting compute 7.5 got compute 8.6,
    // please rebuild." (as reported in NVIDIA/TensorRT#3130 on a T4)
    code: 'tensorrt-compute-capability',
    pattern: /generated on an incompatible device, expecting compute (\d+\.\d+) got compute (\d+\.\d+)/,
    describe: (m) => ({
      title:
        `The TensorRT engine was built for a GPU of compute capability ${m[2]}${gpusOf(m[2]!)}, ` +
        `but this instance's GPU is ${m[1]}${gpusOf(m[1]!)}.`,
      fix: `Build the plan on the endpoint's GPU type (compute ${m[1]}), or ship one plan per GPU with cc_model_filenames in config.pbtxt.`,
      // A warning (a plan does not say what it was built for): it names the compute capability and TensorRT to build for.
      rule: 'tensorrt-plan-target',
    }),
  },
  {
    // "The engine plan file is not compatible with this version of TensorRT, expecting library version 8.6.1 got
    // 8.5.3, please rebuild." (NVIDIA/TensorRT#2544 family) and, from TensorRT 8.4 on, "Serialization assertion
    // stdVersionRead == kSERIALIZATION_VERSION failed.Version tag does not match. Note: Current Version: 236,
    // Serialized Engine Version: 237" (tensorrtllm_backend#190).
    code: 'tensorrt-version',
    pattern: /not compatible with this version of TensorRT, expecting library version (\S+?),? got (\S+?),|Version tag does not match/,
    describe: (m) => ({
      title: m[1]
        ? `The TensorRT engine was serialized by TensorRT ${m[2]}, but the image runs TensorRT ${m[1]}.`
        : 'The TensorRT engine was serialized by another TensorRT version than the one in the image.',
      fix:
        'Rebuild the plan with trtexec from the same Triton release as the endpoint image ' +
        '(or build it with version compatibility enabled).',
      rule: 'tensorrt-plan-target',
    }),
  },

  // ---- memory and disk ----
  {
    // python_backend src/shm_manager.cc:121-129 (a model instance's region, created when its stub starts) and
    // :189-196 (growing it for a large request): "Unable to initialize shared memory key '<name>' to requested size
    // (<n> bytes). ... Error: No space left on device" / "Failed to increase the shared memory pool size to ...".
    // It is /dev/shm that is full, not the disk, so this rule comes before disk-full. Each python model instance
    // maps shm-default-byte-size (SageMaker's serve: SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE, 16 MiB; server
    // docker/sagemaker/serve) in /dev/shm, which is 64 MiB on an endpoint and cannot be enlarged there.
    code: 'python-shared-memory',
    pattern: new RegExp(
      /Unable to initialize shared memory key '[^']*' to requested size \((\d+) bytes\)/.source +
        '|' +
        /Failed to increase the shared memory pool size/.source,
    ),
    describe: (m) => ({
      title:
        "The python backend ran out of shared memory (/dev/shm) for a model instance's region" +
        `${m[1] ? ` of ${Number(m[1]) / 2 ** 20} MiB` : ''}: /dev/shm is full, not the disk.`,
      fix:
        'Each python model instance maps its own region in /dev/shm (64 MiB on a SageMaker endpoint, not enlargeable): ' +
        "lower the region with the construct's environment.pythonShmDefaultSize (SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE, " +
        'e.g. 4 MiB), run fewer python model instances (instance_group count) or fewer python models per instance; ' +
        'locally, start the container with a larger --shm-size.',
    }),
  },
  {
    code: 'disk-full',
    pattern: /No space left on device/,
    describe: () => ({
      title: "The instance's disk is full.",
      fix:
        'SageMaker keeps downloaded archives on the instance and removes the least recently used ones when space runs ' +
        'out; an archive that still does not fit needs smaller archives (leave training files and spare model versions ' +
        'out; one conda-pack environment per model adds up), fewer models per instance, or an instance type with more ' +
        'local storage.',
    }),
  },
  {
    code: 'out-of-memory',
    pattern: OUT_OF_MEMORY,
    describe: () => ({
      title: 'The model ran out of GPU (or host) memory; SageMaker answers 507 and evicts other models.',
      fix: `${MEMORY_REMEDY}.`,
    }),
  },

  // ---- the python backend's execution environment (python_backend src/pb_env.cc, src/stub_launcher.cc) ----
  {
    // pb_env.cc:263-266  "Failed to get the canonical path for " + env_path + "."
    code: 'execution-env-missing',
    pattern: /Failed to get the canonical path for (\S+?)\.?(?:\s|$)/,
    describe: (m) => ({
      title: `EXECUTION_ENV_PATH points to ${m[1]}, which is not in the extracted archive.`,
      fix: 'Put the conda-pack archive inside the model directory and set EXECUTION_ENV_PATH to "$$TRITON_MODEL_DIRECTORY/<env>.tar.gz".',
      rule: 'execution-env-missing',
    }),
  },
  {
    // stub_launcher.cc:608-614  "Path " + path_to_activate_ + " does not exist. The Python environment should
    // contain an 'activate' script."
    code: 'execution-env-activate',
    pattern: /The Python environment should contain an 'activate' script/,
    describe: () => ({
      title: 'The EXECUTION_ENV_PATH archive is not a conda-pack environment: it has no bin/activate.',
      fix: 'Rebuild it with `conda pack -o env.tar.gz` from an environment that has the python backend\'s Python version.',
      rule: 'mme-execution-env-activate',
    }),
  },
  {
    // pb_env.cc:87-176  "archive_read_open_filename() failed.", "archive_read_next_header() failed with error code = ",
    // "archive_write_header() failed ...", pb_env.cc:323-326 "Failed to create environment directory for '...'."
    code: 'execution-env-unpack',
    pattern: /archive_(?:read|write)_\w+\(\) failed|Failed to create environment directory for/,
    describe: () => ({
      title: 'The python backend could not unpack the EXECUTION_ENV_PATH archive.',
      fix: 'Rebuild the environment archive with `conda pack -o env.tar.gz` (a gzip tar), and check the instance has disk space for it.',
      rule: 'mme-execution-env-format',
    }),
  },
  {
    // stub_launcher.cc:903-907 and python_be.cc:2681-2686  "Stub process '" + name + "' is not healthy."; without a
    // name at python_be.cc:1352-1353 ("Stub process is not healthy.", a request the stub did not take) and
    // :962, :1090-1093 ("Stub process is not healthy while waiting for is_ready()", ...).
    code: 'python-stub-died',
    pattern: /Stub process (?:'([^']+)' )?is not healthy/,
    describe: (m) => ({
      title: `The python backend's stub process${m[1] ? ` for ${m[1]}` : ''} exited.`,
      fix:
        'Look at the lines just before it: usually native code crashed, the process was killed for memory, ' +
        "or the conda-pack environment was built for another Python version than the image's.",
    }),
  },

  // ---- python code ----
  {
    code: 'python-module-missing',
    pattern: /ModuleNotFoundError: No module named '([^']+)'/,
    describe: (m) => ({
      title: `The python model imports '${m[1]}', which is not installed in the environment it runs in.`,
      fix: `Add ${m[1]!.split('.')[0]} to the model's conda-pack environment (EXECUTION_ENV_PATH) or to the image.`,
    }),
  },
  {
    // pb_stub.cc:565  sys.attr("TritonPythonModel") on the module "<version>.model" (pb_stub.cc:2068-2069)
    code: 'python-model-class',
    pattern: /has no attribute 'TritonPythonModel'/,
    describe: () => ({
      title: 'model.py does not define class TritonPythonModel at module level.',
      fix: 'Define class TritonPythonModel with initialize/execute methods at the top level of model.py.',
      rule: 'python-model-class',
    }),
  },

  // ---- requests that do not match the model's config (core src/infer_request.cc @ 73aad7c) ----
  {
    // :1122-1130  "inference input '<name>' data-type is '<FP64>', but model '<model>' expects '<FP32>'"
    code: 'request-datatype',
    pattern: /inference input '([^']+)' data-type is '([^']+)', but model '([^']+)' expects '([^']+)'/,
    describe: (m) => ({
      title: `The request sent input '${m[1]}' as ${m[2]}, but model '${m[3]}' takes ${m[4]}.`,
      fix:
        `Send '${m[1]}' with datatype ${m[4]}, as the model's config.pbtxt declares it ` +
        '(`mme-deploy invoke --model <archive or directory>` types the inputs from it).',
    }),
  },
  {
    // :1243-1247  "input byte size mismatch for input '<name>' for model '<model>'. Expected <n>, got <m>"
    code: 'request-byte-size',
    pattern: /input byte size mismatch for input '([^']+)' for model '([^']+)'\. Expected (\d+), got (\d+)/,
    describe: (m) => ({
      title: `The request's data for input '${m[1]}' of model '${m[2]}' is ${m[4]} bytes; its shape and datatype need ${m[3]}.`,
      fix:
        "Send as many elements as the input's shape holds, in the config's datatype (shape x element size bytes; " +
        '`mme-deploy invoke --model <archive or directory>` shapes and types the inputs from config.pbtxt).',
    }),
  },
  {
    // :1174-1180  "unexpected shape for input '<name>' for model '<model>'. Expected [...], got [...]"
    code: 'request-shape',
    pattern: /unexpected shape for input '([^']+)' for model '([^']+)'\. Expected (\[[^\]]*\]), got (\[[^\]]*\])/,
    describe: (m) => ({
      title: `The request sent input '${m[1]}' of model '${m[2]}' with shape ${m[4]}; the model takes ${m[3]}.`,
      fix:
        'Send the shape the config declares, with the batch dimension first when max_batch_size > 0 ' +
        '(`mme-deploy invoke --model <archive or directory>` shapes the inputs from config.pbtxt).',
    }),
  },

  // ---- unloading (server src/sagemaker_server.cc:745-785: Triton waits at most 350 s, SageMaker 360 s) ----
  {
    code: 'unload-timeout',
    pattern: /UNLOAD did not complete within expected (\d+) seconds/,
    describe: (m) => ({
      title: `The model did not finish unloading within ${m[1]} s, so SageMaker's UNLOAD times out.`,
      fix: "Make the python model's finalize() return promptly and keep requests short: a model that cannot unload blocks loading others.",
    }),
  },

  // ---- core: configuration and repository (messages of triton-inference-server/core:src/model_config_utils.cc) ----
  {
    // core backend_model.cc:438-442
    code: 'backend-not-found',
    pattern: /unable to find backend library for backend '([^']+)'/,
    describe: (m) => ({
      title: `The image has no backend named '${m[1]}'.`,
      fix:
        `Correct backend: "${m[1]}" in config.pbtxt (python, onnxruntime, tensorrt, pytorch, ...) ` +
        `or use an image that ships the ${m[1]} backend.`,
    }),
  },
  {
    code: 'unknown-backend',
    pattern: /Could not determine backend for model/,
    describe: () => ({
      title: 'Triton could not tell which backend runs the model.',
      fix: 'Set backend (or platform) in config.pbtxt.',
      rule: 'unknown-backend',
    }),
  },
  {
    code: 'name-mismatch',
    pattern: /unexpected directory name '([^']+)' for model '([^']+)'/,
    describe: (m) => ({
      title: `Directory '${m[1]}' holds a config named '${m[2]}'.`,
      fix: `Rename the directory to '${m[2]}' or set name: "${m[1]}" in its config.pbtxt.`,
      rule: 'name-mismatch',
    }),
  },
  {
    code: 'no-version',
    pattern: /at least one version must be available under the version policy of model '([^']+)'/,
    describe: (m) => ({
      title: `Model '${m[1]}' has no version directory the version policy selects.`,
      fix: 'Add a numeric version directory such as 1/ (empty for an ensemble) and keep it in the archive.',
      rule: 'no-version',
    }),
  },
  {
    code: 'target-model-name',
    pattern: /model name must not contain path traversal characters/,
    describe: () => ({
      title: 'The TargetModel name contains a "/" (an S3 sub-folder) or is "..".',
      fix: 'Push the archive directly under the endpoint\'s prefix and invoke it by its file name.',
      rule: 'mme-target-model-name',
    }),
  },
  {
    code: 'ensemble-missing-model',
    pattern: /contains models that are not available or ambiguous: (.+)$/m,
    describe: (m) => ({
      title: `The ensemble refers to models the archive does not hold: ${m[1]}.`,
      fix: "Put each composing model in the archive as a directory named exactly as the step's model_name.",
      rule: 'ensemble-missing-model',
    }),
  },
];

/**
 * The known failure a Triton error text shows (with the lines the backend wrote just before it, if any), or
 * undefined. The first matching rule wins: rules are ordered from the most specific cause to the most general.
 */
export function tritonFailure(text: string, context: readonly string[] = []): KnownFailure | undefined {
  const all = context.length > 0 ? `${text}\n${context.join('\n')}` : text;
  for (const rule of RULES) {
    const m = rule.pattern.exec(all);
    if (m) return { code: rule.code, ...rule.describe(m, all) };
  }
  return undefined;
}

/** " (NVIDIA T4: ml.g4dn)" for a compute capability the catalog knows; "" otherwise. */
function gpusOf(capability: string): string {
  const families = new Map<string, Set<string>>();
  for (const type of INSTANCE_TYPES) {
    if (type.computeCapability !== capability) continue;
    const set = families.get(type.gpuModel) ?? new Set<string>();
    set.add(`ml.${type.family}`);
    families.set(type.gpuModel, set);
  }
  if (families.size === 0) return '';
  return ` (${[...families].map(([gpu, fams]) => `${gpu}: ${[...fams].join(', ')}`).join('; ')})`;
}
