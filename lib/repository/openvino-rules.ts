// What Triton's OpenVINO backend does with a model's config and its model.xml at load, offline. Source:
// triton-inference-server/openvino_backend @ db19304: src/openvino.cc (ModelState::Create :170-180 runs auto-complete
// when enabled; ReadModel :204-237; ValidateConfigureModel :503-518; ValidateInputs :520-628; ValidateOutputs
// :630-696; AutoCompleteConfig :698-725; AutoCompleteBatching :727-814; AutoCompleteInputOrOutput :816-878) and
// src/openvino_utils.cc (ModelConfigDataTypeToOpenVINOElement :132-165, OpenVINOElementToModelConfigDataType
// :167-195, doesMatch :196-207, CompareDimsSupported :209-274). CheckAllowedModelInput/Output: triton-inference-server/
// backend src/backend_common.cc:336-378.

import type { DataTypeName, ModelConfig, ModelInputConfig, ModelOutputConfig } from '../config/model-config-schema';
import { diagnostic, type Diagnostic, type SourcePosition } from '../diagnostics';
import { readOpenVinoModel, type OpenVinoModelSummary, type OpenVinoTensor } from '../model-files/openvino';
import {
  configPosition,
  emptyModelFile,
  modelFileDiagnostic,
  readWith,
  sortedNames,
  versionModelFiles,
  type ModelFileSubject,
} from './model-file-subject';

export interface OpenVinoRuleOptions {
  /**
   * The server's `--backend-config=default-max-batch-size` (openvino.cc:1465-1474), which auto-complete gives a model
   * whose every input and output layout has a batch dimension (at least 1).
   * @default 4
   */
  readonly defaultMaxBatchSize?: number;
}

export interface OpenVinoOutcome {
  readonly diagnostics: Diagnostic[];
  /** The config as the backend completes it for the latest selected version: what ensembles should see. */
  readonly completed?: ModelConfig;
}

/** IR port precisions → config types (OpenVINOElementToModelConfigDataType); others are TYPE_INVALID. */
const CONFIG_TYPES: Readonly<Record<string, DataTypeName>> = {
  BOOL: 'TYPE_BOOL',
  BOOLEAN: 'TYPE_BOOL',
  U8: 'TYPE_UINT8',
  U16: 'TYPE_UINT16',
  U32: 'TYPE_UINT32',
  U64: 'TYPE_UINT64',
  I8: 'TYPE_INT8',
  I16: 'TYPE_INT16',
  I32: 'TYPE_INT32',
  I64: 'TYPE_INT64',
  FP16: 'TYPE_FP16',
  F16: 'TYPE_FP16',
  FP32: 'TYPE_FP32',
  F32: 'TYPE_FP32',
};

/** The config types the backend can set on a tensor (ModelConfigDataTypeToOpenVINOElement). */
const SERVABLE = new Set(Object.values(CONFIG_TYPES));

const shape = (dims: readonly (number | bigint)[]) => `[${dims.join(',')}]`;

/** ov::layout::has_batch: the layout names a dimension N (`NCHW`, `[N,C,H,W]`, `N...`). */
function hasBatch(layout: string | undefined): boolean {
  if (!layout) return false;
  const inner = layout.replace(/^\[|\]$/g, '');
  const names = inner.includes(',') ? inner.split(',').map((n) => n.trim()) : [...inner.replace(/\./g, '')];
  return names.some((n) => n.toUpperCase() === 'N');
}

/**
 * Reads the model.xml of every version Triton would load, completes the config as the OpenVINO backend does and
 * checks the config against the IR's Parameters and Results.
 */
export function checkOpenVinoModel(model: ModelFileSubject, options: OpenVinoRuleOptions = {}): OpenVinoOutcome {
  const out: Diagnostic[] = [];
  let completed: ModelConfig | undefined;
  for (const file of versionModelFiles(model, model.defaultModelFilename ?? 'model.xml')) {
    const read = readWith(model.files, file.path, readOpenVinoModel);
    if (read === 'unreadable') continue;
    if (!read.ok) {
      if (read.reason === 'is empty') out.push(emptyModelFile(model, file.shown, 'OpenVINO'));
      else {
        out.push(
          diagnostic(
            'error',
            'openvino-invalid',
            `${file.shown} ${read.reason}. OpenVINO fails to read it ("reading model"): convert the model again with ` +
              'openvino.save_model (or ovc), or check that the file was copied completely.',
            { file: file.shown, model: model.name },
          ),
        );
      }
      continue;
    }
    const config = new OpenVinoChecker(model, read.model, file.shown, out, options.defaultMaxBatchSize ?? 4).run();
    if (config && file.latest) completed = config;
  }
  return { diagnostics: out, ...(completed ? { completed } : {}) };
}

type Io = ModelInputConfig & ModelOutputConfig;

class OpenVinoChecker {
  constructor(
    private readonly model: ModelFileSubject,
    private readonly ir: OpenVinoModelSummary,
    private readonly file: string,
    private readonly out: Diagnostic[],
    private readonly defaultMaxBatchSize: number,
  ) {}

  private at(message: object | undefined, field?: string): SourcePosition | undefined {
    return configPosition(this.model, message, field);
  }

  private error(code: string, message: string, at?: SourcePosition): void {
    this.out.push(modelFileDiagnostic(this.model, 'error', code, message, at, this.file));
  }

  run(): ModelConfig | undefined {
    // get_any_name() throws for a tensor without names: the validation asks it of every input and output.
    const unnamed = [...this.ir.inputs, ...this.ir.outputs].filter((t) => !t.anyName);
    if (unnamed.length > 0) {
      this.error(
        'openvino-unnamed-tensor',
        `Attempt to get a name for a Tensor without names: ${this.file} gives no tensor names to ` +
          `${unnamed.map((t) => `layer '${t.layer}'`).join(', ')}, and the OpenVINO backend serves tensors by name. ` +
          'Convert the model again with named inputs and outputs.',
      );
      return undefined;
    }
    if ([...this.ir.inputs, ...this.ir.outputs].some((t) => !t.dims)) return undefined; // a dynamic rank: not checked
    const config = this.complete();
    this.validate(config);
    return config;
  }

  /** AutoCompleteBatching and AutoCompleteInputOrOutput (:727-878): only an empty list is written. */
  private complete(): ModelConfig {
    const config = this.model.config;
    let maxBatchSize = config.max_batch_size ?? 0;
    let dynamicBatching = config.dynamic_batching;
    if ([...this.ir.inputs, ...this.ir.outputs].every((t) => hasBatch(t.layout))) {
      if (maxBatchSize === 0) maxBatchSize = Math.max(this.defaultMaxBatchSize, 1);
      if (maxBatchSize > 1 && !config.dynamic_batching && !config.sequence_batching) dynamicBatching = {};
    }
    const fill = (list: readonly OpenVinoTensor[]): Io[] =>
      list.map((t) => {
        const dims = t.dims!;
        const dynamic = dims.some((d) => d < 0);
        // Every dimension is -1 when any is dynamic (io_shape.is_static() is asked of the whole shape, :855-857).
        return {
          name: t.anyName!,
          data_type: CONFIG_TYPES[t.precision] ?? 'TYPE_INVALID',
          dims: dims.slice(maxBatchSize > 0 ? 1 : 0).map((d) => (dynamic ? -1n : BigInt(d))),
        };
      });
    return {
      ...config,
      max_batch_size: maxBatchSize,
      ...(dynamicBatching ? { dynamic_batching: dynamicBatching } : {}),
      input: (config.input?.length ?? 0) > 0 ? config.input : fill(this.ir.inputs),
      output: (config.output?.length ?? 0) > 0 ? config.output : fill(this.ir.outputs),
    };
  }

  /** ValidateInputs and ValidateOutputs (:520-696). */
  private validate(config: ModelConfig): void {
    const name = this.model.name;
    const mbs = config.max_batch_size ?? 0;
    const inputs = config.input ?? [];
    if (this.ir.inputs.length !== inputs.length) {
      this.error(
        'openvino-input-count',
        `unable to load model '${name}', configuration expects ${inputs.length} inputs, model provides ${this.ir.inputs.length}. ` +
          `${this.file} has the Parameters ${sortedNames(this.ir.inputs.map((t) => t.anyName!)) || '(none)'}.`,
        this.at(config, 'input'),
      );
      return;
    }
    const reshapeIo = (config.parameters?.RESHAPE_IO_LAYERS?.string_value ?? '').toLowerCase() === 'true';
    const byName = new Map(this.ir.inputs.map((t) => [t.anyName!, t]));
    for (const io of inputs) {
      const tensor = byName.get(io.name ?? '');
      if (!tensor) {
        this.error(
          'openvino-unknown-input',
          `unexpected inference input '${io.name}', allowed inputs are: ${sortedNames(byName.keys())}. ` +
            `(The Parameters of ${this.file}.)`,
          this.at(io, 'name'),
        );
        return;
      }
      if (!this.servable(io, 'input')) return;
      // RESHAPE_IO_LAYERS reshapes the model to the config instead of comparing (:582-603).
      if (!reshapeIo && !this.sameDims(io, tensor, mbs, false)) return;
    }
    const outputs = new Map(this.ir.outputs.map((t) => [t.anyName!, t]));
    for (const io of config.output ?? []) {
      const tensor = outputs.get(io.name ?? '');
      if (!tensor) {
        this.error(
          'openvino-unknown-output',
          `unexpected inference output '${io.name}', allowed outputs are: ${sortedNames(outputs.keys())}. ` +
            `(The Results of ${this.file}, named after the tensors they return.)`,
          this.at(io, 'name'),
        );
        return;
      }
      if (!this.servable(io, 'output')) return;
      if (!this.sameDims(io, tensor, mbs, true)) return;
    }
  }

  private servable(io: ModelInputConfig | ModelOutputConfig, kind: 'input' | 'output'): boolean {
    const type = io.data_type ?? 'TYPE_INVALID';
    if (SERVABLE.has(type as DataTypeName)) return true;
    this.error(
      'openvino-unsupported-data-type',
      `unsupported datatype ${type} for ${kind} '${io.name}' for model '${this.model.name}'. The OpenVINO backend converts ` +
        'tensors to BOOL, UINT8-64, INT8-64, FP16 or FP32 only.',
      this.at(io, 'data_type') ?? this.at(io, 'name'),
    );
    return false;
  }

  /** CompareDimsSupported (openvino_utils.cc:209-274) with doesMatch (:196-207): -1 is a dynamic dimension. */
  private sameDims(io: ModelInputConfig | ModelOutputConfig, tensor: OpenVinoTensor, mbs: number, exact: boolean): boolean {
    const model = tensor.dims!;
    const dims = io.reshape ? (io.reshape.shape ?? []) : (io.dims ?? []);
    const matches = (m: number, d: bigint) => m < 0 || BigInt(m) === d;
    const at = this.at(io, io.reshape ? 'reshape' : 'dims') ?? this.at(io, 'name');
    const prefix = `model '${this.model.name}', tensor '${io.name}'`;
    if (mbs > 0) {
      if (model.length === 0) {
        this.error('openvino-batch-dim', `${prefix}: for the model to support batching the shape should have at least 1 dimension`, at);
        return false;
      }
      const full = [BigInt(mbs), ...dims];
      // ValidateInputs ends with ov::set_batch(model, max_batch_size) (:621-625): an output's first dimension is then
      // the batch size OpenVINO infers from the inputs, which only the graph knows; it is taken to follow.
      const modelDims = exact ? [mbs, ...model.slice(1)] : model;
      const ok =
        model.length === full.length && full.every((d, i) => !(exact || (i !== 0 && d !== -1n)) || matches(modelDims[i]!, d));
      if (ok) return true;
      this.error(
        'openvino-dims',
        `${prefix}: the model expects ${model.length} dimensions (shape ${shape(model)}) but the model configuration specifies ` +
          `${full.length} dimensions (an initial batch dimension because max_batch_size > 0 followed by the explicit tensor ` +
          `shape, making complete shape ${shape(full)})`,
        at,
      );
      return false;
    }
    if (model.length === dims.length && dims.every((d, i) => matches(model[i]!, d))) return true;
    this.error(
      'openvino-dims',
      `${prefix}: the model expects ${model.length} dimensions (shape ${shape(model)}) but the model configuration specifies ` +
        `${dims.length} dimensions (shape ${shape(dims)})`,
      at,
    );
    return false;
  }
}
