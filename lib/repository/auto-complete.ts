// The configs Triton's backends would complete at load, where that can be done offline: onnxruntime from the model's
// model.onnx (onnx-rules.ts) and, when asked for, python models' auto_complete_config run in a subprocess
// (python-auto-complete.ts). The ensemble rules then see the tensors Triton will see.

import type { ModelConfig } from '../config/model-config-schema';
import type { Diagnostic } from '../diagnostics';
import type { LoadedModel } from './model';
import { checkOnnxModel } from './onnx-rules';

export interface Completion {
  /** The completed config, when the backend's auto-complete could be reproduced. */
  readonly config?: ModelConfig;
  /** What reproducing it found (a model file that is not a model, a config that contradicts it...). */
  readonly diagnostics: Diagnostic[];
}

/** Completes (and checks against its model file) one model whose backend reads the model file: onnxruntime. */
export function completeFromModelFile(model: LoadedModel): Completion | undefined {
  if (model.backend !== 'onnxruntime' || !model.parsed) return undefined;
  const outcome = checkOnnxModel(model);
  return { ...(outcome.completed ? { config: outcome.completed } : {}), diagnostics: outcome.diagnostics };
}

/** The model as the ensemble rules should see it: with its completed config, when there is one. */
export function withCompletedConfig(model: LoadedModel, completion: Completion | undefined): LoadedModel {
  return completion?.config && completion.config !== model.config ? { ...model, config: completion.config } : model;
}
