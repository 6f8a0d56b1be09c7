// What Triton's TensorFlow backend does with a model's config and its model file at load, offline. Source:
// triton-inference-server/tensorflow_backend @ c13c2d1: src/tensorflow.cc (graphdef::ValidateSequenceControl :73-108,
// graphdef::ValidateTRITONTFModel :111-177, savedmodel::ValidateSequenceControl :183-250,
// savedmodel::ValidateTRITONTFModel :252-472, AutoCompleteHelper :1175-1720, ModelState::AutoCompleteConfig
// :1723-1790), src/tensorflow_utils.cc (ModelSupportsBatch :34-46, CompareDims :49-127, ConvertDataType :183-290) and
// mirror/tensorflow_backend_tf.cc (TRITONTF_ModelCreateFromGraphDef :830-911: the potential inputs and outputs;
// TRITONTF_ModelCreateFromSavedModel :913-1085: tag, signature, dtypes and shapes). CheckAllowedModelInput/Output:
// triton-inference-server/backend src/backend_common.cc:336-378.

import type { DataTypeName, ModelConfig, ModelInputConfig, ModelOutputConfig } from '../config/model-config-schema';
import { closest, diagnostic, type Diagnostic, type SourcePosition } from '../diagnostics';
import {
  readGraphDef,
  readSavedModel,
  TF_DATA_TYPES,
  type GraphDefSummary,
  type TfSignature,
  type TfTensorInfo,
} from '../model-files/tensorflow';
import {
  configPosition,
  emptyModelFile,
  modelFileDiagnostic,
  readWith,
  sortedNames,
  versionModelFiles,
  type ModelFileSubject,
} from './model-file-subject';

export interface TensorflowRuleOptions {
  /**
   * The server's `--backend-config=default-max-batch-size`, which auto-complete gives a SavedModel that can batch
   * (src/tensorflow.cc:2593-2598 reads it; core passes it to every backend).
   * @default 4
   */
  readonly defaultMaxBatchSize?: number;
}

export interface TensorflowOutcome {
  readonly diagnostics: Diagnostic[];
  /** A SavedModel's config as the backend completes it for the latest selected version: what ensembles should see. */
  readonly completed?: ModelConfig;
}

/** TRITONTF data types → config types (tensorflow_backend_tf.cc ConvertDataType :70-107, ConvertToModelConfigString). */
const CONFIG_TYPES: Readonly<Record<number, DataTypeName>> = {
  1: 'TYPE_FP32',
  2: 'TYPE_FP64',
  3: 'TYPE_INT32',
  4: 'TYPE_UINT8',
  5: 'TYPE_INT16',
  6: 'TYPE_INT8',
  7: 'TYPE_STRING',
  9: 'TYPE_INT64',
  10: 'TYPE_BOOL',
  17: 'TYPE_UINT16',
  19: 'TYPE_FP16',
  22: 'TYPE_UINT32',
  23: 'TYPE_UINT64',
};

/** "model provides TYPE_<x>": TRITONSERVER_DataTypeString spells strings BYTES. */
function providedType(dtype: number): string {
  const type = CONFIG_TYPES[dtype];
  if (!type) return 'TYPE_INVALID';
  return type === 'TYPE_STRING' ? 'TYPE_BYTES' : type;
}

/** The config types the backend's ConvertDataType(string) knows (tensorflow_utils.cc:222-260): BF16 is not one. */
function tfKnowsType(type: string | undefined): boolean {
  return type !== undefined && Object.values(CONFIG_TYPES).includes(type as DataTypeName);
}

const shape = (dims: readonly (number | bigint)[]) => `[${dims.join(',')}]`;

/** The boolean and typed sequence controls the backend looks up, in its order (tensorflow.cc:146-159, :295-306). */
const CONTROL_KINDS = ['CONTROL_SEQUENCE_START', 'CONTROL_SEQUENCE_END', 'CONTROL_SEQUENCE_READY', 'CONTROL_SEQUENCE_CORRID'] as const;

/** The control tensors a config names, with the data type the backend expects of each. */
function sequenceControls(config: ModelConfig): { name: string; dataType?: string; at: object }[] {
  const out: { name: string; dataType?: string; at: object }[] = [];
  for (const kind of CONTROL_KINDS) {
    for (const input of config.sequence_batching?.control_input ?? []) {
      const control = input.control?.find((c) => c.kind === kind);
      if (!control || !input.name) continue;
      const dataType =
        kind === 'CONTROL_SEQUENCE_CORRID'
          ? control.data_type
          : control.int32_false_true?.length
            ? 'TYPE_INT32'
            : control.fp32_false_true?.length
              ? 'TYPE_FP32'
              : control.bool_false_true?.length
                ? 'TYPE_BOOL'
                : undefined;
      out.push({ name: input.name, ...(dataType ? { dataType } : {}), at: input });
      break;
    }
  }
  return out;
}

class Reporter {
  constructor(
    readonly model: ModelFileSubject,
    readonly out: Diagnostic[],
  ) {}

  at(message: object | undefined, field?: string): SourcePosition | undefined {
    return configPosition(this.model, message, field);
  }

  /** An error on the config (at `at`) or, without a position, on the model file `file`. */
  error(code: string, message: string, at: SourcePosition | undefined, file: string): void {
    this.out.push(modelFileDiagnostic(this.model, 'error', code, message, at, file));
  }
}

/** A long list of names (a graph's nodes) shortened for a message, with the one closest to `name` first. */
function someNames(names: readonly string[], name: string): string {
  const sorted = sortedNames(names);
  if (names.length <= 12) return sorted;
  const near = closest(name, names);
  return `${near ? `'${near}' (closest to '${name}') and ` : ''}${names.length - (near ? 1 : 0)} other nodes of the graph`;
}

// ---------------------------------------------------------------------------------------------------------------
// GraphDef: no auto-complete (tensorflow.cc:1725-1726); the Placeholders are the potential inputs, every other node a
// potential output, names only (tensorflow_backend_tf.cc:879-893).
// ---------------------------------------------------------------------------------------------------------------

/** Reads model.graphdef of every version Triton would load and checks the config's tensor names against it. */
export function checkGraphDefModel(model: ModelFileSubject): Diagnostic[] {
  const out: Diagnostic[] = [];
  const r = new Reporter(model, out);
  for (const file of versionModelFiles(model, model.defaultModelFilename ?? 'model.graphdef')) {
    const read = readWith(model.files, file.path, readGraphDef);
    if (read === 'unreadable') continue;
    if (!read.ok) {
      if (read.reason === 'is empty') out.push(emptyModelFile(model, file.shown, 'TensorFlow'));
      else {
        r.error(
          'tensorflow-graphdef-invalid',
          `${file.shown} ${read.reason}. TensorFlow fails to load it ("Can't parse ... as binary proto"): ` +
            'write the frozen graph again with tf.io.write_graph(graph_def, dir, "model.graphdef", as_text=False), ' +
            'or check that the file was copied completely.',
          undefined,
          file.shown,
        );
      }
      continue;
    }
    checkGraph(r, read.model, file.shown);
  }
  return out;
}

function checkGraph(r: Reporter, graph: GraphDefSummary, shown: string): void {
  const { model } = r;
  const config = model.config;
  if (graph.placeholders.length === 0 && graph.otherNodes.length === 0) {
    // tensorflow_backend_tf.cc:852-855
    r.error(
      'tensorflow-empty-network',
      `model ${model.name} has an empty network: ${shown} holds a GraphDef without nodes. Export the frozen graph again.`,
      undefined,
      shown,
    );
    return;
  }
  const inputs = new Set(graph.placeholders);
  const outputs = new Set(graph.otherNodes);
  const configInputs = config.input ?? [];
  const described =
    graph.placeholders.length === 0
      ? `${shown} has no Placeholder node`
      : `${shown} has the Placeholder nodes ${sortedNames(graph.placeholders)}`;
  // :133-142
  if (inputs.size < configInputs.length) {
    r.error(
      'tensorflow-input-count',
      `unable to load model '${model.name}', configuration expects ${configInputs.length} inputs, ` +
        `model provides at most ${inputs.size}. ${described}: only a Placeholder can be an input.`,
      r.at(config, 'input'),
      shown,
    );
  }
  // :146-159 → ValidateSequenceControl :95-104
  for (const control of sequenceControls(config)) {
    if (inputs.has(control.name)) continue;
    r.error(
      'tensorflow-sequence-control-missing',
      `configuration specified sequence control '${control.name}', but model does not provide that input. ${described}.`,
      r.at(control.at, 'name'),
      shown,
    );
  }
  // :161-167 (CheckAllowedModelInput)
  for (const io of configInputs) {
    if (!io.name || inputs.has(io.name)) continue;
    r.error(
      'tensorflow-unknown-input',
      `unexpected inference input '${io.name}', allowed inputs are: ${sortedNames(graph.placeholders)}. ` +
        `${described}: name the config input after one of them.`,
      r.at(io, 'name'),
      shown,
    );
  }
  // :169-175 (CheckAllowedModelOutput): any node that is not a Placeholder, by its node name (no ':0')
  for (const io of config.output ?? []) {
    if (!io.name || outputs.has(io.name)) continue;
    const node = io.name.replace(/:\d+$/, '');
    const hint = node !== io.name && outputs.has(node) ? ` Name the node without the output index: '${node}'.` : '';
    r.error(
      'tensorflow-unknown-output',
      `unexpected inference output '${io.name}', allowed outputs are: ${someNames(graph.otherNodes, io.name)}. ` +
        `${shown} has no node of that name (a GraphDef output is named after its node).${hint}`,
      r.at(io, 'name'),
      shown,
    );
  }
}

// ---------------------------------------------------------------------------------------------------------------
// SavedModel: the meta graph with the tag, the signature, then auto-complete and the checks against the signature.
// ---------------------------------------------------------------------------------------------------------------

const INIT_OP = '__saved_model_init_op';
const TRAIN_OP = '__saved_model_train_op';

/**
 * Reads model.savedmodel/saved_model.pb of every version Triton would load, completes the config as the backend's
 * auto-complete does and checks it against the signature the backend serves.
 */
export function checkSavedModel(model: ModelFileSubject, options: TensorflowRuleOptions = {}): TensorflowOutcome {
  const out: Diagnostic[] = [];
  const r = new Reporter(model, out);
  let completed: ModelConfig | undefined;
  for (const file of versionModelFiles(model, model.defaultModelFilename ?? 'model.savedmodel', 'saved_model.pb')) {
    const read = readWith(model.files, file.path, readSavedModel);
    if (read === 'unreadable') continue;
    if (!read.ok) {
      if (read.reason === 'is empty') out.push(emptyModelFile(model, file.shown, 'TensorFlow'));
      else {
        r.error(
          'tensorflow-savedmodel-invalid',
          `${file.shown} ${read.reason}. unable to auto-complete model configuration for '${model.name}', failed to load ` +
            'model: TensorFlow cannot parse the SavedModel. Save the model again with tf.saved_model.save, or check that ' +
            'the directory was copied completely.',
          undefined,
          file.shown,
        );
      }
      continue;
    }
    const signature = pickSignature(r, read.model.metaGraphs, file.shown);
    if (!signature) continue;
    const config = new SavedModelChecker(r, signature, file.shown, options.defaultMaxBatchSize ?? 4).run();
    if (config && file.latest) completed = config;
  }
  return { diagnostics: out, ...(completed ? { completed } : {}) };
}

function parameter(config: ModelConfig, key: string): string {
  return config.parameters?.[key]?.string_value ?? '';
}

/** The signature TRITONTF_ModelCreateFromSavedModel serves (tensorflow_backend_tf.cc:947-1015), or why there is none. */
function pickSignature(
  r: Reporter,
  metaGraphs: readonly { tags: readonly string[]; signatures: readonly TfSignature[] }[],
  shown: string,
): TfSignature | undefined {
  const { model } = r;
  const config = model.config;
  const tag = parameter(config, 'TF_GRAPH_TAG') || 'serve';
  const tagAt = r.at(config.parameters?.TF_GRAPH_TAG) ?? r.at(config, 'parameters');
  // LoadSavedModel takes the meta graph whose tag set is exactly {tag} (tensorflow/tensorflow
  // tensorflow/cc/saved_model/reader.cc FindMetaGraphDef).
  const metaGraph = metaGraphs.find((m) => new Set(m.tags).size === 1 && m.tags.every((t) => t === tag));
  if (!metaGraph) {
    const sets = metaGraphs.map((m) => `{ ${m.tags.join(' ')} }`).join(', ');
    r.error(
      'tensorflow-savedmodel-tag',
      `unable to auto-complete model configuration for '${model.name}', failed to load model: Could not find meta graph ` +
        `def matching supplied tags: { ${tag} }. ${shown} has the tag sets ${sets || '(none)'}: ` +
        'name the tag with parameters { key: "TF_GRAPH_TAG" value: { string_value: "..." } }, or save the model with it.',
      tagAt,
      shown,
    );
    return undefined;
  }
  const wanted = parameter(config, 'TF_SIGNATURE_DEF');
  const key = wanted || 'serving_default';
  const sigAt = r.at(config.parameters?.TF_SIGNATURE_DEF) ?? r.at(config, 'parameters');
  let signature = metaGraph.signatures.find((s) => s.key === key);
  if (!signature && !wanted) {
    const others = metaGraph.signatures.filter((s) => s.key !== INIT_OP && s.key !== TRAIN_OP);
    if (others.length > 1) {
      // The backend takes the first of a protobuf map's iteration, whose order is not the file's: not knowable here.
      r.out.push(
        diagnostic(
          'warning',
          'tensorflow-signature-unknown',
          `${shown} has no 'serving_default' signature, and the TensorFlow backend then serves whichever of ` +
            `${sortedNames(others.map((s) => s.key))} its map yields first, so the config is not checked against it. ` +
            'Name one with parameters { key: "TF_SIGNATURE_DEF" value: { string_value: "..." } }.',
          { file: shown, model: model.name },
        ),
      );
      return undefined;
    }
    signature = others[0];
  }
  if (!signature) {
    r.error(
      'tensorflow-savedmodel-signature',
      `unable to auto-complete model configuration for '${model.name}', failed to load model: ` +
        `unable to load model '${model.name}', expected '${key}' signature. ${shown} has the signatures ` +
        `${sortedNames(metaGraph.signatures.map((s) => s.key)) || '(none)'} under the tag '${tag}'` +
        (wanted ? ': name one of them in TF_SIGNATURE_DEF.' : ': save the model with a serving signature.'),
      wanted ? sigAt : undefined,
      shown,
    );
    return undefined;
  }
  // :1022-1058: an input or output of a type the backend does not serve fails the load.
  for (const [list, kind] of [
    [signature.inputs, 'input'],
    [signature.outputs, 'output'],
  ] as const) {
    for (const io of list) {
      if (CONFIG_TYPES[io.dtype]) continue;
      r.error(
        'tensorflow-unsupported-dtype',
        `unable to auto-complete model configuration for '${model.name}', failed to load model: ` +
          `unable to process ${kind} '${io.key}' for '${model.name}', unsupported datatype ` +
          `'${TF_DATA_TYPES[io.dtype] ?? `DT_INVALID (${io.dtype})`}'. Signature '${signature.key}' of ${shown} must ` +
          'take and return only types Triton has (cast in the serving function).',
        undefined,
        shown,
      );
      return undefined;
    }
  }
  return signature;
}

type Io = ModelInputConfig & ModelOutputConfig;

class SavedModelChecker {
  constructor(
    private readonly r: Reporter,
    private readonly signature: TfSignature,
    private readonly file: string,
    private readonly defaultMaxBatchSize: number,
  ) {}

  private get name(): string {
    return this.r.model.name;
  }

  private error(code: string, message: string, at?: SourcePosition): void {
    this.r.error(code, message, at, this.file);
  }

  /** Where a tensor of the completed config is written in config.pbtxt (completion copies the entries it fills). */
  private pos(io: ModelInputConfig | ModelOutputConfig, kind: 'input' | 'output', field: string): SourcePosition | undefined {
    const written = (this.r.model.config[kind] ?? []) as readonly (ModelInputConfig | ModelOutputConfig)[];
    const original = written.includes(io) ? io : written.find((w) => w.name === io.name);
    return this.r.at(original, field) ?? this.r.at(original, 'name') ?? this.r.at(this.r.model.config, kind);
  }

  run(): ModelConfig | undefined {
    const config = this.complete();
    if (config) this.validate(config);
    return config;
  }

  /** AutoCompleteHelper::Fix (:1213-1228): batching, then inputs, then outputs. */
  private complete(): ModelConfig | undefined {
    const config = this.r.model.config;
    const sig = this.signature;
    const batching = this.fixBatching(config);
    if (!batching) return undefined;
    const { maxBatchSize, supportsBatching, dynamicBatching } = batching;
    const fill = (io: TfTensorInfo, entry: Io): Io | undefined => {
      // FillMissingValues :1429-1501
      const out: Io = { ...entry, name: entry.name || io.key };
      if (!tfKnowsType(out.data_type)) out.data_type = CONFIG_TYPES[io.dtype] ?? 'TYPE_INVALID';
      if ((out.dims?.length ?? 0) === 0) {
        if (io.dims.length === 0) {
          this.error(
            'tensorflow-autofill-rank',
            `Unable to autofill for '${this.name}': the rank of model tensor '${io.key}' is 0 and dimensions are not defined. ` +
              `Give '${io.key}' dims in the config (signature '${sig.key}' of ${this.file} has no shape for it).`,
            this.r.at(entry.name ? entry : config, entry.name ? 'name' : 'input'),
          );
          return undefined;
        }
        const dims = io.dims.slice(supportsBatching ? 1 : 0).map((d) => BigInt(d));
        out.dims = dims.length ? dims : [1n];
        if (!dims.length) out.reshape = { shape: [] };
      }
      return out;
    };

    // FixConfigInputs :1527-1634: listed inputs are filled in, and every signature input the config does not name
    // (as an input, a batch input's target or a sequence control) is appended.
    const remaining = [...sig.inputs];
    const take = (name: string | undefined) => {
      const i = remaining.findIndex((io) => io.key === name);
      return i < 0 ? undefined : remaining.splice(i, 1)[0];
    };
    const inputs: Io[] = [];
    for (const entry of config.input ?? []) {
      const io = take(entry.name);
      if (!io) {
        inputs.push(entry);
        continue;
      }
      const filled = fill(io, entry);
      if (!filled) return undefined;
      inputs.push(filled);
    }
    for (const b of config.batch_input ?? []) for (const t of b.target_name ?? []) take(t);
    for (const c of config.sequence_batching?.control_input ?? []) take(c.name);
    for (const io of remaining) {
      const filled = fill(io, {});
      if (!filled) return undefined;
      inputs.push(filled);
    }

    // FixConfigOutputs :1637-1720: an empty list becomes the signature's outputs; listed ones are filled in.
    let outputs: Io[];
    if ((config.output?.length ?? 0) === 0) {
      outputs = [];
      for (const io of sig.outputs) {
        if (io.dims.length === 0) {
          this.error(
            'tensorflow-autofill-rank',
            `Unable to autofill for '${this.name}': the rank of model tensor '${io.key}' is 0 which is not supported. ` +
              `List the outputs in the config with their dims (signature '${sig.key}' of ${this.file} has no shape for '${io.key}').`,
            this.r.at(config, 'output'),
          );
          return undefined;
        }
        const dims = io.dims.slice(supportsBatching ? 1 : 0).map((d) => BigInt(d));
        outputs.push({
          name: io.key,
          data_type: CONFIG_TYPES[io.dtype] ?? 'TYPE_INVALID',
          dims: dims.length ? dims : [1n],
          ...(dims.length ? {} : { reshape: { shape: [] } }),
        });
      }
    } else {
      // Errors of FillMissingValues are ignored here (:1714).
      outputs = (config.output ?? []).map((entry) => {
        const io = sig.outputs.find((o) => o.key === entry.name);
        return (io && (io.dims.length > 0 || (entry.dims?.length ?? 0) > 0) ? fill(io, entry) : undefined) ?? entry;
      });
    }
    return {
      ...config,
      max_batch_size: maxBatchSize,
      ...(dynamicBatching ? { dynamic_batching: dynamicBatching } : {}),
      input: inputs,
      output: outputs,
    };
  }

  /** FixBatchingSupport :1231-1426. */
  private fixBatching(
    config: ModelConfig,
  ): { maxBatchSize: number; supportsBatching: boolean; dynamicBatching: ModelConfig['dynamic_batching'] } | undefined {
    const sig = this.signature;
    const sigSupportsBatch = [...sig.inputs, ...sig.outputs].every((io) => io.dims.length === 0 || io.dims[0] === -1);
    let maxBatchSize = config.max_batch_size ?? 0;
    if (!sigSupportsBatch && maxBatchSize > 0) {
      const fixed = [...sig.inputs, ...sig.outputs].filter((io) => io.dims.length > 0 && io.dims[0] !== -1);
      this.error(
        'tensorflow-autofill-batching',
        `unable to autofill for '${this.name}', configuration specified max-batch ${maxBatchSize} but model signature does ` +
          `not support batching. In signature '${sig.key}' of ${this.file}, ` +
          `${fixed.map((io) => `'${io.key}' has shape ${shape(io.dims)}`).join(', ')}: set max_batch_size: 0 and give ` +
          'full shapes, or export the model with a variable (None) first dimension.',
        this.r.at(config, 'max_batch_size'),
      );
      return undefined;
    }
    let hint = false;
    if (sigSupportsBatch) {
      const lists = [
        [config.input ?? [], sig.inputs],
        [config.output ?? [], sig.outputs],
      ] as const;
      if (lists[0][0].length > 0 || lists[1][0].length > 0) {
        let explicit: 'unset' | 'true' | 'false' = 'unset';
        let ragged = false;
        for (const [configList, modelList] of lists) {
          for (const io of configList) {
            if (ragged) break;
            if ((io as ModelInputConfig).allow_ragged_batch) {
              ragged = true;
              hint = true;
              continue;
            }
            if (!io.name) continue;
            const dims = io.reshape ? (io.reshape.shape ?? []) : (io.dims ?? []);
            const tensor = modelList.find((t) => t.key === io.name);
            if (!tensor) continue;
            const modelExplicit = tensor.dims.length > 0;
            if (modelExplicit && dims.length === 0 && explicit === 'unset') hint = true;
            else if (modelExplicit && dims.length > 0) {
              const says = dims.length === tensor.dims.length - 1 ? 'true' : 'false';
              if (explicit !== 'unset' && explicit !== says) {
                this.error(
                  'tensorflow-autofill-contradiction',
                  `unable to autofill for '${this.name}', model tensor configurations are contradicting each other in ` +
                    `terms of whether batching is supported: the dims of '${io.name}' ${says === 'true' ? 'leave out' : 'include'} ` +
                    `the batch dimension of its shape ${shape(tensor.dims)} in ${this.file}, and an earlier tensor's do not.`,
                  this.r.at(io, io.reshape ? 'reshape' : 'dims'),
                );
                return undefined;
              }
              explicit = says;
              hint = says === 'true';
            }
          }
        }
      } else {
        hint = true;
      }
    }
    const supportsBatching = hint && this.defaultMaxBatchSize > 0;
    if (maxBatchSize === 0) maxBatchSize = supportsBatching ? Math.max(this.defaultMaxBatchSize, 0) : 0;
    const dynamicBatching =
      maxBatchSize > 1 && !config.sequence_batching && !config.dynamic_batching ? {} : config.dynamic_batching;
    return { maxBatchSize, supportsBatching, dynamicBatching };
  }

  /** savedmodel::ValidateTRITONTFModel (:252-472), on the completed config. */
  private validate(config: ModelConfig): void {
    const sig = this.signature;
    const mbs = config.max_batch_size ?? 0;
    const byKey = new Map(sig.inputs.map((io) => [io.key, io]));
    const inputs = config.input ?? [];
    let expected = inputs.length + (config.batch_input?.length ?? 0);
    for (const control of sequenceControls(config)) {
      const at = this.r.at(control.at, 'name');
      const tensor = byKey.get(control.name);
      expected += 1;
      if (!tensor) {
        this.error(
          'tensorflow-sequence-control-missing',
          `configuration specified sequence control '${control.name}', but model does not provide that input. ` +
            `Signature '${sig.key}' of ${this.file} takes ${sortedNames(byKey.keys()) || 'no inputs'}.`,
          at,
        );
        continue;
      }
      const dimsError = compareDims(this.name, control.name, tensor.dims, [1n], mbs > 0, true);
      if (dimsError) {
        const message = `unable to load model '${this.name}', sequence control '${control.name}': ${dimsError}`;
        this.error('tensorflow-sequence-control-dims', message, at);
      } else if (control.dataType && CONFIG_TYPES[tensor.dtype] !== control.dataType) {
        this.error(
          'tensorflow-sequence-control-type',
          `unable to load model '${this.name}', sequence control '${control.name}': the model expects ` +
            `${providedType(tensor.dtype)} but the model configuration specifies data-type ${control.dataType}`,
          at,
        );
      }
    }
    let unknown = false;
    for (const io of inputs) {
      if (!io.name || byKey.has(io.name)) continue;
      unknown = true;
      this.error(
        'tensorflow-unknown-input',
        `unexpected inference input '${io.name}', allowed inputs are: ${sortedNames(byKey.keys())}. ` +
          `(The inputs of signature '${sig.key}' of ${this.file}.)`,
        this.pos(io, 'input', 'name'),
      );
    }
    if (unknown) return;
    if (byKey.size !== expected) {
      this.error(
        'tensorflow-input-count',
        `unable to load model '${this.name}', configuration expects ${expected} inputs, model provides ${byKey.size}. ` +
          `Signature '${sig.key}' of ${this.file} takes ${sortedNames(byKey.keys()) || 'no inputs'}.`,
        this.r.at(config, 'input'),
      );
      return;
    }
    for (const io of inputs) {
      const tensor = byKey.get(io.name ?? '');
      if (!tensor) continue;
      const dims = io.reshape ? (io.reshape.shape ?? []) : (io.dims ?? []);
      const at = this.pos(io, 'input', io.reshape ? 'reshape' : 'dims');
      if (tensor.dims.length !== 0) {
        if (io.allow_ragged_batch) {
          if (tensor.dims.length !== 1 || tensor.dims[0] !== -1) {
            this.error(
              'tensorflow-ragged-input',
              `unable to load model '${this.name}', configuration expects model provides input with shape [-1]  ` +
                `for ragged input '${io.name}', model provides ${shape(tensor.dims)}`,
              this.pos(io, 'input', 'allow_ragged_batch'),
            );
            continue;
          }
        } else {
          const dimsError = compareDims(this.name, io.name!, tensor.dims, dims, mbs > 0, false);
          if (dimsError) {
            this.error('tensorflow-dims', dimsError, at);
            continue;
          }
        }
      }
      this.sameType(io, tensor, 'input', this.pos(io, 'input', 'data_type'));
    }
    const outputs = new Map(sig.outputs.map((io) => [io.key, io]));
    const batchOutputs = new Set((config.batch_output ?? []).flatMap((b) => b.target_name ?? []));
    for (const io of config.output ?? []) {
      const tensor = outputs.get(io.name ?? '');
      if (!tensor) {
        if (!io.name) continue;
        this.error(
          'tensorflow-unknown-output',
          `unexpected inference output '${io.name}', allowed outputs are: ${sortedNames(outputs.keys())}. ` +
            `(The outputs of signature '${sig.key}' of ${this.file}.)`,
          this.pos(io, 'output', 'name'),
        );
        return;
      }
      const dims = io.reshape ? (io.reshape.shape ?? []) : (io.dims ?? []);
      if (tensor.dims.length !== 0 && !batchOutputs.has(io.name!)) {
        const dimsError = compareDims(this.name, io.name!, tensor.dims, dims, mbs > 0, true);
        if (dimsError) {
          this.error('tensorflow-dims', dimsError, this.pos(io, 'output', io.reshape ? 'reshape' : 'dims'));
          continue;
        }
      }
      this.sameType(io, tensor, 'output', this.pos(io, 'output', 'data_type'));
    }
  }

  private sameType(
    io: ModelInputConfig | ModelOutputConfig,
    tensor: TfTensorInfo,
    kind: 'input' | 'output',
    at: SourcePosition | undefined,
  ): void {
    const configType = io.data_type ?? 'TYPE_INVALID';
    // CompareDataType (tensorflow_utils.cc:165-174): a type the backend does not know never matches.
    if (tfKnowsType(configType) && CONFIG_TYPES[tensor.dtype] === configType) return;
    this.error(
      `tensorflow-${kind}-data-type`,
      `unable to load model '${this.name}', configuration expects datatype ${configType} for ${kind} '${io.name}', ` +
        `model provides ${providedType(tensor.dtype)}`,
      at,
    );
  }
}

/** CompareDims (tensorflow_utils.cc:49-127): the backend's message, or undefined when the shapes agree. */
function compareDims(
  model: string,
  tensor: string,
  modelDims: readonly number[],
  dims: readonly bigint[],
  batching: boolean,
  exact: boolean,
): string | undefined {
  const agrees = (full: readonly bigint[]) =>
    modelDims.length === full.length && full.every((d, i) => (!exact && modelDims[i] === -1) || BigInt(modelDims[i]!) === d);
  if (batching) {
    if (modelDims.length === 0 || modelDims[0] !== -1) {
      return (
        `model '${model}', tensor '${tensor}': for the model to support batching the shape should have at least 1 ` +
        `dimension and the first dimension must be -1; but shape expected by the model is ${shape(modelDims)}`
      );
    }
    const full = [-1n, ...dims];
    if (agrees(full)) return undefined;
    return (
      `model '${model}', tensor '${tensor}': the model expects ${modelDims.length} dimensions (shape ${shape(modelDims)}) ` +
      `but the model configuration specifies ${full.length} dimensions (an initial batch dimension because ` +
      `max_batch_size > 0 followed by the explicit tensor shape, making complete shape ${shape(full)})`
    );
  }
  if (agrees(dims)) return undefined;
  return (
    `model '${model}', tensor '${tensor}': the model expects ${modelDims.length} dimensions (shape ${shape(modelDims)}) ` +
    `but the model configuration specifies ${dims.length} dimensions (shape ${shape(dims)})`
  );
}
