// §2 platform and backend: the pair Triton accepts, ensemble scheduling only on ensembles, a runtime that stays in
// the backend directory.

import { isAbsolute, normalize } from 'node:path';
import { backendOfPlatform, PLATFORM_CHECKED_BACKENDS } from '../backend-inference';
import { tritonName, type LoadedModel } from '../model';
import type { Reporter } from './reporter';

export function checkPlatformBackend(model: LoadedModel, r: Reporter) {
  const c = model.config;
  const platform = model.platform ?? '';
  const backend = model.backend ?? '';
  if (platform === 'ensemble') {
    if (backend) {
      r.error('ensemble-backend', c, 'backend', `Ensemble model '${tritonName(model)}' must have platform type 'ensemble' ` +
        `and empty backend type. Remove backend: "${backend}".`);
    }
    if (!c.ensemble_scheduling) {
      r.error('ensemble-missing-scheduling', c, 'platform', 'ensemble scheduling must be set for ensemble ' +
        `${tritonName(model)} whose platform is ensemble. Add ensemble_scheduling { step [ ... ] }.`);
    }
    return;
  }
  if (c.ensemble_scheduling) {
    r.error('ensemble-scheduling-not-ensemble', c, 'ensemble_scheduling', 'ensemble scheduling cannot be set for ' +
      `model '${tritonName(model)}' whose platform is not ensemble. Set platform: "ensemble" or remove ` +
      'ensemble_scheduling.');
  }
  if (!backend) {
    if (platform) {
      r.error('unknown-platform', c, 'platform', `unexpected platform type '${platform}' for ${tritonName(model)}. Known ` +
        'platforms: tensorrt_plan, onnxruntime_onnx, pytorch_libtorch, torch_aoti, tensorflow_graphdef, ' +
        'tensorflow_savedmodel, ensemble; other backends are named with backend: "...".');
    } else {
      r.error('unknown-backend', c, undefined, 'Invalid model name: Could not determine backend for model ' +
        `'${model.name}' with no backend in model configuration. Expected model name of the form ` +
        `'model.<backend_name>'. Set backend (e.g. "python", "onnxruntime") or platform in config.pbtxt.`);
    }
    return;
  }
  if (PLATFORM_CHECKED_BACKENDS.has(backend) && backendOfPlatform(platform) !== backend) {
    const fix = platform === 'libtorch'
      ? ' Use platform "pytorch_libtorch".'
      : ` Remove platform or set the ${backend} platform (e.g. ${examplePlatform(backend)}).`;
    const field = c.platform !== undefined ? 'platform' : 'backend';
    r.error('platform-backend-mismatch', c, field, `unexpected 'platform' and 'backend' pair, got:${platform}, ${backend}.${fix}`);
  }
  const runtime = c.runtime;
  if (!runtime && !SHIPPED_BACKENDS.has(backend)) {
    // Whether the library is there is a fact about the server, not the repository: a warning.
    r.warning('unknown-backend-library', c, c.backend !== undefined ? 'backend' : undefined, `Backend '${backend}' is ` +
      "not one of the backends Triton's images ship, so the load works only if the serving image adds " +
      `<backends>/${backend}/libtriton_${backend}.so (or a python-based backend's model.py); otherwise Triton fails ` +
      `with "unable to find backend library for backend '${backend}', try specifying runtime on the model configuration."`);
  }
  if (runtime && (isAbsolute(runtime) || normalize(runtime).split(/[\\/]/).includes('..'))) {
    r.error('runtime-escapes', c, 'runtime', `backend library name '${runtime}' escapes backend directory, for ` +
      `model '${model.name}', check model config runtime field. Give a library file name such as ` +
      `"libtriton_${backend}.so" or "model.py".`);
  }
}

/**
 * Backends in Triton's release images: server build.py:2212-2224 (enable_all) plus tensorflow (older releases) and
 * the ones of the vLLM and TensorRT-LLM images; core src/backend_model.cc:436-443 fails the load for any other
 * unless the server has its library.
 */
const SHIPPED_BACKENDS = new Set([
  'onnxruntime',
  'python',
  'dali',
  'pytorch',
  'openvino',
  'fil',
  'tensorrt',
  'identity',
  'square',
  'repeat',
  'tensorflow',
  'vllm',
  'tensorrtllm',
]);

function examplePlatform(backend: string): string {
  const examples: Record<string, string> = {
    tensorflow: '"tensorflow_savedmodel" or "tensorflow_graphdef"',
    tensorrt: '"tensorrt_plan"',
    onnxruntime: '"onnxruntime_onnx"',
    pytorch: '"pytorch_libtorch"',
  };
  return examples[backend] ?? '""';
}
