// §4 inputs and outputs: names, data types, dims and reshape of each tensor, and what each platform supports.

import type { ModelInputConfig, ModelOutputConfig } from '../../config/model-config-schema';
import { autoCompletesIo } from '../backend-inference';
import type { LoadedModel } from '../model';
import { pythonAutoCompletes } from './python';
import type { Reporter } from './reporter';

export function checkIo(model: LoadedModel, r: Reporter, isEnsemble: boolean) {
  const c = model.config;
  const inputs = c.input ?? [];
  const outputs = c.output ?? [];
  if (!isEnsemble) {
    for (const [list, what] of [[inputs, 'inputs'], [outputs, 'outputs']] as const) {
      if (list.length > 0) continue;
      const python = pythonAutoCompletes(model);
      if (autoCompletesIo(model.backend, model.platform) || python) {
        r.warning(`missing-${what}`, c, undefined, `Model '${model.name}' declares no ${what}; Triton fills them ` +
          `in from the ${python ? 'auto_complete_config function' : 'model file'} at load time. Declare them to ` +
          'make the interface explicit (and checkable before upload).');
      } else if (model.backend === 'pytorch' || model.platform === 'tensorflow_graphdef') {
        r.error(`missing-${what}`, c, undefined, `Model '${model.name}' declares no ${what}, and the ` +
          `${model.backend} backend cannot read them from the model file. Add ` +
          `${what === 'inputs' ? 'input' : 'output'} [ { name: ... data_type: ... dims: [...] } ].`);
      } else if (model.backend) {
        r.warning(`missing-${what}`, c, undefined, `Model '${model.name}' declares no ${what}. Unless the ` +
          `${model.backend} backend fills them in, add them to config.pbtxt.`);
      }
    }
  }
  const mbs = c.max_batch_size ?? 0;
  const seen = { input: new Map<string, number>(), output: new Map<string, number>() };
  inputs.forEach((io, i) => checkTensor(model, r, 'input', io, i, mbs, seen.input));
  outputs.forEach((io, i) => checkTensor(model, r, 'output', io, i, mbs, seen.output));
}

export function checkTensor(
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
    r.error(`duplicate-${kind}`, io, 'name', `${what} is declared twice (also ${kind} ` +
      `#${seen.get(name)! + 1})${suffix}. Triton keeps only the first; remove or rename one.`);
  } else {
    seen.set(name, index);
  }
  if (!io.data_type || io.data_type === 'TYPE_INVALID') {
    r.error(`${kind}-missing-data-type`, io, io.data_type ? 'data_type' : undefined, `${what} must specify 'data_type'${suffix}.`);
  } else if (io.data_type === 'TYPE_STRING' && model.platform === 'tensorrt_plan') {
    r.error('tensorrt-string', io, 'data_type', `${what} is TYPE_STRING, which TensorRT does not support${suffix}. ` +
      'Tokenize or decode strings in a python or DALI step before the TensorRT model.');
  }
  const dims = io.dims ?? [];
  if (dims.length === 0) {
    r.error(`${kind}-missing-dims`, io, undefined, `${what} must specify 'dims'${suffix}. A scalar is written ` +
      'dims: [ 1 ] with reshape: { shape: [ ] }.');
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
