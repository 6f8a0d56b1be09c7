// Triton's server-side auto-complete of name/platform/backend/default_model_filename (core AutoCompleteBackendFields,
// triton-inference-server/core:src/model_config_utils.cc:1051) and the backend/platform pair checks of ValidateModelConfig (:1434).

import type { ModelConfig } from '../config/model-config-schema';

export interface BackendFields {
  readonly platform?: string;
  readonly backend?: string;
  readonly defaultModelFilename?: string;
}

/** What a model file must be, for the backends whose files Triton (or the backend) requires. */
export interface ModelFileRule {
  readonly backend: string;
  readonly kind: 'file' | 'directory' | 'file-or-directory';
}

const TENSORFLOW_PLATFORMS = new Set(['tensorflow_savedmodel', 'tensorflow_graphdef']);

/** Default file name per platform (when the platform decides) or backend. */
const DEFAULT_FILENAMES: Record<string, string> = {
  tensorflow_savedmodel: 'model.savedmodel',
  tensorflow_graphdef: 'model.graphdef',
  tensorrt_plan: 'model.plan',
  onnxruntime_onnx: 'model.onnx',
  pytorch_libtorch: 'model.pt',
  torch_aoti: 'model.pt2',
  openvino: 'model.xml',
  python: 'model.py',
  dali: 'model.dali',
};

/** Backends whose model file must exist, and whether it is a file or a directory. */
export function modelFileRule(fields: BackendFields): ModelFileRule | undefined {
  const { backend, platform, defaultModelFilename } = fields;
  switch (backend) {
    case 'tensorflow':
      return { backend, kind: platform === 'tensorflow_savedmodel' ? 'directory' : 'file' };
    case 'onnxruntime':
      return { backend, kind: 'file-or-directory' };
    case 'tensorrt':
    case 'pytorch':
    case 'python':
    case 'dali':
      return { backend, kind: 'file' };
    case 'openvino':
      return { backend, kind: defaultModelFilename?.endsWith('.xml') === false ? 'file-or-directory' : 'file' };
    default:
      return undefined;
  }
}

/**
 * Fills platform, backend and default_model_filename the way Triton does before validation.
 * `firstSubdirFiles` lists the entries of the lexicographically first subdirectory of the model directory (Triton
 * inspects only that one), `modelName` is the directory name.
 */
export function autoCompleteBackendFields(
  config: ModelConfig,
  modelName: string,
  listFirstSubdir: () => ReadonlySet<string>,
): BackendFields {
  let platform = config.platform ?? '';
  let backend = config.backend ?? '';
  let filename = config.default_model_filename ?? '';
  // Reading the directory costs a system call per model: only when the config leaves something to infer.
  let files: ReadonlySet<string> | undefined;
  const firstSubdirFiles = { has: (name: string) => (files ??= listFirstSubdir()).has(name) };

  if (platform === 'ensemble') return { platform, backend: backend || undefined };

  if (!platform && !backend && !filename) {
    const inferred = inferFromFiles(firstSubdirFiles);
    if (inferred) return inferred;
    // A custom backend is named by the model: `<anything>.<backend>`.
    const dot = modelName.lastIndexOf('.');
    if (dot > 0 && dot < modelName.length - 1) {
      const custom = modelName.slice(dot + 1);
      return { backend: custom, defaultModelFilename: `model.${custom}` };
    }
    return {};
  }

  if (!backend) {
    if (platform === 'tensorrt_plan' || (!platform && filename === 'model.plan')) backend = 'tensorrt';
    else if (platform === 'onnxruntime_onnx' || (!platform && filename === 'model.onnx')) backend = 'onnxruntime';
    else if (platform === 'pytorch_libtorch' || platform === 'libtorch' || platform === 'torch_aoti') backend = 'pytorch';
    else if (!platform && (filename === 'model.pt' || filename === 'model.pt2')) backend = 'pytorch';
    else if (TENSORFLOW_PLATFORMS.has(platform)) backend = 'tensorflow';
    else if (!platform && (filename === 'model.savedmodel' || filename === 'model.graphdef')) backend = 'tensorflow';
    else if (!platform && filename === 'model.xml') backend = 'openvino';
    else if (!platform && filename === 'model.py') backend = 'python';
  }

  if (!platform) {
    if (backend === 'tensorrt') platform = 'tensorrt_plan';
    else if (backend === 'onnxruntime') platform = 'onnxruntime_onnx';
    else if (backend === 'pytorch') platform = pytorchPlatform(filename, firstSubdirFiles);
    else if (backend === 'tensorflow') platform = tensorflowPlatform(filename, firstSubdirFiles);
  }

  if (!filename && backend) {
    filename = DEFAULT_FILENAMES[platform] ?? DEFAULT_FILENAMES[backend] ?? '';
  }
  return { platform: platform || undefined, backend: backend || undefined, defaultModelFilename: filename || undefined };
}

/** AOTInductor when the model file is `model.pt2` (named, or found in the first version directory), else TorchScript. */
function pytorchPlatform(filename: string, files: { has(name: string): boolean }): string {
  return filename === 'model.pt2' || files.has('model.pt2') ? 'torch_aoti' : 'pytorch_libtorch';
}

/** The TensorFlow platform the model file names, or '' when neither a GraphDef nor a SavedModel is there. */
function tensorflowPlatform(filename: string, files: { has(name: string): boolean }): string {
  if (filename === 'model.graphdef' || (!filename && files.has('model.graphdef'))) return 'tensorflow_graphdef';
  if (filename === 'model.savedmodel' || (!filename && files.has('model.savedmodel'))) return 'tensorflow_savedmodel';
  return '';
}

function inferFromFiles(files: { has(name: string): boolean }): BackendFields | undefined {
  if (files.has('model.plan')) return { platform: 'tensorrt_plan', backend: 'tensorrt', defaultModelFilename: 'model.plan' };
  if (files.has('model.onnx')) return { platform: 'onnxruntime_onnx', backend: 'onnxruntime', defaultModelFilename: 'model.onnx' };
  if (files.has('model.savedmodel')) {
    return { platform: 'tensorflow_savedmodel', backend: 'tensorflow', defaultModelFilename: 'model.savedmodel' };
  }
  if (files.has('model.graphdef')) {
    return { platform: 'tensorflow_graphdef', backend: 'tensorflow', defaultModelFilename: 'model.graphdef' };
  }
  if (files.has('model.pt')) return { platform: 'pytorch_libtorch', backend: 'pytorch', defaultModelFilename: 'model.pt' };
  if (files.has('model.pt2')) return { platform: 'torch_aoti', backend: 'pytorch', defaultModelFilename: 'model.pt2' };
  if (files.has('model.xml')) return { backend: 'openvino', defaultModelFilename: 'model.xml' };
  if (files.has('model.py')) return { backend: 'python', defaultModelFilename: 'model.py' };
  return undefined;
}

/** The backend family a platform belongs to, for rule 2.3 (`libtorch` is accepted by autofill but not here). */
export function backendOfPlatform(platform: string): string | undefined {
  switch (platform) {
    case 'tensorrt_plan':
      return 'tensorrt';
    case 'onnxruntime_onnx':
      return 'onnxruntime';
    case 'pytorch_libtorch':
    case 'torch_aoti':
      return 'pytorch';
    case 'tensorflow_graphdef':
    case 'tensorflow_savedmodel':
      return 'tensorflow';
    default:
      return undefined;
  }
}

/** Backends whose platform Triton checks against the backend (rule 2.3). */
export const PLATFORM_CHECKED_BACKENDS = new Set(['tensorflow', 'tensorrt', 'onnxruntime', 'pytorch']);

/** Backends that can fill in inputs and outputs from the model file when the config leaves them out. */
export function autoCompletesIo(backend: string | undefined, platform: string | undefined): boolean {
  return (
    backend === 'onnxruntime' ||
    backend === 'tensorrt' ||
    backend === 'openvino' ||
    (backend === 'tensorflow' && platform === 'tensorflow_savedmodel')
  );
}
