// §5 batch_input and batch_output: one source input each, naming tensors the model declares (core
// src/model_config_utils.cc:1341-1426, ValidateBatchIO).

import type { LoadedModel } from '../model';
import type { Reporter } from './reporter';

export function checkBatchIo(model: LoadedModel, r: Reporter) {
  const c = model.config;
  const inputNames = new Set((c.input ?? []).map((i) => i.name));
  const outputNames = new Set((c.output ?? []).map((o) => o.name));
  for (const bi of c.batch_input ?? []) {
    const kind = bi.kind ?? 'BATCH_ELEMENT_COUNT';
    const sources = bi.source_input ?? [];
    if (sources.length !== 1) {
      r.error('batch-input-sources', bi, 'source_input', `batch input kind '${kind}' expects 1 source input, got ` +
        `${sources.length} (model '${model.name}').`);
    }
    if (bi.data_type !== 'TYPE_INT32' && bi.data_type !== 'TYPE_FP32') {
      r.error('batch-input-data-type', bi, 'data_type', `batch input data type must be TYPE_INT32 or TYPE_FP32 (model '${model.name}').`);
    }
    sources.forEach((s, i) => {
      if (!inputNames.has(s)) {
        r.error('batch-input-unknown-source', bi, 'source_input', `unknown source input name '${s}' (model ` +
          `'${model.name}'): it must name one of the model's inputs.`, i);
      }
    });
  }
  for (const bo of c.batch_output ?? []) {
    const sources = bo.source_input ?? [];
    if (sources.length !== 1) {
      const kind = bo.kind ?? 'BATCH_SCATTER_WITH_INPUT_SHAPE';
      r.error('batch-output-sources', bo, 'source_input',
        `batch output kind '${kind}' expects 1 source input, got ${sources.length} (model '${model.name}').`);
    }
    // core src/model_config_utils.cc:1405-1411: a batch output's source must be an input too.
    sources.forEach((s, i) => {
      if (!inputNames.has(s)) {
        r.error('batch-output-unknown-source', bo, 'source_input', `unknown source input name '${s}' (model ` +
          `'${model.name}'): a batch_output's source_input must name one of the model's inputs.`, i);
      }
    });
    // :1412-1423: target names are unique within one batch_output (the set is made per entry).
    const targets = new Set<string>();
    (bo.target_name ?? []).forEach((t, i) => {
      if (!outputNames.has(t)) {
        r.error('batch-output-unknown-target', bo, 'target_name', `unknown target output name '${t}' (model ` +
          `'${model.name}'): it must name one of the model's outputs.`, i);
      }
      if (targets.has(t)) {
        r.error('batch-output-duplicate-target', bo, 'target_name', `target output name '${t}' can only be ` +
          `specified once (model '${model.name}').`, i);
      }
      targets.add(t);
    });
  }
}
