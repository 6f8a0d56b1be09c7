// §13 parameters the python backend and Triton core read: EXECUTION_ENV_PATH, FORCE_CPU_ONLY_INPUT_TENSORS and
// TRITON_BATCH_STRATEGY_PATH.

import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { isInside } from '../../paths';
import { LoadedModel, relPath } from '../model';
import type { Reporter } from './reporter';

const MODEL_DIR_VAR = '$$TRITON_MODEL_DIRECTORY';

/** EXECUTION_ENV_PATH with `$$TRITON_MODEL_DIRECTORY` replaced, or undefined when it does not use the variable. */
export function resolveExecutionEnvPath(model: LoadedModel): { value: string; path?: string } | undefined {
  const value = model.config.parameters?.EXECUTION_ENV_PATH?.string_value;
  if (value === undefined) return undefined;
  if (!value.includes(MODEL_DIR_VAR)) return { value };
  return { value, path: normalize(value.split(MODEL_DIR_VAR).join(model.dir)) };
}

export function checkParameters(model: LoadedModel, r: Reporter) {
  const params = model.config.parameters ?? {};
  const env = resolveExecutionEnvPath(model);
  if (env?.path !== undefined) {
    if (!isInside(model.dir, env.path)) {
      r.error('execution-env-outside', params, 'EXECUTION_ENV_PATH', `EXECUTION_ENV_PATH '${env.value}' points ` +
        'outside the model directory. Keep the conda-pack archive inside ' +
        `${relPath(model.relDir) || 'the model directory'}/ and write "$$TRITON_MODEL_DIRECTORY/<env>.tar.gz".`);
    } else if (!model.files.stat(env.path)) {
      r.error('execution-env-missing', params, 'EXECUTION_ENV_PATH', `EXECUTION_ENV_PATH '${env.value}' does not ` +
        `exist (${relPath(model.relDir, relative(model.dir, env.path).split(sep).join('/'))}): the python backend ` +
        'fails with "Failed to get the canonical path for ...". Add the conda-pack archive or remove the parameter.');
    }
  }
  const force = params.FORCE_CPU_ONLY_INPUT_TENSORS?.string_value;
  if (force !== undefined && force !== 'yes' && force !== 'no') {
    r.error('force-cpu-only-value', params, 'FORCE_CPU_ONLY_INPUT_TENSORS',
      `Incorrect value for FORCE_CPU_ONLY_INPUT_TENSORS: ${force}'. Use "yes" or "no".`);
  }
  const strategy = params.TRITON_BATCH_STRATEGY_PATH?.string_value;
  // With the sequence batcher the path is never looked at: that combination is an error of its own (sequence-batching.ts).
  if (strategy !== undefined && strategy !== '' && !model.config.sequence_batching) {
    const path = isAbsolute(strategy) ? strategy : join(model.dir, strategy);
    if (!isInside(model.dir, path)) {
      r.error('batch-strategy-escapes', params, 'TRITON_BATCH_STRATEGY_PATH',
        `Batching library path escapes model repository. Keep '${strategy}' inside the model directory.`);
    } else if (!model.files.stat(path)) {
      r.error('batch-strategy-missing', params, 'TRITON_BATCH_STRATEGY_PATH',
        `Batching library path not found: ${relPath(model.relDir, strategy)}.`);
    }
  }
}
