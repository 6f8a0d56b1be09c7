// The requests `smoke` sends a model: built from its config.pbtxt alone, so that any archive can be checked after a
// deploy without the user writing a payload. Triton's own `model_warmup` samples come first, read as Triton reads
// them; otherwise each input gets values made for its data type and dims.

import type { ModelConfig, ModelWarmupConfig } from '../config/model-config-schema';
import { dataTypeOfConfig } from '../config/data-types';
import { MmeError } from '../errors';
import { decodeTensorData, KServeDatatype, Tensor, TensorElement } from '../kserve/kserve-codec';
import { kserveDatatypeOf } from '../kserve/invoke-request';

/** The files of the served model's directory that smoke may read: `warmup/<file>` and `<input>.sample`. */
export type ModelFiles = ReadonlyMap<string, Buffer>;

export interface SmokeRequest {
  /** `warmup 'name'` or `generated`: where the values came from, for the report. */
  readonly source: string;
  readonly inputs: readonly Tensor[];
}

export interface SmokeInputOptions {
  /** Full shapes (batch dim first when the model batches) for inputs with variable dims, by input name. */
  readonly shapes?: ReadonlyMap<string, readonly number[]>;
  /** Random bytes for `random_data`; Triton fills them with rand(). @default Math.random */
  readonly random?: () => number;
}

/** The suffix of a file beside config.pbtxt whose bytes are one BYTES element for the input of that name. */
export const SAMPLE_SUFFIX = '.sample';

/**
 * The requests for one model: one per `model_warmup` sample (samples of batch_size 0 are skipped, as Triton skips
 * them), else one made from the config. Throws INVALID when the config cannot be turned into a request.
 */
export function smokeRequests(config: ModelConfig, files: ModelFiles, options: SmokeInputOptions = {}): SmokeRequest[] {
  const warmups = (config.model_warmup ?? []).filter((w) => Number(w.batch_size ?? 0) > 0);
  if (warmups.length > 0) return warmups.map((warmup) => warmupRequest(config, warmup, files, options));
  return [{ source: 'generated', inputs: generatedInputs(config, files, options) }];
}

// triton-inference-server/core src/backend_model_instance.cc @ 73aad7c, TritonModelInstance::GenerateWarmupData:
//   :361-365  a sample with batch_size 0 is skipped;
//   :390-400  random_data of TYPE_STRING is sent as zeros ("4 bytes * element count"), i.e. empty strings;
//   :420-428  random_data is a buffer of rand() bytes, read as the input's type;
//   :462-486  input_data_file is read from <model dir>/warmup/<file>; TYPE_STRING takes the whole file (serialized
//             4-byte-length strings), other types take the first byte size of the input and refuse a shorter file;
//   :502-509  the shape is [1] + dims when the model batches (max_batch_size != 0), else dims; Triton sends
//             batch_size requests of batch 1, smoke sends one.
function warmupRequest(config: ModelConfig, warmup: ModelWarmupConfig, files: ModelFiles, options: SmokeInputOptions): SmokeRequest {
  const batching = Number(config.max_batch_size ?? 0) > 0;
  const name = warmup.name ?? '';
  const inputs: Tensor[] = [];
  for (const [input, spec] of Object.entries(warmup.inputs ?? {})) {
    const type = dataTypeOfConfig(spec.data_type);
    const datatype = kserveDatatypeOf(spec.data_type);
    if (!type || !datatype) throw new MmeError('INVALID', `model_warmup '${name}' input '${input}' has no data_type Triton can send.`);
    const dims = (spec.dims ?? []).map(Number);
    if (dims.some((d) => d < 0)) {
      throw new MmeError('INVALID', `model_warmup '${name}': warmup setting expects all variable-size dimensions are specified ` +
        `for input '${input}'`);
    }
    const isConfigInput = (config.input ?? []).some((i) => i.name === input);
    const shape = batching && isConfigInput ? [1, ...dims] : dims;
    const count = shape.reduce((p, d) => p * d, 1);
    let data: TensorElement[];
    if (spec.input_data_file !== undefined) {
      const file = `warmup/${spec.input_data_file}`;
      const bytes = files.get(file);
      if (!bytes) throw new MmeError('INVALID', `model_warmup '${name}' input '${input}': failed to open text file for read ${file}`);
      if (type.kind === 'bytes') {
        data = decodeTensorData('BYTES', bytes, undefined, input);
      } else {
        const size = type.byteSize * count;
        if (bytes.length < size) {
          throw new MmeError('INVALID', `model_warmup '${name}': warmup setting expects ${size} bytes, but the data provided ` +
            `from ${spec.input_data_file}only has ${bytes.length} bytes`);
        }
        data = decodeTensorData(datatype, bytes.subarray(0, size), count, input);
      }
    } else if (spec.random_data && type.kind !== 'bytes') {
      const random = options.random ?? Math.random;
      const bytes = Buffer.alloc(type.byteSize * count);
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
      data = decodeTensorData(datatype, bytes, count, input);
    } else if (spec.zero_data || spec.random_data) {
      data = zeros(datatype, count);
    } else {
      throw new MmeError('INVALID', `model_warmup '${name}': warmup setting expects input '${input}' to have input_data_type set`);
    }
    inputs.push({ name: input, datatype, shape, data });
  }
  return { source: `warmup '${name}'`, inputs };
}

/** One value per element for each required input: a BYTES sample file when there is one, else a small pattern. */
function generatedInputs(config: ModelConfig, files: ModelFiles, options: SmokeInputOptions): Tensor[] {
  const batching = Number(config.max_batch_size ?? 0) > 0;
  return (config.input ?? [])
    .filter((input) => !input.optional)
    .map((input) => {
      const name = input.name ?? '';
      const datatype = kserveDatatypeOf(input.data_type);
      if (!datatype) throw new MmeError('INVALID', `Input '${name}' of model '${config.name}' has no data_type smoke can send.`);
      const dims = (input.dims ?? []).map(Number);
      const template = batching ? [-1, ...dims] : dims;
      const given = options.shapes?.get(name);
      let shape: number[];
      if (given) {
        const fits = given.length === template.length && template.every((d, i) => d < 0 || d === given[i]);
        if (!fits) {
          throw new MmeError('USAGE', `--shape ${name}=${given.join(',')} does not fit input '${name}' of model ` +
            `'${config.name}', whose shape is [${template.join(', ')}] (-1 is any size).`);
        }
        shape = [...given];
      } else {
        shape = template.map((d) => (d < 0 ? 1 : d));
      }
      const count = shape.reduce((p, d) => p * d, 1);
      const sample = files.get(`${name}${SAMPLE_SUFFIX}`);
      const data = datatype === 'BYTES' && sample ? new Array<TensorElement>(count).fill(sample) : pattern(datatype, count);
      return { name, datatype, shape, data };
    });
}

function zeros(datatype: KServeDatatype, count: number): TensorElement[] {
  const zero: TensorElement = datatype === 'BYTES' ? new Uint8Array(0) : datatype === 'BOOL' ? false : 0;
  return new Array<TensorElement>(count).fill(zero);
}

/** Values valid for every type (0..9 cycling fits INT8 and UINT8 alike; 0.5 steps for floats). */
function pattern(datatype: KServeDatatype, count: number): TensorElement[] {
  const out = new Array<TensorElement>(count);
  for (let i = 0; i < count; i++) {
    if (datatype === 'BYTES') out[i] = 'mme-deploy smoke';
    else if (datatype === 'BOOL') out[i] = i % 2 === 1;
    else if (datatype.startsWith('FP') || datatype === 'BF16') out[i] = (i % 10) / 2;
    else out[i] = i % 10;
  }
  return out;
}
