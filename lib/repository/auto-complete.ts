// The configs Triton's backends would complete at load, where that can be done offline: onnxruntime from the model's
// model.onnx (onnx-rules.ts), tensorflow from a SavedModel's signature (tensorflow-rules.ts, which also checks a
// GraphDef's node names), openvino from model.xml (openvino-rules.ts), pytorch's inputs checked against a TorchScript
// model.pt's forward (torchscript-rules.ts; the backend completes nothing), dali from a serialized model.dali
// (dali-rules.ts) and, when asked for, python models' auto_complete_config run in a subprocess
// (python-auto-complete.ts). The ensemble rules then see the tensors Triton will see.

import { join } from 'node:path';
import type { DataTypeName, ModelConfig, ModelInputConfig, ModelOutputConfig } from '../config/model-config-schema';
import { diagnostic, type Diagnostic } from '../diagnostics';
import type { AutoCompleteJob, AutoCompleteResult, RunOptions } from '../python-auto-complete/run';
import { relPath, tritonName, type LoadedModel } from './model';
import type { checkOnnxModel } from './onnx-rules';

export interface Completion {
  /** The completed config, when the backend's auto-complete could be reproduced. */
  readonly config?: ModelConfig;
  /** What reproducing it found (a model file that is not a model, a config that contradicts it...). */
  readonly diagnostics: Diagnostic[];
}

/** The model-file rules a repository needs, loaded only when it has such models (one import per format). */
export interface ModelFileCheckers {
  readonly onnx?: typeof checkOnnxModel;
  readonly tensorflow?: typeof import('./tensorflow-rules');
  readonly openvino?: typeof import('./openvino-rules').checkOpenVinoModel;
  readonly torchscript?: typeof import('./torchscript-rules').checkTorchScriptModel;
  readonly dali?: typeof import('./dali-rules').checkDaliModel;
}

/**
 * The completer for models whose backend reads the model file (onnxruntime, tensorflow, openvino, pytorch, dali),
 * loaded only when the repository has one: `validate` starts in a few tens of milliseconds, and most repositories need
 * no model reader.
 */
export async function modelFileCompleter(models: readonly LoadedModel[]): Promise<(model: LoadedModel) => Completion | undefined> {
  const has = (backend: string) => models.some((m) => m.backend === backend);
  const checkers: ModelFileCheckers = {
    ...(has('onnxruntime') ? { onnx: (await import('./onnx-rules')).checkOnnxModel } : {}),
    ...(has('tensorflow') ? { tensorflow: await import('./tensorflow-rules') } : {}),
    ...(has('openvino') ? { openvino: (await import('./openvino-rules')).checkOpenVinoModel } : {}),
    ...(has('pytorch') ? { torchscript: (await import('./torchscript-rules')).checkTorchScriptModel } : {}),
    ...(has('dali') ? { dali: (await import('./dali-rules')).checkDaliModel } : {}),
  };
  if (Object.keys(checkers).length === 0) return () => undefined;
  return (model) => completeFromModelFile(model, checkers);
}

/** Completes (and checks against its model file) one model whose backend reads the model file. */
export function completeFromModelFile(model: LoadedModel, checkers: ModelFileCheckers): Completion | undefined {
  if (!model.parsed) return undefined;
  if (model.backend === 'onnxruntime' && checkers.onnx) return asCompletion(checkers.onnx(model));
  if (model.backend === 'openvino' && checkers.openvino) return asCompletion(checkers.openvino(model));
  if (model.backend === 'dali' && checkers.dali) return asCompletion(checkers.dali(model));
  // The PyTorch backend completes nothing (pytorch_backend src/pt/model_state.cc AutoCompleteConfig only warns).
  // Without a config.pbtxt the PyTorch backend has no inputs to map, and the load fails for that already.
  if (model.backend === 'pytorch' && model.platform === 'pytorch_libtorch' && model.hasConfig && checkers.torchscript) {
    return { diagnostics: checkers.torchscript(model) };
  }
  if (model.backend === 'tensorflow' && checkers.tensorflow) {
    // A GraphDef names its tensors only: the backend completes nothing (src/tensorflow.cc:1725-1726), it checks names.
    if (model.platform === 'tensorflow_graphdef') return { diagnostics: checkers.tensorflow.checkGraphDefModel(model) };
    if (model.platform === 'tensorflow_savedmodel') return asCompletion(checkers.tensorflow.checkSavedModel(model));
  }
  return undefined;
}

function asCompletion(outcome: { diagnostics: Diagnostic[]; completed?: ModelConfig }): Completion {
  return { ...(outcome.completed ? { config: outcome.completed } : {}), diagnostics: outcome.diagnostics };
}

/** The model as the ensemble rules should see it: with its completed config, when there is one. */
export function withCompletedConfig(model: LoadedModel, completion: Completion | undefined): LoadedModel {
  // An unchanged config (the backend had nothing to fill) needs no copy of the model: ten thousand models add up.
  if (!completion?.config || completion.config === model.config) return model;
  return { ...model, config: completion.config, completedOffline: true };
}

/**
 * Runs the auto_complete_config of every python model in python3 subprocesses (`--run-python`) and returns, per model
 * name, the completed config or what went wrong, in Triton's words. Loaded only when asked for.
 */
export async function completeWithPython(models: readonly LoadedModel[], options: RunOptions = {}): Promise<Map<string, Completion>> {
  const subjects = models.flatMap((model) => {
    if (model.backend !== 'python' || !model.parsed || model.versions.length === 0) return [];
    const version = model.versions[model.versions.length - 1]!;
    const versionDir = model.versionDirs.find((v) => v.version === version)?.dirName;
    const fileName = model.defaultModelFilename ?? 'model.py';
    if (versionDir === undefined || !fileName.endsWith('.py')) return [];
    if (model.files.stat(join(model.dir, versionDir, fileName))?.kind !== 'file') return [];
    const job: AutoCompleteJob = {
      name: tritonName(model),
      modelDir: model.dir,
      versionDir,
      fileName,
      configJson: JSON.stringify(pythonConfigJson(model)),
    };
    return [{ model, job, file: relPath(model.relDir, versionDir, fileName), path: join(model.dir, versionDir, fileName) }];
  });
  const out = new Map<string, Completion>();
  if (subjects.length === 0) return out;
  const { runAutoComplete } = await import('../python-auto-complete/run');
  const results = await runAutoComplete(subjects.map((s) => s.job), options);
  subjects.forEach(({ model, file, path }, i) => out.set(model.name, completionOf(model, file, path, results[i]!)));
  return out;
}

/**
 * The config as Triton hands it to the stub: protobuf JSON with field names as in the .proto and every primitive field
 * printed, defaults included (core src/model_config_utils.cc:2193-2195), 64-bit integers as numbers.
 */
export function pythonConfigJson(model: LoadedModel): Record<string, unknown> {
  const c = model.config;
  const plain = JSON.parse(JSON.stringify(c, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))) as Record<string, unknown>;
  const dims = (d: readonly bigint[] | undefined) => (d ?? []).map(Number);
  const input = (c.input ?? []).map((i) => ({
    name: i.name ?? '', data_type: i.data_type ?? 'TYPE_INVALID', format: i.format ?? 'FORMAT_NONE', dims: dims(i.dims),
    is_shape_tensor: i.is_shape_tensor ?? false, allow_ragged_batch: i.allow_ragged_batch ?? false, optional: i.optional ?? false,
    is_non_linear_format_io: i.is_non_linear_format_io ?? false, ...(i.reshape ? { reshape: { shape: dims(i.reshape.shape) } } : {}),
  }));
  const output = (c.output ?? []).map((o) => ({
    name: o.name ?? '', data_type: o.data_type ?? 'TYPE_INVALID', dims: dims(o.dims), label_filename: o.label_filename ?? '',
    is_shape_tensor: o.is_shape_tensor ?? false, is_non_linear_format_io: o.is_non_linear_format_io ?? false,
    ...(o.reshape ? { reshape: { shape: dims(o.reshape.shape) } } : {}),
  }));
  return {
    ...plain,
    name: tritonName(model),
    platform: c.platform ?? '',
    backend: 'python',
    runtime: c.runtime ?? '',
    version_policy: plain.version_policy ?? { latest: { num_versions: 1 } },
    max_batch_size: c.max_batch_size ?? 0,
    input,
    output,
    batch_input: plain.batch_input ?? [],
    batch_output: plain.batch_output ?? [],
    default_model_filename: c.default_model_filename ?? '',
    ...(c.model_transaction_policy ? { model_transaction_policy: { decoupled: c.model_transaction_policy.decoupled ?? false } } : {}),
  };
}

const SYNTAX_ERRORS: ReadonlySet<string> = new Set(['SyntaxError', 'IndentationError', 'TabError']);

/** A run's result as diagnostics on model.py and, when it worked, the completed config. */
function completionOf(model: LoadedModel, file: string, path: string, result: AutoCompleteResult): Completion {
  const source = { file, model: model.name, text: model.files.readText(path) };
  const at = (line: number | undefined) => (line !== undefined && source.text !== undefined ? lineStart(source.text, line) : undefined);
  if (result.ok) return result.ran ? { config: completedConfig(model.config, result.config), diagnostics: [] } : { diagnostics: [] };
  const message = `${result.type}: ${result.message}`;
  switch (result.stage) {
    case 'import':
      // python_backend @ f9088ff src/pb_stub.cc:2068 imports model.py as a module: a file that does not compile fails
      // the load in any python. IndentationError and TabError are SyntaxError's subclasses, reported by their own name.
      if (SYNTAX_ERRORS.has(result.type)) {
        return {
          diagnostics: [
            diagnostic(
              'error',
              'python-syntax',
              `${file} does not compile (${message}): the python backend fails the load importing it.`,
              source,
              at(result.line),
            ),
          ],
        };
      }
      return {
        diagnostics: [
          diagnostic(
            'warning',
            'python-import',
            `${file} could not be imported here (${message}), so its auto_complete_config was not run. ` +
              (result.type === 'ModuleNotFoundError' || result.type === 'ImportError'
                ? 'Install the packages it imports, or point MME_DEPLOY_PYTHON at the python of its environment.'
                : 'Triton imports it the same way at load: if this fails there too, the load fails.'),
            source,
            at(result.line),
          ),
        ],
      };
    case 'class':
      return {
        diagnostics: [
          diagnostic(
            'error',
            'python-model-class',
            `${file} defines no TritonPythonModel once imported (${message}): the python backend fails the load with that error.`,
            source,
          ),
        ],
      };
    case 'auto_complete':
    case 'return':
      // python_backend src/pb_stub.cc:522-531: an exception or a wrong result fails the load with its message.
      return {
        diagnostics: [
          diagnostic(
            'error',
            'python-auto-complete',
            `${result.message} (auto_complete_config of model '${tritonName(model)}' in ${file}` +
              `${result.type !== 'TypeError' && result.type !== 'ValueError' ? `, ${result.type}` : ''}): ` +
              'Triton fails the load with this message.',
            source,
            at(result.line),
          ),
        ],
      };
    case 'timeout':
    case 'crash':
      return {
        diagnostics: [
          diagnostic(
            'warning',
            'python-auto-complete-unchecked',
            `auto_complete_config of ${file} ${result.message}, so it was not checked.`,
            source,
          ),
        ],
      };
  }
}

function lineStart(text: string, line: number): { line: number; column: number; offset: number } | undefined {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    offset = text.indexOf('\n', offset) + 1;
    if (offset === 0) return undefined;
  }
  const indent = /^[ \t]*/.exec(text.slice(offset))![0].length;
  return { line, column: indent + 1, offset: offset + indent };
}

/** The config with what auto_complete_config set: max_batch_size, inputs, outputs, dynamic batching, decoupled. */
function completedConfig(config: ModelConfig, json: Record<string, unknown>): ModelConfig {
  const tensors = (list: unknown): (ModelInputConfig & ModelOutputConfig)[] =>
    (Array.isArray(list) ? list : []).map((t: Record<string, unknown>) => ({
      name: String(t.name ?? ''),
      data_type: String(t.data_type ?? 'TYPE_INVALID') as DataTypeName,
      dims: (Array.isArray(t.dims) ? t.dims : []).map((d) => BigInt(Math.trunc(Number(d)))),
      ...(t.optional === true ? { optional: true } : {}),
    }));
  const policy = json.model_transaction_policy as { decoupled?: boolean } | undefined;
  return {
    ...config,
    max_batch_size: Number(json.max_batch_size ?? 0),
    input: tensors(json.input),
    output: tensors(json.output),
    ...(json.dynamic_batching && !config.dynamic_batching ? { dynamic_batching: {} } : {}),
    ...(policy?.decoupled !== undefined
      ? { model_transaction_policy: { ...config.model_transaction_policy, decoupled: policy.decoupled } }
      : {}),
  };
}
