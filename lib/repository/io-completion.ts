// How much of a model's inputs and outputs its backend fills in at load (auto-complete runs before Triton checks
// them: core src/backend_model.cc TritonModel::Create, then Model::Init, model.cc:92-101). What a rule may conclude
// from a config's missing or incomplete inputs depends on it: an error where nothing will fill them, a warning where
// the backend will or might.

import { join } from 'node:path';
import type { LoadedModel } from './model';

/**
 * - `none`: nothing fills them (PyTorch, TensorFlow GraphDef, a python model without `auto_complete_config`, ensembles)
 * - `when-empty`: the backend writes a whole list only when the config gives none (onnxruntime, OpenVINO)
 * - `fills-listed`: a whole list when the config gives none, else only the missing data_type and dims of the tensors
 *   it lists, never a tensor more (TensorRT)
 * - `fills-entries`: the backend completes partial entries and may add tensors to a list (DALI, python
 *   `auto_complete_config`, vLLM)
 * - `unknown`: a backend this tool does not know, or a python model whose class comes from elsewhere
 */
export type IoCompletion = 'none' | 'when-empty' | 'fills-listed' | 'fills-entries' | 'unknown';

/**
 * Sources: onnxruntime_backend src/onnxruntime.cc:993-1018 (no auto-complete when inputs and outputs are listed)
 * and :1180-1229 (a list is written whole); openvino_backend src/openvino.cc AutoCompleteInputOrOutput (only when
 * none is given); tensorrt fills missing fields of the tensors a non-empty list names and adds none
 * (tensorrt_backend src/model_state.cc:976-990 FixIO: the engine's tensors replace an empty list, else each listed
 * tensor is matched by name; server qa/L0_model_config autofill_noplatform_success/tensorrt/incomplete_input); DALI
 * fills listed tensors and adds the pipeline's others (dali_backend qa/L0_autoconfig partial_autoconfig); python
 * runs TritonPythonModel.auto_complete_config when the class has it (python_backend src/pb_stub.cc:522-525); the vLLM
 * backend's model.py defines it (vllm_backend src/model.py:50).
 */
export function ioCompletion(model: LoadedModel): IoCompletion {
  if (model.platform === 'ensemble' || model.completedOffline) return 'none';
  switch (model.backend) {
    case 'onnxruntime':
    case 'openvino':
      return 'when-empty';
    case 'tensorrt':
      return 'fills-listed';
    case 'dali':
    case 'vllm':
      return 'fills-entries';
    case 'pytorch':
    // Triton's test backend: an empty config stays without tensors (server qa/L0_model_config
    // autofill_noplatform_success/custom/empty_config.identity/expected).
    case 'identity':
      return 'none';
    case 'tensorflow':
      return model.platform === 'tensorflow_savedmodel' ? 'when-empty' : 'none';
    case 'python': {
      const facts = pythonModelFacts(model);
      return facts.autoComplete === true ? 'fills-entries' : facts.autoComplete === false ? 'none' : 'unknown';
    }
    default:
      return 'unknown';
  }
}

/** What model.py (of the latest selected version) certainly says about TritonPythonModel, read as text. */
export interface PythonModelFacts {
  /** The source, when it could be read. */
  readonly source?: string;
  /**
   * - `class`: `class TritonPythonModel` with no base class is defined at the top level of the file
   * - `elsewhere`: the name is bound some other way (imported, assigned, a class with bases, inside a block)
   * - `absent`: the name appears nowhere and nothing could bind it dynamically (`import *`, `__getattr__`, exec...)
   * - `unknown`: the source could not be read
   */
  readonly definition: 'class' | 'elsewhere' | 'absent' | 'unknown';
  /** Whether the class has auto_complete_config: false only when it is a plain class of this file without it. */
  readonly autoComplete?: boolean;
}

/** Names that can bind a module attribute without the name appearing in the file. */
const DYNAMIC_BINDING = new RegExp(
  [
    /^\s*from\s+\S+\s+import\s+\*/,
    /\b__getattr__\b/,
    /\bglobals\s*\(/,
    /\bvars\s*\(/,
    /\bexec\s*\(/,
    /\bsetattr\s*\(/,
    /__dict__/,
    /\bimportlib\b/,
    /\b__import__\s*\(/,
  ]
    .map((r) => r.source)
    .join('|'),
  'm',
);

export function pythonModelFacts(model: LoadedModel): PythonModelFacts {
  const version = model.versions[model.versions.length - 1];
  const dirName = model.versionDirs.find((v) => v.version === version)?.dirName;
  const source =
    dirName === undefined ? undefined : model.files.readText(join(model.dir, dirName, model.defaultModelFilename ?? 'model.py'));
  return pythonSourceFacts(source);
}

export function pythonSourceFacts(source: string | undefined): PythonModelFacts {
  if (source === undefined) return { definition: 'unknown' };
  if (/^class\s+TritonPythonModel\s*(\(\s*(object)?\s*\))?\s*:/m.test(source)) {
    return { source, definition: 'class', autoComplete: /\bauto_complete_config\b/.test(source) };
  }
  if (/\bTritonPythonModel\b/.test(source) || DYNAMIC_BINDING.test(source)) {
    // A base class or another module may bring auto_complete_config: only its mention here is evidence.
    return { source, definition: 'elsewhere', ...(/\bauto_complete_config\b/.test(source) ? { autoComplete: true } : {}) };
  }
  return { source, definition: 'absent' };
}
