// Triton's rules for one model that can be decided from its config text and the files present
// (ValidateModelConfig, triton-inference-server/core:src/model_config_utils.cc:1434, and the backends' loaders). Each
// rule reports Triton's own wording plus how to fix it.
// One file per section; the rules read files only through `model.files`, never the file system.

import type { ModelConfig } from '../../config/model-config-schema';
import type { Diagnostic } from '../../diagnostics';
import { tritonName, type LoadedModel } from '../model';
import { checkBatchIo } from './batch-io';
import { checkDynamicBatching } from './dynamic-batching';
import { checkModelFiles } from './files';
import { checkInstanceGroups } from './instance-groups';
import { checkIo } from './io';
import { checkLabels } from './labels';
import { checkMetrics } from './metrics';
import { checkParameters } from './parameters';
import { checkPlatformBackend } from './platform';
import { Reporter } from './reporter';
import { checkSequenceBatching } from './sequence-batching';
import { checkDuplicateConfigPrefix, checkMissingConfig, checkVersions } from './versions';
import { checkWarmup } from './warmup';

export { resolveExecutionEnvPath } from './parameters';

export interface ModelRuleOptions {
  /** Models whose `name` need not equal their directory (SageMaker renames the model it loads). */
  readonly renamed?: ReadonlySet<string>;
  /** The config as the backend completes it at load, where that was reproduced offline (auto-complete.ts). */
  readonly completed?: ModelConfig;
}

/** Reports faults of one model; the caller adds ensemble-graph and MME rules. */
export function checkModel(model: LoadedModel, options: ModelRuleOptions = {}): Diagnostic[] {
  const out: Diagnostic[] = [];
  const r = new Reporter(model, out);
  const c = model.config;
  const isEnsemble = model.platform === 'ensemble';

  checkVersions(model, r);
  if (!model.hasConfig) {
    checkMissingConfig(model, r);
    if (model.backend) checkModelFiles(model, r);
    return out;
  }
  if (!model.parsed) return out; // parse errors are reported already; rules on a broken config only add noise

  if (c.name !== undefined && c.name !== '' && c.name !== model.name && !options.renamed?.has(model.name)) {
    r.error('name-mismatch', c, 'name', `unexpected directory name '${model.name}' for model '${c.name}', ` +
      `directory name must equal model name. Rename the directory to '${c.name}' or set name: "${model.name}".`);
  }
  checkPlatformBackend(model, r);
  if ((c.max_batch_size ?? 0) < 0) {
    r.error('negative-max-batch-size', c, 'max_batch_size', `'max_batch_size' must be non-negative value for ` +
      `${tritonName(model)}. Use 0 for a model without a batch dimension, or the largest batch it accepts.`);
  }
  checkIo(model, r, isEnsemble, options.completed ? { completed: options.completed } : {});
  checkBatchIo(model, r);
  if (c.model_transaction_policy?.decoupled && c.response_cache?.enable) {
    r.error('decoupled-response-cache', c, 'response_cache', 'Response Cache does not currently support model ' +
      `${tritonName(model)} with 'decoupled' transaction policy. Please disable the response cache.`);
  }
  checkDynamicBatching(model, r);
  checkSequenceBatching(model, r);
  checkInstanceGroups(model, r, isEnsemble);
  checkLabels(model, r);
  checkWarmup(model, r);
  checkParameters(model, r);
  checkMetrics(model, r);
  checkDuplicateConfigPrefix(model, r);
  if (!isEnsemble) checkModelFiles(model, r);
  return out;
}
