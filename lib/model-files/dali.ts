// Reads a serialized DALI pipeline (model.dali) without DALI: where each operator runs (on the CPU, or on the GPU:
// "gpu" and "mixed" operators), the pipeline's inputs (its input operators, ExternalSource above all, with the dtype
// and ndim they declare) and its outputs (name, device, declared dtype and ndim), as the DALI backend asks them of
// DALI. Field numbers are those of NVIDIA/DALI:dali/pipeline/proto/dali.proto @ 30daeeb: PipelineDef.batch_size = 2
// (:60), op = 5 (:66), external_inputs = 6 (:72, legacy pipelines), pipe_outputs = 7 (:75); OpDef.name = 1 (:45, the
// schema), output = 3 (:48), args = 4 (:50), inst_name = 5 (:52); InputOutput.name = 1, device = 2, dtype = 5,
// ndim = 6 (:34-39, -1 when not declared); Argument.name = 1, ints = 4, strings = 5 (:21-25). Every other field
// (floats, extra_args: a big constant's values) is skipped without being read.

import { FileCursor, fields, int, messageEnd, skipTo, string, WireError, type ByteSource } from './protobuf-wire';

/** One operator of the pipeline: its schema name, the device it was added with, and what an input operator declares. */
export interface DaliOperator {
  readonly name: string;
  /** The `device` argument ("cpu", "gpu", "mixed"), or, when it is absent, "gpu" if an output is on the GPU, else "cpu". */
  readonly device: string;
  /** The instance name (OpDef.inst_name): an ExternalSource's `name`, which is the pipeline input's name. */
  readonly instName?: string;
  /** The `dtype` argument (a DALIDataType number), when given. */
  readonly dtype?: number;
  /** The `ndim` argument, when given. */
  readonly ndim?: number;
  /** The `layout` argument, when given. */
  readonly layout?: string;
}

/** One output of the pipeline (PipelineDef.pipe_outputs). */
export interface DaliPipelineOutput {
  /** The data node's name: the producing operator's name (its `name` argument, or DALI's `__<Schema>_<id>`). */
  readonly name: string;
  readonly device: string;
  /** The declared DALIDataType (the pipeline's output_dtype), -1 (DALI_NO_TYPE) when none was declared. */
  readonly dtype: number;
  /** The declared number of dimensions (output_ndim), -1 when none was declared. */
  readonly ndim: number;
}

/** One input of the pipeline as the backend lists them (daliGetExternalInputName/Type/Ndim). */
export interface DaliPipelineInput {
  readonly name: string;
  /** DALIDataType, -1 (DALI_NO_TYPE) when the input operator declares none. */
  readonly dtype: number;
  /** -1 when the input operator declares none. */
  readonly ndim: number;
}

export interface DaliPipelineSummary {
  readonly operators: readonly DaliOperator[];
  /** The devices of the pipeline's outputs, in order. */
  readonly outputDevices: readonly string[];
  readonly outputs: readonly DaliPipelineOutput[];
  /** PipelineDef.batch_size: the pipeline's max batch size unless the config gives one. */
  readonly batchSize?: number;
  /** PipelineDef.external_inputs: the inputs of pipelines serialized before ExternalSource became an OpDef. */
  readonly legacyExternalInputs: readonly string[];
}

export type DaliReadResult =
  | { readonly ok: true; readonly pipeline: DaliPipelineSummary }
  | {
      readonly ok: false;
      readonly reason: string;
      /** Whether the file holds a NUL byte in its first 4 KiB: no python source does, so the backend cannot autoserialize it. */
      readonly binary?: boolean;
    };

/**
 * Reads a serialized DALI pipeline. Never throws for what the file holds: a file that is not one (a Python pipeline
 * for autoserialization, say) is `ok: false` with the reason. A pipeline without operators is not taken for one:
 * DALI never serializes an empty pipeline, and text read as protobuf may parse into nothing by chance.
 */
export function readDaliPipeline(source: ByteSource): DaliReadResult {
  try {
    if (source.size === 0) return { ok: false, reason: 'is empty' };
    const c = new FileCursor(source);
    const operators: DaliOperator[] = [];
    const outputs: DaliPipelineOutput[] = [];
    const legacyExternalInputs: string[] = [];
    let batchSize: number | undefined;
    fields(c, c.size, (field, wire) => {
      if (field === 2) batchSize = int(c, wire, c.size);
      else if (field === 5) operators.push(readOperator(c, messageEnd(c, wire, c.size)));
      else if (field === 6) legacyExternalInputs.push(string(c, wire, c.size));
      else if (field === 7) outputs.push(readInputOutput(c, messageEnd(c, wire, c.size)));
      else return false;
      return true;
    });
    if (operators.length === 0 || operators.some((op) => op.name === '')) {
      return { ok: false, reason: 'is not a serialized DALI pipeline (no named operators in it)', binary: isBinary(source) };
    }
    return {
      ok: true,
      pipeline: {
        operators,
        outputDevices: outputs.map((o) => o.device),
        outputs,
        ...(batchSize !== undefined ? { batchSize } : {}),
        legacyExternalInputs,
      },
    };
  } catch (err) {
    if (err instanceof WireError) {
      return { ok: false, reason: `is not a serialized DALI pipeline (${err.message})`, binary: isBinary(source) };
    }
    return { ok: false, reason: `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
}

/** Whether the operator or an output of the pipeline needs a GPU. */
export function daliGpuOperators(pipeline: DaliPipelineSummary): DaliOperator[] {
  return pipeline.operators.filter((op) => op.device === 'gpu' || op.device === 'mixed');
}

/** DALIDataType numbers (NVIDIA/DALI dali/core/dali_data_type.h; the C API's dali_data_type_t keeps them). */
export const DALI_UINT8 = 0;

/**
 * The pipeline's inputs as the backend lists them (dali_backend src/dali_executor/dali_pipeline.cc:104-124 through
 * DALI's c_api daliGetExternalInputName/Type/Ndim): the pipeline's input operators (Pipeline::DiscoverInputOperators,
 * the operators that are an InputOperator), kept in a std::map keyed by instance name (Pipeline::input_name), so in
 * byte order of their names. ExternalSource (`_ExternalSource` in older pipelines, renamed on load by
 * DeserializeOpSpec) declares its dtype and ndim by arguments, ndim also by its layout's length (ExternalSource
 * constructor and InferNdim, dali/pipeline/operator/builtin/external_source.h); fn.experimental.inputs.video
 * (`experimental__inputs__Video`) takes UINT8 bytes of one dimension (VideoInput::in_dtype/in_ndim). A legacy
 * PipelineDef.external_inputs name is an ExternalSource that declares nothing (Pipeline::AddExternalInput).
 */
export function daliInputs(pipeline: DaliPipelineSummary): DaliPipelineInput[] {
  const inputs = new Map<string, DaliPipelineInput>();
  for (const name of pipeline.legacyExternalInputs) inputs.set(name, { name, dtype: -1, ndim: -1 });
  for (const op of pipeline.operators) {
    const name = op.instName ?? '';
    if (op.name === 'ExternalSource' || op.name === '_ExternalSource') {
      const ndim = op.ndim ?? (op.layout ? op.layout.length : -1);
      inputs.set(name, { name, dtype: op.dtype ?? -1, ndim });
    } else if (op.name === 'experimental__inputs__Video') {
      inputs.set(name, { name, dtype: DALI_UINT8, ndim: 1 });
    }
  }
  return [...inputs.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The first 4 KiB hold a NUL byte (python refuses such a source: "source code string cannot contain null bytes"). */
function isBinary(source: ByteSource): boolean {
  const head = Buffer.alloc(Math.min(4096, source.size));
  try {
    const n = source.read(head, head.length, 0);
    return head.subarray(0, n).includes(0);
  } catch {
    return false;
  }
}

function readOperator(c: FileCursor, end: number): DaliOperator {
  let name = '';
  let instName: string | undefined;
  let device: string | undefined;
  let gpuOutput = false;
  const declared: { dtype?: number; ndim?: number; layout?: string } = {};
  fields(c, end, (field, wire) => {
    if (field === 1) name = string(c, wire, end);
    else if (field === 3) gpuOutput = readInputOutput(c, messageEnd(c, wire, end)).device === 'gpu' || gpuOutput;
    else if (field === 5) instName = string(c, wire, end);
    else if (field === 4) {
      const arg = readArgument(c, messageEnd(c, wire, end));
      if (arg.name === 'device' && arg.string !== undefined) device = arg.string;
      else if ((arg.name === 'dtype' || arg.name === 'ndim') && arg.int !== undefined) declared[arg.name] = arg.int;
      else if (arg.name === 'layout' && arg.string !== undefined) declared.layout = arg.string;
    } else return false;
    return true;
  });
  return { name, device: device ?? (gpuOutput ? 'gpu' : 'cpu'), ...(instName !== undefined ? { instName } : {}), ...declared };
}

/** The arguments read: the others (a constant's thousands of floats, say) are skipped whole. */
const READ_ARGUMENTS = new Set(['device', 'dtype', 'ndim', 'layout']);

/**
 * Argument: name (1), the first of ints (4, packed or not) and of strings (5). protobuf writes fields in number order,
 * so the name comes first: an argument not read is skipped in one move, however many values it holds.
 */
function readArgument(c: FileCursor, end: number): { name: string; int?: number; string?: string } {
  let name = '';
  let first: number | undefined;
  let text: string | undefined;
  fields(c, end, (field, wire) => {
    if (field === 1) {
      name = string(c, wire, end);
      if (!READ_ARGUMENTS.has(name)) skipTo(c, end);
    }
    else if (field === 4 && wire === 0) first ??= c.varint(end);
    else if (field === 4 && wire === 2) {
      const packedEnd = messageEnd(c, wire, end);
      while (c.pos < packedEnd) {
        const value = c.varint(packedEnd);
        first ??= value;
      }
    } else if (field === 5) text ??= string(c, wire, end);
    else return false;
    return true;
  });
  return { name, ...(first !== undefined ? { int: first } : {}), ...(text !== undefined ? { string: text } : {}) };
}

/** InputOutput: name (1), device (2), dtype (5) and ndim (6), both -1 when absent ([default = -1]). */
function readInputOutput(c: FileCursor, end: number): DaliPipelineOutput {
  let name = '';
  let device = '';
  let dtype = -1;
  let ndim = -1;
  fields(c, end, (field, wire) => {
    if (field === 1) name = string(c, wire, end);
    else if (field === 2) device = string(c, wire, end);
    else if (field === 5) dtype = int(c, wire, end);
    else if (field === 6) ndim = int(c, wire, end);
    else return false;
    return true;
  });
  return { name, device, dtype, ndim };
}
