// §4 inputs and outputs: names, data types, dims and reshape of each tensor, and what each platform supports.

import type { ModelInputConfig, ModelOutputConfig } from '../../config/model-config-schema';
import { ioCompletion, type IoCompletion } from '../io-completion';
import { tritonName, type LoadedModel } from '../model';
import type { Reporter } from './reporter';

export interface IoRuleOptions {
  /** What an offline auto-complete (the ONNX file read, auto_complete_config run) made of the config. */
  readonly completed?: {
    readonly input?: readonly (ModelInputConfig | ModelOutputConfig)[];
    readonly output?: readonly (ModelInputConfig | ModelOutputConfig)[];
  };
}

export function checkIo(model: LoadedModel, r: Reporter, isEnsemble: boolean, options: IoRuleOptions = {}) {
  const c = model.config;
  const inputs = c.input ?? [];
  const outputs = c.output ?? [];
  const completion = isEnsemble ? 'none' : ioCompletion(model);
  if (!isEnsemble) {
    for (const [list, what] of [[inputs, 'inputs'], [outputs, 'outputs']] as const) {
      if (list.length > 0) continue;
      if ((what === 'inputs' ? options.completed?.input : options.completed?.output)?.length) continue; // read from the model
      missingList(model, r, what, completion);
    }
  }
  const mbs = c.max_batch_size ?? 0;
  const seen = { input: new Map<string, number>(), output: new Map<string, number>() };
  // A tensor the offline auto-complete filled in (data_type and dims) is complete: its gaps are not reported.
  const filled = (list: readonly (ModelInputConfig | ModelOutputConfig)[] | undefined) =>
    new Set(
      (list ?? [])
        .filter((t) => t.data_type && t.data_type !== 'TYPE_INVALID' && (t.dims?.length ?? 0) > 0)
        .map((t) => t.name ?? ''),
    );
  const filledInputs = filled(options.completed?.input);
  const filledOutputs = filled(options.completed?.output);
  inputs.forEach((io, i) =>
    checkTensor(model, r, 'input', io, i, mbs, seen.input, filledInputs.has(io.name ?? '') ? 'filled' : completion),
  );
  outputs.forEach((io, i) =>
    checkTensor(model, r, 'output', io, i, mbs, seen.output, filledOutputs.has(io.name ?? '') ? 'filled' : completion),
  );
}

function missingList(model: LoadedModel, r: Reporter, what: 'inputs' | 'outputs', completion: IoCompletion) {
  const c = model.config;
  const backend = model.backend ?? '';
  switch (completion) {
    case 'when-empty':
    case 'fills-listed':
    case 'fills-entries': {
      const by = backend === 'python' ? 'auto_complete_config function' : backend === 'vllm' ? 'vLLM backend' : 'model file';
      r.warning(`missing-${what}`, c, undefined, `Model '${model.name}' declares no ${what}; Triton fills them ` +
        `in from the ${by} at load time. Declare them to make the interface explicit (and checkable before upload).`);
      return;
    }
    case 'unknown':
      r.warning(`missing-${what}`, c, undefined, `Model '${model.name}' declares no ${what}. Unless the ` +
        `${backend} backend fills them in at load (auto-complete), add them to config.pbtxt.`);
      return;
    case 'none':
      if (backend === 'pytorch') {
        // pytorch_backend src/pt/model_instance_state.cc:1366 (inputs) and :1379 (outputs): TorchScript keeps no
        // tensor names or types, so the backend cannot fill the config in.
        const triton = what === 'inputs'
          ? `unable to load model '${model.name}', configuration expects 0 inputs, model provides <the forward() arguments>`
          : 'model configuration must contain at least one output, none were specified';
        r.error(`missing-${what}`, c, undefined, `Model '${model.name}' declares no ${what}, and the pytorch ` +
          `backend cannot read them from a TorchScript file: Triton fails with "${triton}". Add ` +
          `${what === 'inputs' ? 'input' : 'output'} [ { name: ... data_type: ... dims: [...] } ].`);
      } else if (model.platform === 'tensorflow_graphdef') {
        r.error(`missing-${what}`, c, undefined, `Model '${model.name}' declares no ${what}, and the tensorflow ` +
          `backend cannot read them from a GraphDef. Add ${what === 'inputs' ? 'input' : 'output'} [ { name: ... ` +
          'data_type: ... dims: [...] } ].');
      }
      // A python model without auto_complete_config may have no inputs (a generator) or no outputs: it loads.
      return;
  }
}

export function checkTensor(
  model: LoadedModel,
  r: Reporter,
  kind: 'input' | 'output',
  io: ModelInputConfig | ModelOutputConfig,
  index: number,
  mbs: number,
  seen: Map<string, number>,
  completion: IoCompletion | 'filled' = 'none',
) {
  const c = model.config;
  // Where the backend completes listed tensors, a missing data_type or dims is its to fill (10.1): a warning.
  const fills = completion === 'fills-listed' || completion === 'fills-entries' || completion === 'unknown';
  const incomplete = (code: string, at: object, field: string | undefined, triton: string) =>
    completion === 'filled'
      ? undefined
      : fills
      ? r.warning(code, at, field, `${triton}, unless the ${model.backend} backend fills it in at load: ` +
          (completion === 'fills-listed' || completion === 'fills-entries'
            ? 'it does (auto-complete), so this is checked at load, not here.'
            : 'this tool does not know whether it does; declare it to be sure.'))
      : r.error(code, at, field, `${triton}.`);
  const prefix = `model ${kind}`;
  const suffix = ` for ${tritonName(model)}`;
  const name = io.name ?? '';
  if (!name) {
    r.error(`${kind}-missing-name`, c, kind, `${prefix} must specify 'name'${suffix}.`, index);
    return;
  }
  const what = `${prefix} '${name}'`;
  if (seen.has(name)) {
    // Core does not reject a repeated name: Model::Init keeps the first in its input/output maps
    // (src/model.cc:105, :114, std::map::insert), while an ensemble's output shapes are assigned, last one winning
    // (src/ensemble_scheduler/ensemble_scheduler.cc:1720-1722). Upstream TensorRT-LLM's ensemble ships one.
    const first = (kind === 'input' ? c.input : c.output)![seen.get(name)!]!;
    const same = JSON.stringify(first, bigintText) === JSON.stringify(io, bigintText);
    r.warning(`duplicate-${kind}`, io, 'name', `${what} is declared twice (also ${kind} #${seen.get(name)! + 1})` +
      `${suffix}. Triton loads it and keeps the first declaration` +
      (same
        ? ' (the two are identical)'
        : ', but the two differ: clients see the first, and ' +
          (kind === 'output' && model.platform === 'ensemble'
            ? "the ensemble scheduler takes the last one's shape"
            : 'the second is ignored')) +
      '. Remove the repeated one.');
  } else {
    seen.set(name, index);
  }
  if (!io.data_type || io.data_type === 'TYPE_INVALID') {
    incomplete(`${kind}-missing-data-type`, io, io.data_type ? 'data_type' : undefined, `${what} must specify 'data_type'${suffix}`);
  } else if (io.data_type === 'TYPE_STRING' && model.platform === 'tensorrt_plan') {
    r.error('tensorrt-string', io, 'data_type', `${what} is TYPE_STRING, which TensorRT does not support${suffix}. ` +
      'Tokenize or decode strings in a python or DALI step before the TensorRT model.');
  }
  const dims = io.dims ?? [];
  if (dims.length === 0) {
    if (fills || completion === 'filled') incomplete(`${kind}-missing-dims`, io, undefined, `${what} must specify 'dims'${suffix}`);
    else {
      r.error(`${kind}-missing-dims`, io, undefined, `${what} must specify 'dims'${suffix}. A scalar is written ` +
        'dims: [ 1 ] with reshape: { shape: [ ] }.');
    }
    return;
  }
  dims.forEach((d, i) => {
    if (d < 1n && d !== -1n) {
      const batchHint = mbs > 0 ? ' The batch dimension is implicit when max_batch_size > 0: leave it out of dims.' : '';
      r.error('invalid-dims', io, 'dims', `${what} dimension must be integer >= 1, or -1 to indicate a ` +
        `variable-size dimension${suffix} (found ${d}).${batchHint}`, i);
    }
  });
  const reshape = io.reshape;
  if (reshape) {
    const shape = reshape.shape ?? [];
    if (shape.length === 0 && mbs === 0) {
      r.error('empty-reshape', io, 'reshape', `${what} cannot have empty reshape for non-batching model as scalar ` +
        `tensors are not supported${suffix}.`);
    }
    shape.forEach((d, i) => {
      if (d < 1n && d !== -1n) {
        r.error('invalid-reshape', reshape, 'shape', `${what} reshape dimensions must be integer >= 1, or -1 to ` +
          `indicate a variable-size dimension${suffix}.`, i);
      }
    });
    const mismatch = reshapeMismatch(dims, shape);
    if (mismatch) {
      r.error('reshape-mismatch', io, 'reshape', `${what} ${mismatch}${suffix}. dims [${dims.join(', ')}] and ` +
        `reshape [${shape.join(', ')}] must hold the same number of elements.`);
    }
  }
  const count = dims.reduce((n, d) => (d > 0n ? n * d : n), 1n);
  if (count > 9223372036854775807n) {
    r.error('element-count-overflow', io, 'dims', `element count for tensor '${name} dims' exceeds maximum size of ` +
      `9223372036854775807${suffix}.`);
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
      r.error('non-linear-io-platform', io, 'is_non_linear_format_io', 'Non-linear IO format is only supported for ' +
        `the TensorRT platform (${what}${suffix}).`);
    } else if (dims.length !== 3) {
      r.error('non-linear-io-dims', io, 'is_non_linear_format_io', `Non-linear IO format ${kind} requires 3 dims (${what}${suffix}).`);
    }
  }
}

function bigintText(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
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
