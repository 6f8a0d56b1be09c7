// What Triton's DALI backend does with a model's config and its serialized pipeline (model.dali) at load, offline:
// the config auto-complete (inputs, outputs, max_batch_size, dynamic batching) and the checks of the config against
// the pipeline's inputs and outputs, with the backend's own wording. Source: triton-inference-server/dali_backend
// @ 01783f8: src/dali_backend.cc:145-149 (TRITONBACKEND_ModelInitialize: AutoCompleteConfig when Triton's auto-complete
// is on, its default, then ValidateModelConfig; an error of either fails the load), src/dali_model.h:120-122 (Batched:
// unless config.pbtxt says max_batch_size: 0), :139 (the config file's text read for it), :178-221 (LoadModel: the
// serialized pipeline, else the file autoserialized as python, else <version>/dali.py), :320-347
// (ReadPipelineProperties: inputs, outputs, max batch size), and src/config_tools/config_tools.cc (to_triton_config
// :33-62, MatchShapes :111-136, ProcessDtypeConfig :139-162, add_batch_dim :176-182, AutofillShapeConfig :184-204,
// AutofillIOConfig :226-245, ValidateAgainstTooManyInputs :258-276, AutofillInputsConfig :279-294,
// AutofillOutputsConfig :297-320, AutofillConfig :323-364, ValidateInputs :367-380, ValidateOutputs :383-404,
// ValidateConfig :407-430). Outputs are matched by position, not by name (a config renames them: src/dali_model.h:83-94
// ReadOutputsOrder, src/dali_model_instance.cc:285-291); inputs by name.

import { join } from 'node:path';
import type { DataTypeName, ModelConfig, ModelInputConfig, ModelOutputConfig } from '../config/model-config-schema';
import { diagnostic, type Diagnostic, type SourcePosition } from '../diagnostics';
import {
  daliInputs,
  readDaliPipeline,
  type DaliPipelineInput,
  type DaliPipelineOutput,
  type DaliPipelineSummary,
} from '../model-files/dali';
import {
  configPosition,
  modelFileDiagnostic,
  readWith,
  sortedNames,
  versionModelFiles,
  type ModelFileSubject,
} from './model-file-subject';

export interface DaliOutcome {
  readonly diagnostics: Diagnostic[];
  /** The config as the backend completes it for the latest selected version: what ensembles should see. */
  readonly completed?: ModelConfig;
}

/** DALIDataType → config type (to_triton_config, config_tools.cc:33-62); any other is TYPE_INVALID. */
const CONFIG_TYPES: Readonly<Record<number, DataTypeName>> = {
  0: 'TYPE_UINT8',
  1: 'TYPE_UINT16',
  2: 'TYPE_UINT32',
  3: 'TYPE_UINT64',
  4: 'TYPE_INT8',
  5: 'TYPE_INT16',
  6: 'TYPE_INT32',
  7: 'TYPE_INT64',
  8: 'TYPE_FP16',
  9: 'TYPE_FP32',
  10: 'TYPE_FP64',
  11: 'TYPE_BOOL',
};
const DALI_NO_TYPE = -1;

const configType = (dtype: number): DataTypeName => CONFIG_TYPES[dtype] ?? 'TYPE_INVALID';

/**
 * Reads the model.dali of every version Triton would load, completes the config as the DALI backend does and checks
 * it against the pipeline's inputs and outputs.
 */
export function checkDaliModel(model: ModelFileSubject): DaliOutcome {
  const out: Diagnostic[] = [];
  let completed: ModelConfig | undefined;
  for (const file of versionModelFiles(model, model.defaultModelFilename ?? 'model.dali')) {
    const read = readWith(model.files, file.path, readDaliPipeline);
    if (read === 'unreadable') continue;
    if (!read.ok) {
      out.push(notAPipeline(model, file.path, file.shown, read));
      continue;
    }
    const config = new DaliChecker(model, read.pipeline, file.shown, out).run();
    if (config && file.latest) completed = config;
  }
  return { diagnostics: out, ...(completed ? { completed } : {}) };
}

/**
 * A model file that is not a serialized pipeline: the backend then runs it as a python pipeline definition
 * (autoserialization), then <version>/dali.py (dali_model.h:178-216). Only a binary file with no dali.py beside it
 * certainly fails the load.
 */
function notAPipeline(
  model: ModelFileSubject,
  path: string,
  shown: string,
  read: { reason: string; binary?: boolean },
): Diagnostic {
  const source = { file: shown, model: model.name };
  const fallback = join(path, '..', 'dali.py');
  const hasFallback = model.files.stat(fallback)?.kind === 'file';
  const fallbackShown = `${shown.slice(0, shown.lastIndexOf('/') + 1)}dali.py`;
  if (read.reason === 'is empty') {
    return diagnostic(
      'warning',
      'model-file-empty',
      `${shown} is empty, so the pipeline's inputs and outputs are not checked here (a stand-in?). The DALI backend ` +
        `cannot deserialize it and ${hasFallback ? `serializes ${fallbackShown} instead` : 'then fails the load'}: put ` +
        'the serialized pipeline there (pipe.serialize(filename=...)) before deploying.',
      source,
    );
  }
  if (read.binary && !hasFallback) {
    return diagnostic(
      'error',
      'dali-pipeline-invalid',
      `${shown} ${read.reason}, nor a python pipeline definition, and there is no ${fallbackShown}: the DALI backend ` +
        `fails the load ("Failed to load model file. The program looked in the following locations: ..."). Serialize ` +
        'the pipeline again with pipe.serialize(filename=...) and check that the file was copied completely.',
      source,
    );
  }
  return diagnostic(
    'warning',
    'dali-pipeline-unread',
    `${shown} ${read.reason}, so its inputs and outputs are not checked here. The DALI backend tries to ` +
      `autoserialize it as a python pipeline definition${hasFallback ? `, then ${fallbackShown}` : ''}; if it is meant ` +
      'to be a serialized pipeline, serialize it again with pipe.serialize(filename=...).',
    source,
  );
}

type Io = ModelInputConfig & ModelOutputConfig;

/** Thrown inside the checker where the backend throws: the load fails at the first error. */
class LoadFailure extends Error {}

class DaliChecker {
  private readonly inputs: DaliPipelineInput[];
  private readonly outputs: readonly DaliPipelineOutput[];
  private readonly batched: boolean;

  constructor(
    private readonly model: ModelFileSubject,
    private readonly pipeline: DaliPipelineSummary,
    private readonly file: string,
    private readonly out: Diagnostic[],
  ) {
    this.inputs = daliInputs(pipeline);
    // An output named in the split_along_outer_axis parameter (':'-separated, src/parameters.h:35, :59-62) loses its
    // outer dimension (dali_model.h:340-344).
    const split = new Set((model.config.parameters?.split_along_outer_axis?.string_value ?? '').split(':'));
    this.outputs = pipeline.outputs.map((o) => (o.ndim > 0 && split.has(o.name) ? { ...o, ndim: o.ndim - 1 } : o));
    // Batched() (dali_model.h:120-122) reads max_batch_size from config.pbtxt's text: only an explicit 0 turns it off.
    this.batched = model.config.max_batch_size !== 0;
  }

  private at(message: object | undefined, field?: string): SourcePosition | undefined {
    return configPosition(this.model, message, field);
  }

  private fail(code: string, message: string, at?: SourcePosition): never {
    this.out.push(modelFileDiagnostic(this.model, 'error', code, message, at, this.file));
    throw new LoadFailure();
  }

  run(): ModelConfig | undefined {
    try {
      const config = this.complete();
      this.validate(config);
      return config;
    } catch (err) {
      if (err instanceof LoadFailure) return undefined;
      throw err;
    }
  }

  /** AutofillConfig (config_tools.cc:323-364). */
  private complete(): ModelConfig {
    const config = this.model.config;
    const listed = config.input ?? [];
    this.checkKnownInputs(listed);
    const input: Io[] = listed.map((io) => ({ ...io }));
    for (const tensor of this.inputs) {
      // FindObjectByName (:82-97): the first entry of that name.
      const i = input.findIndex((io) => io.name === tensor.name);
      if (i >= 0) input[i] = this.fill(input[i]!, listed[i]!, tensor.name, tensor);
      else input.push({ ...this.fill({ name: tensor.name }, undefined, tensor.name, tensor), allow_ragged_batch: true });
    }
    const given = config.output ?? [];
    if (given.length > this.outputs.length) this.outputCountMismatch(given.length, config);
    const output: Io[] = this.outputs.map((tensor, i) => {
      const io = given[i];
      // A listed output keeps its name, whatever the pipeline calls it: the config renames outputs by position.
      return io ? this.fill({ ...io }, io, io.name ?? '', tensor) : this.fill({ name: tensor.name }, undefined, tensor.name, tensor);
    });
    let maxBatchSize = config.max_batch_size ?? 0;
    // A max_batch_size absent from config.pbtxt reads as 0 in Triton's JSON, and a batched model then takes the
    // pipeline's batch size (:344-357).
    if ((maxBatchSize < 0 || (this.batched && maxBatchSize === 0)) && this.pipeline.batchSize !== undefined) {
      maxBatchSize = this.pipeline.batchSize;
    }
    // An empty dynamic_batching is added to a batched model without one (:359-363); a sequence batcher is left alone
    // here (the two are a oneof: the core refuses what that would make of it).
    const dynamic = !config.dynamic_batching && !config.sequence_batching && this.batched ? { dynamic_batching: {} } : {};
    return { ...config, max_batch_size: maxBatchSize, ...dynamic, input, output };
  }

  /** ValidateAgainstTooManyInputs (:258-276): every config input must be one of the pipeline's inputs. */
  private checkKnownInputs(listed: readonly ModelInputConfig[]): void {
    for (const io of listed) {
      // A nameless input is the core rules' to report (input-missing-name), in Triton's words for it.
      if (!io.name) throw new LoadFailure();
      if (this.inputs.some((t) => t.name === io.name)) continue;
      const known = sortedNames(this.inputs.map((t) => t.name));
      this.fail(
        'dali-unknown-input',
        `Configuration file contains config for ${io.name} but such input is not present in the pipeline. ` +
          `${this.file} has ${known ? `the inputs ${known}` : 'no inputs'} (the names its external sources are given ` +
          'with name=...).',
        this.at(io, 'name'),
      );
    }
  }

  private outputCountMismatch(configured: number, config: ModelConfig): never {
    return this.fail(
      'dali-output-count',
      'The number of outputs specified in the DALI pipeline and the configuration file do not match. ' +
        `Model config outputs: ${configured}. Pipeline outputs: ${this.outputs.length} ` +
        `(${this.file} returns ${this.outputs.map((o) => o.name).join(', ') || 'nothing'}; outputs are matched by position).`,
      this.at(config, 'output'),
    );
  }

  /** AutofillIOConfig (:226-245): the config's data_type and dims checked against the pipeline's, missing ones filled. */
  private fill(io: Io, at: object | undefined, name: string, tensor: DaliPipelineInput | DaliPipelineOutput): Io {
    const given = io.data_type && io.data_type !== 'TYPE_INVALID' ? io.data_type : undefined;
    if (given && tensor.dtype !== DALI_NO_TYPE && given !== configType(tensor.dtype)) {
      this.fail(
        'dali-data-type',
        `Mismatch of data_type config for "${name}". Data type defined in config: ${given}. Data type defined in ` +
          `pipeline: ${configType(tensor.dtype)}.`,
        this.at(at, 'data_type'),
      );
    }
    const filled: Io = { ...io, data_type: given ?? configType(tensor.dtype) };
    if (tensor.ndim < 0) return filled;
    const pipelineDims = this.pipelineDims(tensor.ndim);
    const dims = io.dims ?? [];
    if (dims.length === 0) return { ...filled, dims: pipelineDims };
    this.matchShapes(name, dims, pipelineDims, at);
    return filled;
  }

  /** The pipeline's shape as the config states it: ndim dimensions of -1, after a batch dimension when not batched. */
  private pipelineDims(ndim: number): bigint[] {
    const dims = new Array<bigint>(ndim).fill(-1n);
    return this.batched ? dims : [-1n, ...dims];
  }

  /** MatchShapes (:111-136): the pipeline's dimensions are all -1, so only their number can differ. */
  private matchShapes(name: string, dims: readonly bigint[], pipelineDims: readonly bigint[], at: object | undefined): void {
    if (dims.length === pipelineDims.length) return;
    this.fail(
      'dali-dims',
      `Mismatch in number of dimensions for "${name}". Number of dimensions defined in config: ${dims.length}. ` +
        `Number of dimensions defined in pipeline: ${pipelineDims.length}` +
        (this.batched
          ? ' (the batch dimension is not counted: max_batch_size is not 0).'
          : ' (with the batch dimension: max_batch_size is 0).'),
      this.at(at, 'dims'),
    );
  }

  /** ValidateConfig (:407-430) on the completed config: every input and output must end with a data type. */
  private validate(config: ModelConfig): void {
    const listed = config.input ?? [];
    for (const tensor of this.inputs) {
      const io = listed.find((i) => i.name === tensor.name)!;
      this.requireType(io, tensor.name, 'input', 'dtype= in its fn.external_source');
    }
    (config.output ?? []).forEach((io, i) => this.requireType(io, io.name ?? '', 'output', `output_dtype in its pipeline_def (#${i})`));
  }

  /** ValidateDtypeConfig (:171-174): a data_type neither the config nor the pipeline gives fails the load. */
  private requireType(io: Io, name: string, kind: 'input' | 'output', declare: string): void {
    if (io.data_type && io.data_type !== 'TYPE_INVALID') return;
    const original = (kind === 'input' ? this.model.config.input : this.model.config.output)?.find((t) => t.name === io.name);
    this.fail(
      'dali-missing-data-type',
      `Missing data_type config for "${name}": neither config.pbtxt nor ${this.file} gives the ${kind}'s data type. ` +
        `Add data_type to the ${kind} in config.pbtxt, or declare it in the pipeline (${declare}) and serialize it again.`,
      original ? this.at(original, 'name') : this.at(this.model.config, kind),
    );
  }
}
