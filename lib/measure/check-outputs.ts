// Whether a model's answer is the answer its config.pbtxt promises: every declared output present, with the declared
// data type and a shape that fits the declared dims (with the batch dimension first when the model batches).

import type { ModelConfig } from '../config/model-config-schema';
import type { InferenceResponse } from '../kserve/kserve-codec';
import { kserveDatatypeOf } from '../kserve/invoke-request';

/** One way the answer differs from the config, as a sentence naming the output. */
export interface OutputMismatch {
  readonly output: string;
  readonly problem: 'missing-output' | 'wrong-datatype' | 'wrong-shape';
  readonly message: string;
}

/**
 * The mismatches of `response` against `config` for a request of `batch` rows (ignored for a model that does not
 * batch). Outputs the config does not declare are not faults: Triton may return more when asked (an ensemble's
 * intermediate tensors are never returned). A declared dim of -1 fits any size; `reshape` changes what the backend
 * produces, not what the client sees, so `dims` is what is checked.
 */
export function checkOutputs(config: ModelConfig, response: InferenceResponse, batch: number): OutputMismatch[] {
  const batching = Number(config.max_batch_size ?? 0) > 0;
  const mismatches: OutputMismatch[] = [];
  const model = config.name ? `model '${config.name}'` : 'the model';
  for (const declared of config.output ?? []) {
    const name = declared.name ?? '';
    const got = response.outputs.find((o) => o.name === name);
    if (!got) {
      const returned = response.outputs.map((o) => `'${o.name}'`).join(', ') || 'none';
      mismatches.push({ output: name, problem: 'missing-output', message: `output '${name}' declared by ${model} was not returned ` +
        `(returned: ${returned}).` });
      continue;
    }
    const datatype = kserveDatatypeOf(declared.data_type);
    if (datatype && got.datatype !== datatype) {
      mismatches.push({ output: name, problem: 'wrong-datatype', message: `output '${name}' is ${got.datatype}, but ${model} ` +
        `declares ${declared.data_type} (${datatype}).` });
    }
    const dims = (declared.dims ?? []).map(Number);
    const expected = batching ? [batch, ...dims] : dims;
    const fits = got.shape.length === expected.length && expected.every((d, i) => d < 0 || d === got.shape[i]);
    if (!fits) {
      const batchNote = batching ? ` (batch ${batch}, then dims [${dims.join(', ')}])` : '';
      mismatches.push({ output: name, problem: 'wrong-shape', message: `output '${name}' has shape [${got.shape.join(', ')}], but ` +
        `${model} declares [${expected.join(', ')}]${batchNote}; -1 is any size.` });
    }
  }
  return mismatches;
}
