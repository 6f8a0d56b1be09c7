// Triton's rules for one model that can be decided from its config text and the files present
// (triton-validation-rules.md §1–§9, §11–§14, §16). Each rule reports Triton's own wording plus how to fix it.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import type {
  DataTypeName,
  ModelInputConfig,
  ModelOutputConfig,
} from '../config/model-config-schema';
import { autoCompletesIo, backendOfPlatform, modelFileRule, PLATFORM_CHECKED_BACKENDS } from './backend-inference';
import { diagnostic, type Diagnostic, type Severity } from '../diagnostics';
import { configSource } from './ensemble-rules';
import { LoadedModel, relPath } from './model';

export interface ModelRuleOptions {
  /** Models whose `name` need not equal their directory (SageMaker renames the model it loads). */
  readonly renamed?: ReadonlySet<string>;
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
    r.error('name-mismatch', c, 'name', `unexpected directory name '${model.name}' for model '${c.name}', directory name must equal model name. Rename the directory to '${c.name}' or set name: "${model.name}".`);
  }
  checkPlatformBackend(model, r);
  if ((c.max_batch_size ?? 0) < 0) {
    r.error('negative-max-batch-size', c, 'max_batch_size', `'max_batch_size' must be non-negative value for ${model.name}. Use 0 for a model without a batch dimension, or the largest batch it accepts.`);
  }
  checkIo(model, r, isEnsemble);
  checkBatchIo(model, r);
  if (c.model_transaction_policy?.decoupled && c.response_cache?.enable) {
    r.error('decoupled-response-cache', c, 'response_cache', `Response Cache does not currently support model ${model.name} with 'decoupled' transaction policy. Please disable the response cache.`);
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

// ---- reporting ------------------------------------------------------------------------------------------------

class Reporter {
  constructor(
    readonly model: LoadedModel,
    private readonly out: Diagnostic[],
  ) {}

  error(code: string, at: object | undefined, field: string | undefined, message: string, index?: number) {
    this.add('error', code, at, field, message, index);
  }

  warning(code: string, at: object | undefined, field: string | undefined, message: string, index?: number) {
    this.add('warning', code, at, field, message, index);
  }

  /** A diagnostic on a file other than config.pbtxt (no line). */
  file(severity: Severity, code: string, file: string, message: string) {
    this.out.push(diagnostic(severity, code, message, { file, model: this.model.name }));
  }

  private add(severity: Severity, code: string, at: object | undefined, field: string | undefined, message: string, index?: number) {
    const pos = this.model.positions.of(at, field, index) ?? this.model.positions.of(at);
    this.out.push(diagnostic(severity, code, message, configSource(this.model), pos));
  }
}

// ---- §1 versions and config presence ------------------------------------------------------------------------

function checkVersions(model: LoadedModel, r: Reporter) {
  const c = model.config;
  const specific = c.version_policy?.specific?.versions;
  if (specific) {
    const present = new Set(model.versionDirs.map((v) => v.version));
    specific.forEach((v, i) => {
      if (!present.has(Number(v))) {
        const fatal = model.versions.length === 0;
        r[fatal ? 'error' : 'warning']('version-missing', c.version_policy!.specific!, 'versions', `version ${v} is specified for model '${model.name}', but the version directory is not present. Create ${relPath(model.relDir, String(v))}/ or remove ${v} from version_policy.`, i);
      }
    });
  }
  if (model.versions.length === 0) {
    const why = model.versionDirs.length === 0 ? `${relPath(model.relDir) || model.name}/ has no numeric version directory` : 'the version_policy selects none of the version directories present';
    r.file('error', 'no-version', model.hasConfig ? model.configFile : relPath(model.relDir) || '.', `at least one version must be available under the version policy of model '${model.name}': ${why}. Add a version directory such as ${relPath(model.relDir, '1')}/${model.platform === 'ensemble' ? ' (empty for an ensemble)' : ' holding the model file'}.`);
  }
}

function checkMissingConfig(model: LoadedModel, r: Reporter) {
  const where = relPath(model.relDir) || '.';
  if (!model.backend) {
    r.file('error', 'unknown-backend', where, `Invalid model name: Could not determine backend for model '${model.name}' with no backend in model configuration. Expected model name of the form 'model.<backend_name>'. Add a config.pbtxt with backend (or platform), or put the model file under its default name (model.onnx, model.plan, model.pt, model.py, ...) in the version directory.`);
    return;
  }
  const python = model.backend === 'python' && pythonSource(model)?.includes('auto_complete_config');
  if (autoCompletesIo(model.backend, model.platform) || python) {
    r.file('warning', 'config-missing', where, `Model '${model.name}' has no config.pbtxt; Triton auto-completes it from the ${model.backend} model file at load time. Write a config.pbtxt to fix inputs, outputs and batching (and so SageMaker's ensemble detection can read it).`);
  } else {
    r.file('error', 'config-missing', where, `model configuration is not provided for model '${model.name}': the ${model.backend} backend cannot generate one. Add ${relPath(model.relDir, 'config.pbtxt')}.`);
  }
}

function checkDuplicateConfigPrefix(model: LoadedModel, r: Reporter) {
  for (const name of model.entryNames) {
    if (name !== 'config.pbtxt' && 'config.pbtxt'.startsWith(name)) {
      r.file('warning', 'duplicate-config', relPath(model.relDir, name), `Triton logs "Duplicate model config is detected" for '${name}' next to config.pbtxt and cannot track changes to this model. Rename or remove it.`);
    }
  }
}

// ---- §2 platform and backend ----------------------------------------------------------------------------------

function checkPlatformBackend(model: LoadedModel, r: Reporter) {
  const c = model.config;
  const platform = model.platform ?? '';
  const backend = model.backend ?? '';
  if (platform === 'ensemble') {
    if (backend) {
      r.error('ensemble-backend', c, 'backend', `Ensemble model '${model.name}' must have platform type 'ensemble' and empty backend type. Remove backend: "${backend}".`);
    }
    if (!c.ensemble_scheduling) {
      r.error('ensemble-missing-scheduling', c, 'platform', `ensemble scheduling must be set for ensemble ${model.name} whose platform is ensemble. Add ensemble_scheduling { step [ ... ] }.`);
    }
    return;
  }
  if (c.ensemble_scheduling) {
    r.error('ensemble-scheduling-not-ensemble', c, 'ensemble_scheduling', `ensemble scheduling cannot be set for model '${model.name}' whose platform is not ensemble. Set platform: "ensemble" or remove ensemble_scheduling.`);
  }
  if (!backend) {
    if (platform) {
      r.error('unknown-platform', c, 'platform', `unexpected platform type '${platform}' for ${model.name}. Known platforms: tensorrt_plan, onnxruntime_onnx, pytorch_libtorch, torch_aoti, tensorflow_graphdef, tensorflow_savedmodel, ensemble; other backends are named with backend: "...".`);
    } else {
      r.error('unknown-backend', c, undefined, `Invalid model name: Could not determine backend for model '${model.name}' with no backend in model configuration. Expected model name of the form 'model.<backend_name>'. Set backend (e.g. "python", "onnxruntime") or platform in config.pbtxt.`);
    }
    return;
  }
  if (PLATFORM_CHECKED_BACKENDS.has(backend) && backendOfPlatform(platform) !== backend) {
    r.error('platform-backend-mismatch', c, c.platform !== undefined ? 'platform' : 'backend', `unexpected 'platform' and 'backend' pair, got:${platform}, ${backend}.${platform === 'libtorch' ? ' Use platform "pytorch_libtorch".' : ` Remove platform or set the ${backend} platform (e.g. ${examplePlatform(backend)}).`}`);
  }
  const runtime = c.runtime;
  if (runtime && (isAbsolute(runtime) || normalize(runtime).split(/[\\/]/).includes('..'))) {
    r.error('runtime-escapes', c, 'runtime', `backend library name '${runtime}' escapes backend directory, for model '${model.name}', check model config runtime field. Give a library file name such as "libtriton_${backend}.so" or "model.py".`);
  }
}

function examplePlatform(backend: string): string {
  return { tensorflow: '"tensorflow_savedmodel" or "tensorflow_graphdef"', tensorrt: '"tensorrt_plan"', onnxruntime: '"onnxruntime_onnx"', pytorch: '"pytorch_libtorch"' }[backend] ?? '""';
}

// ---- §4 inputs and outputs ------------------------------------------------------------------------------------

function checkIo(model: LoadedModel, r: Reporter, isEnsemble: boolean) {
  const c = model.config;
  const inputs = c.input ?? [];
  const outputs = c.output ?? [];
  if (!isEnsemble) {
    for (const [list, what] of [[inputs, 'inputs'], [outputs, 'outputs']] as const) {
      if (list.length > 0) continue;
      const python = model.backend === 'python' && pythonSource(model)?.includes('auto_complete_config');
      if (autoCompletesIo(model.backend, model.platform) || python) {
        r.warning(`missing-${what}`, c, undefined, `Model '${model.name}' declares no ${what}; Triton fills them in from the ${python ? 'auto_complete_config function' : 'model file'} at load time. Declare them to make the interface explicit (and checkable before upload).`);
      } else if (model.backend === 'pytorch' || model.platform === 'tensorflow_graphdef') {
        r.error(`missing-${what}`, c, undefined, `Model '${model.name}' declares no ${what}, and the ${model.backend} backend cannot read them from the model file. Add ${what === 'inputs' ? 'input' : 'output'} [ { name: ... data_type: ... dims: [...] } ].`);
      } else if (model.backend) {
        r.warning(`missing-${what}`, c, undefined, `Model '${model.name}' declares no ${what}. Unless the ${model.backend} backend fills them in, add them to config.pbtxt.`);
      }
    }
  }
  const mbs = c.max_batch_size ?? 0;
  const seen = { input: new Map<string, number>(), output: new Map<string, number>() };
  inputs.forEach((io, i) => checkTensor(model, r, 'input', io, i, mbs, seen.input));
  outputs.forEach((io, i) => checkTensor(model, r, 'output', io, i, mbs, seen.output));
}

function checkTensor(
  model: LoadedModel,
  r: Reporter,
  kind: 'input' | 'output',
  io: ModelInputConfig | ModelOutputConfig,
  index: number,
  mbs: number,
  seen: Map<string, number>,
) {
  const c = model.config;
  const prefix = `model ${kind}`;
  const suffix = ` for ${model.name}`;
  const name = io.name ?? '';
  if (!name) {
    r.error(`${kind}-missing-name`, c, kind, `${prefix} must specify 'name'${suffix}.`, index);
    return;
  }
  const what = `${prefix} '${name}'`;
  if (seen.has(name)) {
    r.error(`duplicate-${kind}`, io, 'name', `${what} is declared twice (also ${kind} #${seen.get(name)! + 1})${suffix}. Triton keeps only the first; remove or rename one.`);
  } else {
    seen.set(name, index);
  }
  if (!io.data_type || io.data_type === 'TYPE_INVALID') {
    r.error(`${kind}-missing-data-type`, io, io.data_type ? 'data_type' : undefined, `${what} must specify 'data_type'${suffix}.`);
  } else if (io.data_type === 'TYPE_STRING' && model.platform === 'tensorrt_plan') {
    r.error('tensorrt-string', io, 'data_type', `${what} is TYPE_STRING, which TensorRT does not support${suffix}. Tokenize or decode strings in a python or DALI step before the TensorRT model.`);
  }
  const dims = io.dims ?? [];
  if (dims.length === 0) {
    r.error(`${kind}-missing-dims`, io, undefined, `${what} must specify 'dims'${suffix}. A scalar is written dims: [ 1 ] with reshape: { shape: [ ] }.`);
    return;
  }
  dims.forEach((d, i) => {
    if (d < 1n && d !== -1n) {
      r.error('invalid-dims', io, 'dims', `${what} dimension must be integer >= 1, or -1 to indicate a variable-size dimension${suffix} (found ${d}).${mbs > 0 ? ' The batch dimension is implicit when max_batch_size > 0: leave it out of dims.' : ''}`, i);
    }
  });
  const reshape = io.reshape;
  if (reshape) {
    const shape = reshape.shape ?? [];
    if (shape.length === 0 && mbs === 0) {
      r.error('empty-reshape', io, 'reshape', `${what} cannot have empty reshape for non-batching model as scalar tensors are not supported${suffix}.`);
    }
    shape.forEach((d, i) => {
      if (d < 1n && d !== -1n) {
        r.error('invalid-reshape', reshape, 'shape', `${what} reshape dimensions must be integer >= 1, or -1 to indicate a variable-size dimension${suffix}.`, i);
      }
    });
    const mismatch = reshapeMismatch(dims, shape);
    if (mismatch) r.error('reshape-mismatch', io, 'reshape', `${what} ${mismatch}${suffix}. dims [${dims.join(', ')}] and reshape [${shape.join(', ')}] must hold the same number of elements.`);
  }
  const count = dims.reduce((n, d) => (d > 0n ? n * d : n), 1n);
  if (count > 9223372036854775807n) {
    r.error('element-count-overflow', io, 'dims', `element count for tensor '${name} dims' exceeds maximum size of 9223372036854775807${suffix}.`);
  }
  if (kind === 'input') {
    const input = io as ModelInputConfig;
    if ((input.format === 'FORMAT_NHWC' || input.format === 'FORMAT_NCHW') && dims.length !== 3) {
      r.error('format-dims', io, 'format', `${prefix} NHWC/NCHW require 3 dims${suffix}: '${name}' has ${dims.length}.`);
    }
  }
  if (io.is_shape_tensor && model.platform !== 'tensorrt_plan') {
    r.error('shape-tensor-platform', io, 'is_shape_tensor', `shape tensors are only supported for TensorRT platform (${what}${suffix}).`);
  }
  if (io.is_non_linear_format_io) {
    if (model.platform !== 'tensorrt_plan') {
      r.error('non-linear-io-platform', io, 'is_non_linear_format_io', `Non-linear IO format is only supported for the TensorRT platform (${what}${suffix}).`);
    } else if (dims.length !== 3) {
      r.error('non-linear-io-dims', io, 'is_non_linear_format_io', `Non-linear IO format ${kind} requires 3 dims (${what}${suffix}).`);
    }
  }
}

/** Rules 4.7–4.9: equal element counts, and with -1 the same variable-size segments. */
function reshapeMismatch(dims: readonly bigint[], shape: readonly bigint[]): string | undefined {
  const product = (xs: readonly bigint[]) => xs.reduce((n, d) => n * d, 1n);
  if (shape.length === 0) return product(dims) === 1n ? undefined : 'has different size for dims and reshape';
  const dimsVariable = dims.includes(-1n);
  const shapeVariable = shape.includes(-1n);
  if (!dimsVariable && !shapeVariable) return product(dims) === product(shape) ? undefined : 'has different size for dims and reshape';
  if (dimsVariable !== shapeVariable) return 'has different size for dims and reshape';
  const segments = (xs: readonly bigint[]) => {
    const out: bigint[] = [1n];
    for (const d of xs) {
      if (d === -1n) out.push(1n);
      else out[out.length - 1] = out[out.length - 1]! * d;
    }
    return out;
  };
  const a = segments(dims);
  const b = segments(shape);
  if (a.length !== b.length) return 'has different number of variable-size dimensions for dims and reshape';
  return a.every((v, i) => v === b[i]) ? undefined : 'has different size for dims and reshape';
}

// ---- §5 batch_input / batch_output ----------------------------------------------------------------------------

function checkBatchIo(model: LoadedModel, r: Reporter) {
  const c = model.config;
  const inputNames = new Set((c.input ?? []).map((i) => i.name));
  const outputNames = new Set((c.output ?? []).map((o) => o.name));
  for (const bi of c.batch_input ?? []) {
    const kind = bi.kind ?? 'BATCH_ELEMENT_COUNT';
    const sources = bi.source_input ?? [];
    if (sources.length !== 1) {
      r.error('batch-input-sources', bi, 'source_input', `batch input kind '${kind}' expects 1 source input, got ${sources.length} (model '${model.name}').`);
    }
    if (bi.data_type !== 'TYPE_INT32' && bi.data_type !== 'TYPE_FP32') {
      r.error('batch-input-data-type', bi, 'data_type', `batch input data type must be TYPE_INT32 or TYPE_FP32 (model '${model.name}').`);
    }
    sources.forEach((s, i) => {
      if (!inputNames.has(s)) r.error('batch-input-unknown-source', bi, 'source_input', `unknown source input name '${s}' (model '${model.name}'): it must name one of the model's inputs.`, i);
    });
  }
  const targets = new Set<string>();
  for (const bo of c.batch_output ?? []) {
    const sources = bo.source_input ?? [];
    if (sources.length !== 1) {
      r.error('batch-output-sources', bo, 'source_input', `batch output kind '${bo.kind ?? 'BATCH_SCATTER_WITH_INPUT_SHAPE'}' expects 1 source input, got ${sources.length} (model '${model.name}').`);
    }
    (bo.target_name ?? []).forEach((t, i) => {
      if (!outputNames.has(t)) r.error('batch-output-unknown-target', bo, 'target_name', `unknown target output name '${t}' (model '${model.name}'): it must name one of the model's outputs.`, i);
      if (targets.has(t)) r.error('batch-output-duplicate-target', bo, 'target_name', `target output name '${t}' can only be specified once (model '${model.name}').`, i);
      targets.add(t);
    });
  }
}

// ---- §7 dynamic batching ---------------------------------------------------------------------------------------

function checkDynamicBatching(model: LoadedModel, r: Reporter) {
  const db = model.config.dynamic_batching;
  if (!db) return;
  const mbs = model.config.max_batch_size ?? 0;
  (db.preferred_batch_size ?? []).forEach((size, i) => {
    if (size <= 0) r.error('preferred-batch-size-not-positive', db, 'preferred_batch_size', `dynamic batching preferred size must be positive for ${model.name}.`, i);
    else if (size > mbs) r.error('preferred-batch-size-too-large', db, 'preferred_batch_size', `dynamic batching preferred size must be <= max batch size for ${model.name} (${size} > max_batch_size ${mbs}).`, i);
  });
  const levels = db.priority_levels ?? 0n;
  if (levels > 0n) {
    const level = db.default_priority_level ?? 0n;
    if (level < 1n || level > levels) {
      r.error('default-priority-level-range', db, db.default_priority_level !== undefined ? 'default_priority_level' : 'priority_levels', `default priority level must be in range [1, ${levels}] for ${model.name}.`);
    }
  }
  const policies = db.priority_queue_policy ?? {};
  for (const key of Object.keys(policies)) {
    const level = BigInt(key);
    if (level < 1n || level > levels) {
      r.error('priority-queue-policy-range', policies, key, `priority queue policy must have priority level in range [1, ${levels}] for ${model.name} (found ${key}).`);
    }
  }
  if (db.preserve_ordering) {
    if (levels > 1n) r.error('preserve-ordering-priorities', db, 'preserve_ordering', `Only one priority level is allowed when 'preserve_ordering' is true for ${model.name}.`);
    for (const policy of [db.default_queue_policy, ...Object.values(policies)]) {
      if (policy && policy.timeout_action === 'DELAY' && (policy.default_timeout_microseconds ?? 0n) !== 0n) {
        r.error('preserve-ordering-delay', policy, 'timeout_action', `Queue policy can not have DELAY as timeout action when 'preserve_ordering' is true for ${model.name}.`);
      }
    }
  }
}

// ---- §8 sequence batching ---------------------------------------------------------------------------------------

const BYTE_SIZES: Partial<Record<DataTypeName, number>> = {
  TYPE_BOOL: 1, TYPE_UINT8: 1, TYPE_INT8: 1, TYPE_UINT16: 2, TYPE_INT16: 2, TYPE_FP16: 2, TYPE_BF16: 2,
  TYPE_UINT32: 4, TYPE_INT32: 4, TYPE_FP32: 4, TYPE_UINT64: 8, TYPE_INT64: 8, TYPE_FP64: 8,
};

function checkSequenceBatching(model: LoadedModel, r: Reporter) {
  const c = model.config;
  const sb = c.sequence_batching;
  if (!sb) return;
  const name = model.name;
  if (c.response_cache?.enable) {
    r.error('sequence-response-cache', c, 'response_cache', `Response Cache does not currently support model ${name} with sequence batching scheduler. Please disable the response cache.`);
  }
  const tensors = new Set<string>();
  const kinds = new Set<string>();
  for (const ci of sb.control_input ?? []) {
    if (!ci.name) {
      r.error('sequence-control-name', ci, undefined, `sequence batching control tensor must have a name for ${name}.`);
    } else if (tensors.has(ci.name)) {
      r.error('sequence-control-duplicate', ci, 'name', `sequence batching control tensor '${ci.name}' is specified for multiple control kinds for ${name}.`);
    }
    if (ci.name) tensors.add(ci.name);
    for (const control of ci.control ?? []) {
      const kind = control.kind ?? 'CONTROL_SEQUENCE_START';
      if (kinds.has(kind)) r.error('sequence-control-kind-duplicate', control, 'kind', `sequence batching specifies multiple ${kind} tensors for ${name}.`);
      kinds.add(kind);
      const lists = (['int32_false_true', 'fp32_false_true', 'bool_false_true'] as const).filter((l) => (control[l]?.length ?? 0) > 0);
      if (kind === 'CONTROL_SEQUENCE_CORRID') {
        if (lists.length > 0) r.error('sequence-corrid-list', control, lists[0], `sequence batching must not specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for CONTROL_SEQUENCE_CORRID for ${name}.`);
        const dt = control.data_type;
        if (!dt || !['TYPE_UINT64', 'TYPE_INT64', 'TYPE_UINT32', 'TYPE_INT32', 'TYPE_STRING'].includes(dt)) {
          r.error('sequence-corrid-data-type', control, dt ? 'data_type' : 'kind', `unexpected data type for control CONTROL_SEQUENCE_CORRID for ${name}. Allowed data types are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING`);
        }
        continue;
      }
      if (lists.length === 0) {
        r.error('sequence-control-list-missing', control, 'kind', `sequence batching must specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true' for ${kind} for ${name}.`);
      } else if (lists.length > 1) {
        r.error('sequence-control-list-multiple', control, lists[1], `sequence batching specifies more than one from 'int32_false_true', 'fp32_false_true' and 'bool_false_true' for ${kind} for ${name}.`);
      } else if (control[lists[0]!]!.length !== 2) {
        r.error('sequence-control-list-length', control, lists[0], `sequence batching control '${lists[0]}' must have exactly 2 entries for ${kind} for ${name}.`);
      }
    }
  }
  const mbs = c.max_batch_size ?? 0;
  (sb.oldest?.preferred_batch_size ?? []).forEach((size, i) => {
    if (size <= 0) r.error('sequence-preferred-batch-size', sb.oldest!, 'preferred_batch_size', `sequence batching preferred batch size must be positive for ${name}.`, i);
    else if (size > mbs) r.error('sequence-preferred-batch-size', sb.oldest!, 'preferred_batch_size', `sequence batching preferred batch size must be <= max batch size for ${name}.`, i);
  });
  const util = sb.direct?.minimum_slot_utilization;
  if (util !== undefined && (util < 0 || util > 1 || Number.isNaN(util))) {
    r.error('sequence-slot-utilization', sb.direct!, 'minimum_slot_utilization', `sequence batching minimum slot utilization must be in range (0.0, 1.0] for ${name}.`);
  }
  const stateInputs = new Map<string, number>();
  const stateOutputs = new Set<string>();
  (sb.state ?? []).forEach((state) => {
    const input = state.input_name ?? '';
    const initial = state.initial_state ?? [];
    if (stateInputs.has(input)) {
      if (initial.length > 0) r.error('state-duplicate-input', state, 'input_name', `State input name '${input}' specified more than once.`);
      else r.warning('state-duplicate-input', state, 'input_name', `Detected duplicate 'input_name' in the state configuration: '${input}'.`);
    }
    stateInputs.set(input, 1);
    if (state.output_name && stateOutputs.has(state.output_name)) {
      r.warning('state-duplicate-output', state, 'output_name', `Detected duplicate 'output_name' in the state configuration: '${state.output_name}'.`);
    }
    if (state.output_name) stateOutputs.add(state.output_name);
    if (initial.length > 1) r.error('initial-state-count', state, 'initial_state', `initial_state field for state input '${input}' must contain exactly one or zero element. Found '${initial.length}' elements.`);
    const init = initial[0];
    if (init) {
      if (init.data_type !== state.data_type) r.error('initial-state-data-type', init, 'data_type', `The data type used for 'initial_state' field of state '${input}' does not match the state data type.`);
      if (!init.name) r.error('initial-state-name', init, undefined, `Field 'name' must be set when using initial_state for state input '${input}'.`);
      const idims = init.dims ?? [];
      const sdims = state.dims ?? [];
      if (idims.length !== sdims.length) {
        r.error('initial-state-dims', init, 'dims', `Number of dimensions in 'initial_state' doesn't match the size of 'state' dimensions for state input '${input}'. ${idims.length} != ${sdims.length}`);
      } else if (idims.includes(-1n)) {
        r.error('initial-state-variable-dims', init, 'dims', `'initial_state' field for state input name '${input}' contains variable dimensions.`);
      } else {
        idims.forEach((d, i) => {
          if (sdims[i] !== -1n && sdims[i] !== d) r.error('initial-state-dim-mismatch', init, 'dims', `'initial_state' dim for input name '${input}' doesn't match 'state' dim description. ${d} != ${sdims[i]}`, i);
        });
      }
      if (init.zero_data === undefined && init.data_file === undefined) {
        r.error('initial-state-data', init, undefined, `initial_state setting expects state'${input}' to have state_data set`);
      } else if (init.data_file !== undefined) {
        const file = relPath(model.relDir, 'initial_state', init.data_file);
        const path = join(model.dir, 'initial_state', init.data_file);
        const needed = byteSize(init.data_type, idims);
        const size = fileSize(path);
        if (size === undefined) r.error('initial-state-file-missing', init, 'data_file', `failed to open text file for read ${file}: No such file or directory. Put the file in ${relPath(model.relDir, 'initial_state')}/.`);
        else if (needed !== undefined && size < needed) r.error('initial-state-file-short', init, 'data_file', `initial_state setting expects ${needed} bytes, but the data provided from ${init.data_file}only has ${size} bytes.`);
      }
    }
    if (state.use_growable_memory) {
      if (!state.use_same_buffer_for_input_output) r.error('state-growable-memory', state, 'use_growable_memory', `In order to 'use_growable_memory', you must also enable 'use_single_buffer' for state input name '${input}'.`);
      const gpuOnly = (c.instance_group ?? []).length > 0 && (c.instance_group ?? []).every((g) => g.kind === 'KIND_GPU');
      if (!gpuOnly) r.warning('state-growable-memory-gpu', state, 'use_growable_memory', `'use_growable_memory' can only work with KIND_GPU model instances right now; set kind: KIND_GPU on the instance groups of ${name}.`);
    }
  });
  if (c.parameters?.TRITON_BATCH_STRATEGY_PATH) {
    r.warning('batch-strategy-with-sequence', c.parameters, 'TRITON_BATCH_STRATEGY_PATH', `TRITON_BATCH_STRATEGY_PATH cannot be specified with sequence batcher, using default batching strategy. Remove the parameter.`);
  }
}

function byteSize(dataType: DataTypeName | undefined, dims: readonly bigint[]): number | undefined {
  const size = dataType ? BYTE_SIZES[dataType] : undefined;
  if (size === undefined || dims.some((d) => d < 0n)) return undefined;
  return Number(dims.reduce((n, d) => n * d, 1n)) * size;
}

function fileSize(path: string): number | undefined {
  try {
    const s = statSync(path);
    return s.isFile() ? s.size : undefined;
  } catch {
    return undefined;
  }
}

// ---- §9 instance groups -----------------------------------------------------------------------------------------

function checkInstanceGroups(model: LoadedModel, r: Reporter, isEnsemble: boolean) {
  const c = model.config;
  const groups = c.instance_group ?? [];
  if (isEnsemble) return; // 10.1 is an ensemble rule
  const resources = new Map<string, 'global' | 'device'>();
  groups.forEach((g, i) => {
    const label = g.name || `${model.name}_${i}`;
    const gpus = g.gpus ?? [];
    if (g.kind === 'KIND_MODEL' && gpus.length > 0) r.error('instance-group-model-gpus', g, 'gpus', `instance group ${label} of model ${model.name} has kind KIND_MODEL but specifies one or more GPUs.`);
    if (g.kind === 'KIND_CPU' && gpus.length > 0) r.error('instance-group-cpu-gpus', g, 'gpus', `instance group ${label} of model ${model.name} has kind KIND_CPU but specifies one or more GPUs.`);
    gpus.forEach((id, j) => {
      if (id < 0) r.error('instance-group-gpu-id', g, 'gpus', `instance group ${label} of model ${model.name} specifies invalid or unsupported gpu id ${id}. GPU ids start at 0.`, j);
      else if (id > 0) r.warning('instance-group-gpu-id', g, 'gpus', `instance group ${label} of model ${model.name} specifies gpu id ${id}; SageMaker GPU multi-model endpoints run on single-GPU instances (GPU 0 only), where Triton reports "specifies invalid or unsupported gpu id ${id}".`, j);
    });
    const profiles = g.profile ?? [];
    if (profiles.length > 0 && model.platform !== 'tensorrt_plan') {
      r.error('instance-group-profile-platform', g, 'profile', `instance group ${label} of model ${model.name} and platform ${model.platform ?? ''}specifies profile field which is only supported for TensorRT models.`);
    }
    profiles.forEach((p, j) => {
      if (p === '') r.error('instance-group-profile', g, 'profile', `profile name must not be empty (instance group ${label} of model ${model.name}).`, j);
      else if (!/^\d+$/.test(p)) r.error('instance-group-profile', g, 'profile', `instance group ${label} of model ${model.name} specifies invalid profile ${p}. The field should contain the string representation of a non-negative integer.`, j);
    });
    for (const res of g.rate_limiter?.resources ?? []) {
      const scope = res.global ? 'global' : 'device';
      const name = res.name ?? '';
      const prior = resources.get(name);
      if (prior && prior !== scope) {
        r.error('rate-limiter-resource-scope', res, 'global', `Resource "${name}" is present as both global and device-specific resource in the model configuration.`);
      }
      resources.set(name, scope);
    }
  });
}

// ---- §11 labels, §12 warmup ---------------------------------------------------------------------------------------

function checkLabels(model: LoadedModel, r: Reporter) {
  for (const out of model.config.output ?? []) {
    const label = out.label_filename;
    if (!label) continue;
    const path = join(model.dir, label);
    if (!isInside(model.dir, path)) {
      r.error('label-file-outside', out, 'label_filename', `label file path '${label}' for output '${out.name}' in model '${model.name}' is outside model directory. Put the labels file in ${relPath(model.relDir) || 'the model directory'}/.`);
    } else if (fileSize(path) === undefined) {
      r.error('label-file-missing', out, 'label_filename', `failed to open text file for read ${relPath(model.relDir, label)}: No such file or directory. label_filename is relative to the model directory (not the version directory).`);
    }
  }
}

const WARMUP_DATA_SIZE: Partial<Record<DataTypeName, number>> = BYTE_SIZES;

function checkWarmup(model: LoadedModel, r: Reporter) {
  const c = model.config;
  if (model.platform === 'ensemble') return; // 10.3
  for (const warmup of c.model_warmup ?? []) {
    const inputs = warmup.inputs ?? {};
    for (const [name, input] of Object.entries(inputs)) {
      if ((input.dims ?? []).includes(-1n)) {
        r.error('warmup-variable-dims', input, 'dims', `warmup setting expects all variable-size dimensions are specified for input '${name}'.`);
      }
      if (input.zero_data === undefined && input.random_data === undefined && input.input_data_file === undefined) {
        r.error('warmup-no-data', inputs, name, `warmup setting expects input '${name}' to have input_data_type set. Add zero_data: true, random_data: true or input_data_file.`);
      }
      if (input.input_data_file !== undefined) {
        const path = join(model.dir, 'warmup', input.input_data_file);
        const size = fileSize(path);
        const file = relPath(model.relDir, 'warmup', input.input_data_file);
        if (!isInside(join(model.dir, 'warmup'), path) || size === undefined) {
          r.error('warmup-file-missing', input, 'input_data_file', `failed to open text file for read ${file}: No such file or directory. Warmup data files live in ${relPath(model.relDir, 'warmup')}/.`);
        } else if (input.data_type !== 'TYPE_STRING') {
          const per = input.data_type ? WARMUP_DATA_SIZE[input.data_type] : undefined;
          const dims = input.dims ?? [];
          if (per !== undefined && !dims.includes(-1n)) {
            const needed = Number(dims.reduce((n, d) => n * d, 1n)) * per;
            if (size < needed) r.error('warmup-file-short', input, 'input_data_file', `warmup setting expects ${needed} bytes, but the data provided from ${input.input_data_file}only has ${size} bytes.`);
          }
        }
      }
    }
  }
}

// ---- §13 parameters, §16 python ----------------------------------------------------------------------------------

const MODEL_DIR_VAR = '$$TRITON_MODEL_DIRECTORY';

/** EXECUTION_ENV_PATH with `$$TRITON_MODEL_DIRECTORY` replaced, or undefined when it does not use the variable. */
export function resolveExecutionEnvPath(model: LoadedModel): { value: string; path?: string } | undefined {
  const value = model.config.parameters?.EXECUTION_ENV_PATH?.string_value;
  if (value === undefined) return undefined;
  if (!value.includes(MODEL_DIR_VAR)) return { value };
  return { value, path: normalize(value.split(MODEL_DIR_VAR).join(model.dir)) };
}

function checkParameters(model: LoadedModel, r: Reporter) {
  const params = model.config.parameters ?? {};
  const env = resolveExecutionEnvPath(model);
  if (env?.path !== undefined) {
    if (!isInside(model.dir, env.path)) {
      r.error('execution-env-outside', params, 'EXECUTION_ENV_PATH', `EXECUTION_ENV_PATH '${env.value}' points outside the model directory. Keep the conda-pack archive inside ${relPath(model.relDir) || 'the model directory'}/ and write "$$TRITON_MODEL_DIRECTORY/<env>.tar.gz".`);
    } else if (!existsSync(env.path)) {
      r.error('execution-env-missing', params, 'EXECUTION_ENV_PATH', `EXECUTION_ENV_PATH '${env.value}' does not exist (${relPath(model.relDir, relative(model.dir, env.path).split(sep).join('/'))}): the python backend fails with "Failed to get the canonical path for ...". Add the conda-pack archive or remove the parameter.`);
    }
  }
  const force = params.FORCE_CPU_ONLY_INPUT_TENSORS?.string_value;
  if (force !== undefined && force !== 'yes' && force !== 'no') {
    r.error('force-cpu-only-value', params, 'FORCE_CPU_ONLY_INPUT_TENSORS', `Incorrect value for FORCE_CPU_ONLY_INPUT_TENSORS: ${force}'. Use "yes" or "no".`);
  }
  const strategy = params.TRITON_BATCH_STRATEGY_PATH?.string_value;
  if (strategy !== undefined && strategy !== '') {
    const path = isAbsolute(strategy) ? strategy : join(model.dir, strategy);
    if (!isInside(model.dir, path)) {
      r.error('batch-strategy-escapes', params, 'TRITON_BATCH_STRATEGY_PATH', `Batching library path escapes model repository. Keep '${strategy}' inside the model directory.`);
    } else if (!existsSync(path)) {
      r.error('batch-strategy-missing', params, 'TRITON_BATCH_STRATEGY_PATH', `Batching library path not found: ${relPath(model.relDir, strategy)}.`);
    }
  }
}

function checkMetrics(model: LoadedModel, r: Reporter) {
  for (const control of model.config.model_metrics?.metric_control ?? []) {
    if (!control.metric_identifier) r.error('metric-identifier-missing', control, undefined, `metric control must specify 'metric_identifier' (model '${model.name}').`);
    else if (!control.metric_identifier.family) r.error('metric-family-missing', control, 'metric_identifier', `metric identifier must specify non-empty 'family' (model '${model.name}').`);
    else if (!['nv_inference_request_duration', 'nv_inference_queue_duration', 'nv_inference_compute_input_duration', 'nv_inference_compute_infer_duration', 'nv_inference_compute_output_duration', 'nv_model_load_duration', 'nv_inference_first_response_histogram_ms'].includes(control.metric_identifier.family)) {
      r.warning('metric-family-not-customizable', control.metric_identifier, 'family', `Metric family '${control.metric_identifier.family}' in 'metric_identifier' is not a customizable metric in Triton core.`);
    }
    if (!control.histogram_options) r.error('metric-histogram-missing', control, undefined, `metric control must specify 'histogram_options' (model '${model.name}').`);
    else if ((control.histogram_options.buckets ?? []).length === 0) r.error('metric-buckets-missing', control, 'histogram_options', `histogram options must specify non-empty 'buckets' (model '${model.name}').`);
  }
}

// ---- model files (§1.B, §16) ---------------------------------------------------------------------------------------

function checkModelFiles(model: LoadedModel, r: Reporter) {
  const rule = modelFileRule(model);
  const filename = model.defaultModelFilename;
  if (!rule || !filename) return;
  if (model.firstSubdir?.startsWith('.') && !model.config.backend && !model.config.platform) {
    r.file('warning', 'hidden-first-subdir', relPath(model.relDir, model.firstSubdir), `Triton infers the backend of '${model.name}' from its lexicographically first subdirectory, which is '${model.firstSubdir}'. Delete it, or set backend/platform in config.pbtxt.`);
  }
  if (model.backend === 'python' && !filename.endsWith('.py')) {
    r.error('python-model-extension', model.config, 'default_model_filename', `Model name must end with '.py'. Model name is "${filename}".`);
    return;
  }
  const versionNames = new Map(model.versionDirs.map((v) => [v.version, v.dirName]));
  for (const version of model.versions) {
    const dirName = versionNames.get(version)!;
    const file = relPath(model.relDir, dirName, filename);
    const path = join(model.dir, dirName, filename);
    let stats;
    try {
      stats = statSync(path);
    } catch {
      stats = undefined;
    }
    if (!stats) {
      const message = model.backend === 'python'
        ? `Python model file not found in '${file}'. Put model.py in ${relPath(model.relDir, dirName)}/ (or set default_model_filename).`
        : `${file} is missing: the ${model.backend} backend loads ${filename} from each version directory. Add the model file, or set default_model_filename to the file's name.`;
      r.file('error', 'model-file-missing', file, message);
      continue;
    }
    if (rule.kind === 'file' && !stats.isFile()) r.file('error', 'model-file-not-a-file', file, `${file} must be a file for the ${model.backend} backend${model.platform ? ` (${model.platform})` : ''}, but it is ${stats.isDirectory() ? 'a directory' : stats.isFIFO() ? 'a FIFO (named pipe)' : 'not a regular file'}.`);
    if (rule.kind === 'directory' && !stats.isDirectory()) r.file('error', 'model-file-not-a-directory', file, `${file} must be a SavedModel directory for platform tensorflow_savedmodel, but it is a file. Use platform "tensorflow_graphdef" for a frozen graph.`);
    if (model.backend === 'openvino' && filename.endsWith('.xml') && !existsSync(join(model.dir, dirName, filename.replace(/\.xml$/, '.bin')))) {
      r.file('error', 'openvino-bin-missing', file, `${file} needs its weights file ${filename.replace(/\.xml$/, '.bin')} beside it.`);
    }
    if (model.backend === 'python' && stats.isFile()) checkPythonModel(r, path, file);
  }
  const cc = model.config.cc_model_filenames ?? {};
  for (const [capability, name] of Object.entries(cc)) {
    for (const version of model.versions) {
      const dirName = versionNames.get(version)!;
      if (!existsSync(join(model.dir, dirName, name))) {
        r.warning('cc-model-file-missing', cc, capability, `cc_model_filenames maps compute capability ${capability} to '${name}', which is missing from ${relPath(model.relDir, dirName)}/. GPUs with that capability would fail to load the model.`);
      }
    }
  }
}

function checkPythonModel(r: Reporter, path: string, file: string) {
  let source: string;
  try {
    source = readFileSync(path, 'utf8');
  } catch {
    return;
  }
  if (!/^class\s+TritonPythonModel\b/m.test(source)) {
    r.file('error', 'python-model-class', file, `${file} does not define class TritonPythonModel at module level; the python backend fails the load with an AttributeError. Define class TritonPythonModel with an execute(self, requests) method.`);
  } else if (!/^\s+(async\s+)?def\s+execute\s*\(/m.test(source)) {
    r.file('error', 'python-model-execute', file, `Python model ${file} does not implement \`execute\` method. Add def execute(self, requests) returning one InferenceResponse per request.`);
  }
}

/** The source of the python model in its first selected version, for auto_complete_config detection. */
function pythonSource(model: LoadedModel): string | undefined {
  const version = model.versions[model.versions.length - 1];
  const dirName = model.versionDirs.find((v) => v.version === version)?.dirName;
  if (dirName === undefined) return undefined;
  const path = join(model.dir, dirName, model.defaultModelFilename ?? 'model.py');
  try {
    // Only a regular file: reading a FIFO would wait forever for a writer.
    return statSync(path).isFile() ? readFileSync(path, 'utf8') : undefined;
  } catch {
    return undefined;
  }
}

export function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, normalize(path));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}
