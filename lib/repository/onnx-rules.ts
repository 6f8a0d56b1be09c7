// What Triton's onnxruntime backend does with a model's config and its model.onnx at load, offline: the config
// auto-complete (max_batch_size, inputs, outputs, dynamic batching) and the checks of the config against the graph,
// with the backend's own wording. Source: triton-inference-server/onnxruntime_backend @ 00fd3e8, src/onnxruntime.cc
// (ModelState::AutoCompleteConfig :993-1091, AutoCompleteMaxBatch :1094-1177, AutoCompleteIO :1180-1229, LoadModel
// :394-430, ModelInstanceState constructor :1409-1473, ValidateBooleanSequenceControl :1532-1587, ValidateInputs
// :1647-1791, ValidateOutputs :1794-1880) and src/onnxruntime_utils.cc (InputOutputInitializerInfos :129-225,
// CompareDimsSupported :491-560, OnnxDataTypeToModelConfigDataType :411-446); CheckAllowedModelInput/Output are in
// triton-inference-server/backend src/backend_common.cc:336-378.

import { join } from 'node:path';
import type {
  DataTypeName,
  ModelConfig,
  ModelInputConfig,
  ModelOutputConfig,
} from '../config/model-config-schema';
import { diagnostic, type Diagnostic, type SourcePosition } from '../diagnostics';
import {
  overridableInitializers,
  readOnnx,
  requiredInputs,
  type OnnxModelSummary,
  type OnnxReadResult,
  type OnnxValueInfo,
} from '../model-files/onnx';
import { configPosition, modelFileDiagnostic, type ModelFileSubject } from './model-file-subject';
import type { ModelFiles } from './model-files';

/** The parts of a loaded model the ONNX rules read (a LoadedModel has them all): those every model-file rule reads. */
export type OnnxRuleSubject = ModelFileSubject;

export interface OnnxRuleOptions {
  /**
   * The server's `--backend-config=default-max-batch-size`, which auto-complete gives a model that can batch and
   * sets none (core src/backend_model.cc:508).
   * @default 4
   */
  readonly defaultMaxBatchSize?: number;
}

export interface OnnxOutcome {
  readonly diagnostics: Diagnostic[];
  /**
   * The config as the backend completes it for the latest selected version, when its model.onnx could be read and
   * completion succeeded: what ensemble checks should see.
   */
  readonly completed?: ModelConfig;
}

/** ONNX TensorProto.DataType → Triton config type (OnnxDataTypeToModelConfigDataType). */
const CONFIG_TYPES: Record<number, DataTypeName> = {
  1: 'TYPE_FP32',
  2: 'TYPE_UINT8',
  3: 'TYPE_INT8',
  4: 'TYPE_UINT16',
  5: 'TYPE_INT16',
  6: 'TYPE_INT32',
  7: 'TYPE_INT64',
  8: 'TYPE_STRING',
  9: 'TYPE_BOOL',
  10: 'TYPE_FP16',
  11: 'TYPE_FP64',
  12: 'TYPE_UINT32',
  13: 'TYPE_UINT64',
  16: 'TYPE_BF16',
};

/** How the backend names an ONNX element type in "model provides TYPE_<x>": TRITONSERVER_DataTypeString. */
function providedType(elemType: number): string {
  const type = CONFIG_TYPES[elemType];
  if (!type) return 'TYPE_INVALID';
  return type === 'TYPE_STRING' ? 'TYPE_BYTES' : type;
}

const ONNX_TYPE_NAMES: Record<OnnxValueInfo['kind'], string> = {
  tensor: 'ONNX_TYPE_TENSOR',
  sequence: 'ONNX_TYPE_SEQUENCE',
  map: 'ONNX_TYPE_MAP',
  sparse_tensor: 'ONNX_TYPE_SPARSETENSOR',
  optional: 'ONNX_TYPE_UNKNOWN',
  none: 'ONNX_TYPE_UNKNOWN',
};

function shape(dims: readonly (number | bigint)[]): string {
  return `[${dims.join(',')}]`;
}

/**
 * Reads the model.onnx of every version Triton would load, completes the config as the onnxruntime backend does
 * and checks the config against the graph. A missing model file is another rule's business (nothing is reported
 * here); an empty one is taken as a stand-in (a warning, nothing checked).
 */
export function checkOnnxModel(model: OnnxRuleSubject, options: OnnxRuleOptions = {}): OnnxOutcome {
  const diagnostics: Diagnostic[] = [];
  const filename = model.defaultModelFilename ?? 'model.onnx';
  let completed: ModelConfig | undefined;
  for (const version of model.versions) {
    const dirName = model.versionDirs.find((v) => v.version === version)?.dirName ?? String(version);
    const found = modelPath(model, dirName, filename);
    if (!found) continue;
    const shown = [model.relDir, dirName, found.shownName].filter((p) => p !== '').join('/');
    const read = readModelFile(model.files, found.path);
    // A file that exists but cannot be opened is a read error, which the files view reports (as `validate` does).
    if (read === 'unreadable') continue;
    if (!read.ok) {
      if (read.reason === 'is empty') {
        diagnostics.push(
          diagnostic(
            'warning',
            'model-file-empty',
            `${shown} is empty, so its inputs and outputs are not checked here (a stand-in?). ` +
              'ONNX Runtime cannot load an empty file: put the exported model there before deploying.',
            { file: shown, model: model.name },
          ),
        );
      } else {
        diagnostics.push(
          diagnostic(
            'error',
            'onnx-invalid',
            `${shown} ${read.reason}. ONNX Runtime fails to load it ("Protobuf parsing failed"): ` +
              'export the model again, or check that the file was copied completely.',
            { file: shown, model: model.name },
          ),
        );
      }
      continue;
    }
    const checker = new OnnxChecker(model, read.model, shown, diagnostics, options.defaultMaxBatchSize ?? 4);
    const config = checker.run(found.path);
    if (version === model.versions[model.versions.length - 1]) completed = config;
  }
  return { diagnostics, ...(completed ? { completed } : {}) };
}

/** `<version>/<filename>`, or `<version>/<filename>/model.onnx` when the name is a directory (LoadModel :412-418). */
function modelPath(model: OnnxRuleSubject, dirName: string, filename: string): { path: string; shownName: string } | undefined {
  const path = join(model.dir, dirName, filename);
  const info = model.files.stat(path);
  if (info?.kind === 'directory') {
    const inner = join(path, 'model.onnx');
    return model.files.stat(inner)?.kind === 'file' ? { path: inner, shownName: `${filename}/model.onnx` } : undefined;
  }
  // Only regular files are opened: opening a FIFO would wait for a writer (other kinds are the file rules' to report).
  return info?.kind === 'file' ? { path, shownName: filename } : undefined;
}

function readModelFile(files: ModelFiles, path: string): OnnxReadResult | 'unreadable' {
  const reader = files.open(path);
  if (typeof reader === 'string') return 'unreadable';
  try {
    return readOnnx(reader);
  } finally {
    reader.close();
  }
}

class OnnxChecker {
  private readonly inputs: OnnxValueInfo[];
  private readonly overridable: OnnxValueInfo[];
  private readonly outputs: readonly OnnxValueInfo[];

  constructor(
    private readonly model: OnnxRuleSubject,
    private readonly onnx: OnnxModelSummary,
    private readonly file: string,
    private readonly out: Diagnostic[],
    private readonly defaultMaxBatchSize: number,
  ) {
    this.inputs = requiredInputs(onnx);
    this.overridable = overridableInitializers(onnx);
    this.outputs = onnx.outputs;
  }

  /** Completes the config and checks it; returns the completed config unless completion failed. */
  run(path: string): ModelConfig | undefined {
    if (!this.checkTensorKinds() || !this.checkExternalData(path)) return undefined;
    const config = this.complete();
    if (!config) return undefined;
    this.validate(config);
    return config;
  }

  private error(code: string, message: string, at?: SourcePosition): void {
    this.out.push(modelFileDiagnostic(this.model, 'error', code, message, at, this.file));
  }

  private at(message: object | undefined, field?: string, index?: number): SourcePosition | undefined {
    return configPosition(this.model, message, field, index);
  }

  /** InputOutputInitializerInfos (onnxruntime_utils.cc:199-204): only tensors can be served. */
  private checkTensorKinds(): boolean {
    for (const io of [...this.inputs, ...this.overridable, ...this.outputs]) {
      if (io.kind !== 'tensor') {
        this.error(
          'onnx-non-tensor-io',
          `Unsupported ONNX Type '${ONNX_TYPE_NAMES[io.kind]}' for I/O '${io.name}', expected 'ONNX_TYPE_TENSOR'. ` +
            `(${this.file}: Triton's onnxruntime backend serves tensors only; wrap the model so its inputs and outputs are tensors.)`,
        );
        return false;
      }
    }
    return true;
  }

  /** ONNX Runtime reads external data beside the model file when it creates the session. */
  private checkExternalData(path: string): boolean {
    let ok = true;
    for (const location of this.onnx.externalData) {
      if (this.model.files.stat(join(path, '..', location))?.kind !== 'file') {
        ok = false;
        this.error(
          'onnx-external-data-missing',
          `${this.file} keeps initializers in the external data file '${location}', which is not beside it: ` +
            `ONNX Runtime fails to load the model. Put ${location} in the same directory as the model file.`,
        );
      }
    }
    return ok;
  }

  /** AutoCompleteConfig :993-1091: nothing happens when the config lists inputs (or batch inputs) and outputs. */
  private complete(): ModelConfig | undefined {
    const config = this.model.config;
    const inputCount = (config.input?.length ?? 0) + (config.batch_input?.length ?? 0);
    const outputCount = config.output?.length ?? 0;
    if (inputCount > 0 && outputCount > 0) return config;

    // AutoCompleteMaxBatch :1094-1177: the model can batch when every input and output has a variable first dim.
    const canBatch = [...this.inputs, ...this.outputs].every((io) => io.dims.length > 0 && io.dims[0] === -1);
    let maxBatchSize = config.max_batch_size ?? 0;
    let dynamicBatching = config.dynamic_batching;
    if (canBatch) {
      if (maxBatchSize === 0) maxBatchSize = Math.max(this.defaultMaxBatchSize, 0);
      if (maxBatchSize > 1 && !config.sequence_batching && !config.dynamic_batching) dynamicBatching = {};
    } else if (maxBatchSize !== 0) {
      this.error(
        'onnx-autofill-batching',
        `autofill failed for model '${this.model.name}': model does not support batching while non-zero max_batch_size is specified. ` +
          `Some input or output of ${this.file} has no variable first dimension (${this.describeFirstDims()}): ` +
          'set max_batch_size: 0, or export the model with a dynamic batch axis.',
        this.at(config, 'max_batch_size'),
      );
      return undefined;
    }

    // AutoCompleteIO :1180-1229: the batch dimension is left out; a rank-0 tensor becomes dims [1] (+ empty reshape).
    const completeIo = (list: readonly OnnxValueInfo[]) =>
      list.map((io) => {
        const dims = io.dims.slice(maxBatchSize > 0 ? 1 : 0).map((d) => BigInt(d));
        const entry: ModelInputConfig & ModelOutputConfig = {
          name: io.name,
          data_type: CONFIG_TYPES[io.elemType] ?? 'TYPE_INVALID',
          dims,
        };
        if (dims.length === 0) {
          entry.dims = [1n];
          if (maxBatchSize > 0) entry.reshape = { shape: [] };
        }
        return entry;
      });
    return {
      ...config,
      max_batch_size: maxBatchSize,
      ...(dynamicBatching ? { dynamic_batching: dynamicBatching } : {}),
      ...(inputCount === 0 ? { input: completeIo(this.inputs) } : {}),
      ...(outputCount === 0 ? { output: completeIo(this.outputs) } : {}),
    };
  }

  private describeFirstDims(): string {
    const fixed = [...this.inputs, ...this.outputs].filter((io) => !(io.dims.length > 0 && io.dims[0] === -1));
    return fixed.map((io) => `'${io.name}' has shape ${shape(io.dims)}`).join(', ');
  }

  /** The ModelInstanceState constructor's checks (:1409-1473), ValidateInputs and ValidateOutputs. */
  private validate(config: ModelConfig): void {
    const name = this.model.name;
    const mbs = config.max_batch_size ?? 0;
    const inputs = config.input ?? [];
    const byName = new Map(this.inputs.map((i) => [i.name, i]));

    // Sequence controls present in the config are model inputs too (:1436-1468).
    let controls = 0;
    for (const control of config.sequence_batching?.control_input ?? []) {
      const kind = control.control?.[0];
      if (!kind || !control.name) continue;
      controls += 1;
      const tensor = byName.get(control.name);
      const at = this.at(control, 'name');
      if (!tensor) {
        this.error(
          'onnx-sequence-control-missing',
          `configuration specified sequence control '${control.name}', but model does not provide that input. ` +
            `${this.file} has inputs ${this.allowedInputs()}.`,
          at,
        );
        continue;
      }
      const debatched = tensor.dims.slice(mbs > 0 ? 1 : 0);
      if (debatched.length !== 1 || debatched[0] !== 1) {
        this.error(
          'onnx-sequence-control-dims',
          `unable to load model '${name}', sequence control '${control.name}' in model has dims ${shape(debatched)} ` +
            'but dims [1] is expected',
          at,
        );
        continue;
      }
      const expected =
        kind.kind === 'CONTROL_SEQUENCE_CORRID'
          ? kind.data_type
          : kind.int32_false_true?.length
            ? 'TYPE_INT32'
            : kind.fp32_false_true?.length
              ? 'TYPE_FP32'
              : kind.bool_false_true?.length
                ? 'TYPE_BOOL'
                : undefined;
      if (expected && CONFIG_TYPES[tensor.elemType] !== expected) {
        this.error(
          'onnx-sequence-control-type',
          `unable to load model '${name}', sequence control '${control.name}', ` +
            `the model expects data-type ${onnxTypeName(tensor.elemType)} but the model configuration specifies data-type ${expected}`,
          at,
        );
      }
    }
    const states = config.sequence_batching?.state?.length ?? 0;

    // ValidateInputs :1647-1671: the count excludes optional inputs (initializers a request may override).
    const expectedCount = inputs.filter((i) => !i.optional).length + (config.batch_input?.length ?? 0) + controls + states;
    if (this.inputs.length !== expectedCount) {
      this.error(
        'onnx-input-count',
        `unable to load model '${name}', configuration expects ${expectedCount} inputs, model provides ${this.inputs.length}. ` +
          `${this.file} takes ${this.inputs.length === 0 ? 'no inputs' : this.inputs.map((i) => `'${i.name}'`).join(', ')}` +
          (this.overridable.length
            ? ` (and may be given ${this.overridable.map((i) => `'${i.name}'`).join(', ')}, listed with optional: true)`
            : '') +
          '.',
        this.at(config, 'input'),
      );
    }
    const allowed = new Map([...this.inputs, ...this.overridable].map((i) => [i.name, i]));
    inputs.forEach((io) => {
      const at = this.at(io, 'name');
      if (io.optional && mbs !== 0) {
        this.error(
          'onnx-optional-input-batching',
          `unable to load model '${name}', optional input '${io.name}' is not supported for models that support batching`,
          this.at(io, 'optional'),
        );
        return;
      }
      const tensor = allowed.get(io.name ?? '');
      if (!tensor) {
        this.error('onnx-unknown-input', `unexpected inference input '${io.name}', allowed inputs are: ${this.allowedInputs()}`, at);
        return;
      }
      if (!this.sameType(io, tensor, 'input', at)) return;
      const dims = io.reshape ? (io.reshape.shape ?? []) : (io.dims ?? []);
      if (io.allow_ragged_batch) {
        if (tensor.dims.length !== 1 || tensor.dims[0] !== -1) {
          this.error(
            'onnx-ragged-input',
            `unable to load model '${name}', configuration expects model provides input with shape [-1]  ` +
              `for ragged input '${io.name}', model provides ${shape(tensor.dims)}`,
            this.at(io, 'allow_ragged_batch'),
          );
        }
        return;
      }
      this.sameDims(io, tensor, dims, mbs, false);
    });

    const outputs = config.output ?? [];
    const outputNames = new Map(this.outputs.map((o) => [o.name, o]));
    const batchOutputs = new Set((config.batch_output ?? []).flatMap((b) => b.target_name ?? []));
    outputs.forEach((io) => {
      const at = this.at(io, 'name');
      const tensor = outputNames.get(io.name ?? '');
      if (!tensor) {
        this.error(
          'onnx-unknown-output',
          `unexpected inference output '${io.name}', allowed outputs are: ${sortedNames(this.outputs)}`,
          at,
        );
        return;
      }
      if (!this.sameType(io, tensor, 'output', at)) return;
      if (batchOutputs.has(io.name ?? '')) return;
      const dims = io.reshape ? (io.reshape.shape ?? []) : (io.dims ?? []);
      this.sameDims(io, tensor, dims, mbs, true);
    });
  }

  private allowedInputs(): string {
    return sortedNames([...this.inputs, ...this.overridable]);
  }

  private sameType(
    io: ModelInputConfig | ModelOutputConfig,
    tensor: OnnxValueInfo,
    kind: 'input' | 'output',
    at: SourcePosition | undefined,
  ): boolean {
    const configType = io.data_type ?? 'TYPE_INVALID';
    if (configType === 'TYPE_INVALID' || typeof configType !== 'string') {
      // Core reports "must specify 'data_type'" for these; the backend's "unsupported datatype" would follow.
      return false;
    }
    if (CONFIG_TYPES[tensor.elemType] !== configType) {
      this.error(
        `onnx-${kind}-data-type`,
        `unable to load model '${this.model.name}', configuration expects datatype ${configType} for ${kind} '${io.name}', ` +
          `model provides ${providedType(tensor.elemType)}`,
        this.at(io, 'data_type') ?? at,
      );
      return false;
    }
    return true;
  }

  /** CompareDimsSupported (onnxruntime_utils.cc:491-560), or the scalar rule when the model tensor has rank 0. */
  private sameDims(
    io: ModelInputConfig | ModelOutputConfig,
    tensor: OnnxValueInfo,
    dims: readonly bigint[],
    mbs: number,
    exact: boolean,
  ): void {
    const name = this.model.name;
    const at = this.at(io, io.reshape ? 'reshape' : 'dims') ?? this.at(io, 'name');
    const model = tensor.dims;
    if (model.length === 0) {
      if (dims.some((d) => d !== 1n)) {
        this.error(
          'onnx-scalar-dims',
          `unable to load model '${name}', scalar tensor '${io.name}', ` +
            "should only provide 1 in the model configuration when the model doesn't support batching. " +
            `Model configuration provided: ${shape(dims)}.`,
          at,
        );
      }
      return;
    }
    const matches = (full: readonly bigint[]) =>
      model.length === full.length && full.every((d, i) => (!exact && model[i] === -1) || BigInt(model[i]!) === d);
    if (mbs > 0) {
      if (model[0] !== -1) {
        this.error(
          'onnx-batch-dim',
          `model '${name}', tensor '${io.name}': ` +
            'for the model to support batching the shape should have at least 1 dimension and the first dimension must be -1; ' +
            `but shape expected by the model is ${shape(model)}. ` +
            'Set max_batch_size: 0 and list the full shape in dims, or export the model with a dynamic batch axis.',
          this.at(this.model.config, 'max_batch_size') ?? at,
        );
        return;
      }
      const full = [-1n, ...dims];
      if (!matches(full)) {
        this.error(
          'onnx-dims',
          `model '${name}', tensor '${io.name}': the model expects ${model.length} dimensions (shape ${shape(model)}) ` +
            `but the model configuration specifies ${full.length} dimensions ` +
            '(an initial batch dimension because max_batch_size > 0 followed by the explicit tensor shape, ' +
            `making complete shape ${shape(full)})`,
          at,
        );
      }
    } else if (!matches(dims)) {
      this.error(
        'onnx-dims',
        `model '${name}', tensor '${io.name}': the model expects ${model.length} dimensions (shape ${shape(model)}) ` +
          `but the model configuration specifies ${dims.length} dimensions (shape ${shape(dims)})`,
        at,
      );
    }
  }
}

/** Names joined as std::set<std::string> orders them (byte order). */
function sortedNames(list: readonly OnnxValueInfo[]): string {
  return [...new Set(list.map((i) => i.name))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(', ');
}

/** OnnxDataTypeName (onnxruntime_utils.cc:233-): the ONNX spelling. */
function onnxTypeName(elemType: number): string {
  const names: Record<number, string> = {
    1: 'FLOAT',
    2: 'UINT8',
    3: 'INT8',
    4: 'UINT16',
    5: 'INT16',
    6: 'INT32',
    7: 'INT64',
    8: 'STRING',
    9: 'BOOL',
    10: 'FLOAT16',
    11: 'DOUBLE',
    12: 'UINT32',
    13: 'UINT64',
    16: 'BFLOAT16',
  };
  return names[elemType] ?? 'UNDEFINED';
}
