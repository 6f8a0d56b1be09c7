// Estimates the GPU memory a Triton model holds once loaded, from the size of its weight files and its backend.
// A model's real footprint depends on batch size, activations and the framework's allocator, so the figures are
// an informed default that the user can override per archive (`--memory name=GiB`); the assumptions are printed.

import type { ModelConfig } from '../config/model-config-schema';

/** One file of a model directory; `path` is relative to the model directory, `/`-separated (`1/model.plan`). */
export interface ModelFile {
  readonly path: string;
  readonly size: number;
}

export interface TritonModelFiles {
  /** The model's directory name. */
  readonly name: string;
  readonly config?: ModelConfig;
  /** The backend as Triton would auto-complete it, when the caller knows it (the repository validator does). */
  readonly backend?: string;
  readonly files: readonly ModelFile[];
}

/** How one backend's weights turn into GPU memory. */
export interface BackendMemoryRule {
  /** GPU bytes per byte of weight files, per copy of the weights. */
  readonly weightFactor: number;
  /** Whether each GPU instance of the model holds its own copy of the weights. */
  readonly weightsPerInstance: boolean;
  /** Activations, workspace or a CUDA context, per GPU instance, MiB. */
  readonly perInstanceMiB: number;
  /** Whether instances with kind KIND_AUTO (or none given) run on the GPU. */
  readonly autoIsGpu: boolean;
}

/**
 * The defaults. TensorRT instances on one GPU share one deserialised engine; ONNX Runtime, PyTorch and TensorFlow
 * create one session per instance. Python models hold nothing on the GPU unless their instance group says KIND_GPU
 * (then the stub process pays for a CUDA context). DALI decodes on the GPU unless told KIND_CPU.
 */
export const BACKEND_MEMORY_RULES: Readonly<Record<string, BackendMemoryRule>> = {
  tensorrt: { weightFactor: 1.0, weightsPerInstance: false, perInstanceMiB: 256, autoIsGpu: true },
  onnxruntime: { weightFactor: 1.25, weightsPerInstance: true, perInstanceMiB: 256, autoIsGpu: true },
  pytorch: { weightFactor: 1.25, weightsPerInstance: true, perInstanceMiB: 256, autoIsGpu: true },
  tensorflow: { weightFactor: 1.5, weightsPerInstance: true, perInstanceMiB: 512, autoIsGpu: true },
  python: { weightFactor: 0, weightsPerInstance: false, perInstanceMiB: 512, autoIsGpu: false },
  dali: { weightFactor: 0, weightsPerInstance: false, perInstanceMiB: 256, autoIsGpu: true },
  ensemble: { weightFactor: 0, weightsPerInstance: false, perInstanceMiB: 0, autoIsGpu: false },
  other: { weightFactor: 1.25, weightsPerInstance: true, perInstanceMiB: 256, autoIsGpu: true },
};

/** One sentence per rule, for the report. */
export const MEMORY_ASSUMPTION =
  'GPU memory = weight files of the loaded versions × factor (TensorRT 1.0 shared by its instances; ONNX Runtime ' +
  '1.25, PyTorch 1.25, TensorFlow 1.5 per instance) + per GPU instance 256 MiB (512 MiB TensorFlow, 512 MiB a ' +
  'Python model on KIND_GPU, 256 MiB DALI); Python and DALI on KIND_CPU and ensembles hold none.';

export interface ModelMemoryEstimate {
  readonly model: string;
  /** The backend the rule was chosen by (`other` when unknown). */
  readonly backend: string;
  /** GPU instances Triton creates for the model (0 when it runs on the CPU). */
  readonly gpuInstances: number;
  /** Bytes of the weight files of the versions Triton loads. */
  readonly weightBytes: number;
  readonly gpuBytes: number;
  /** Bytes of a conda-pack environment the Python backend unpacks on load, 0 if none is in the model directory. */
  readonly pythonEnvBytes: number;
}

const MiB = 1024 * 1024;

export function estimateModelMemory(model: TritonModelFiles): ModelMemoryEstimate {
  const backend = backendOf(model);
  const rule = BACKEND_MEMORY_RULES[backend] ?? BACKEND_MEMORY_RULES.other!;
  const gpuInstances = gpuInstanceCount(model.config, rule);
  const loaded = new Set(loadedVersions(model));
  let weightBytes = 0;
  for (const file of model.files) {
    const [first, ...rest] = file.path.split('/');
    if (rest.length > 0 && first !== undefined && loaded.has(first) && !file.path.endsWith('.py')) {
      weightBytes += file.size;
    }
  }
  if (backend === 'python' || backend === 'ensemble' || backend === 'dali') weightBytes = 0;
  const copies = rule.weightsPerInstance ? gpuInstances : Math.min(gpuInstances, 1);
  const gpuBytes = Math.ceil(weightBytes * rule.weightFactor * copies + gpuInstances * rule.perInstanceMiB * MiB);
  return { model: model.name, backend, gpuInstances, weightBytes, gpuBytes, pythonEnvBytes: pythonEnvBytes(model) };
}

/** Maps a config (or, without one, the files) to a key of BACKEND_MEMORY_RULES. */
export function backendOf(model: TritonModelFiles): string {
  const { backend, platform } = model.config ?? {};
  const byPlatform: Record<string, string> = {
    tensorrt_plan: 'tensorrt',
    onnxruntime_onnx: 'onnxruntime',
    pytorch_libtorch: 'pytorch',
    tensorflow_graphdef: 'tensorflow',
    tensorflow_savedmodel: 'tensorflow',
    ensemble: 'ensemble',
  };
  const name = backend || (platform ? byPlatform[platform] : undefined) || model.backend;
  if (name) return name in BACKEND_MEMORY_RULES ? name : 'other';
  if (model.config?.ensemble_scheduling) return 'ensemble';
  const byFile: [RegExp, string][] = [
    [/\/model\.plan$/, 'tensorrt'],
    [/\/model\.onnx(\/|$)/, 'onnxruntime'],
    [/\/model\.pt$/, 'pytorch'],
    [/\/model\.(graphdef|savedmodel)(\/|$)/, 'tensorflow'],
    [/\/model\.py$/, 'python'],
    [/\/model\.dali$/, 'dali'],
  ];
  for (const [pattern, guess] of byFile) if (model.files.some((f) => pattern.test(`/${f.path}`))) return guess;
  return 'other';
}

function gpuInstanceCount(config: ModelConfig | undefined, rule: BackendMemoryRule): number {
  const groups = config?.instance_group;
  // Triton's default is one instance per visible GPU; a GPU MME instance has one GPU.
  if (!groups || groups.length === 0) return rule.autoIsGpu ? 1 : 0;
  let count = 0;
  for (const group of groups) {
    const kind = group.kind ?? 'KIND_AUTO';
    const onGpu = kind === 'KIND_GPU' || (kind === 'KIND_AUTO' && rule.autoIsGpu);
    if (onGpu) count += group.count ?? 1;
  }
  return count;
}

/** The version directories Triton loads under the model's version_policy (default: the latest one). */
export function loadedVersions(model: TritonModelFiles): string[] {
  const versions = [...new Set(model.files.map((f) => f.path.split('/')[0]!).filter((d) => /^\d+$/.test(d)))].sort(
    (a, b) => Number(b) - Number(a),
  );
  const policy = model.config?.version_policy;
  if (policy?.all) return versions;
  if (policy?.specific) {
    const wanted = new Set((policy.specific.versions ?? []).map((v) => String(v)));
    return versions.filter((v) => wanted.has(String(Number(v))));
  }
  return versions.slice(0, policy?.latest?.num_versions ?? 1);
}

function pythonEnvBytes(model: TritonModelFiles): number {
  const value = model.config?.parameters?.EXECUTION_ENV_PATH?.string_value;
  if (!value) return 0;
  const relative = value.replace(/^\$\$TRITON_MODEL_DIRECTORY\/?/, '');
  if (relative === value && value.startsWith('/')) return 0;
  return model.files.find((f) => f.path === relative.replace(/^\.\//, ''))?.size ?? 0;
}
