// Reads where each operator of a serialized DALI pipeline (model.dali) runs: on the CPU, or on the GPU ("gpu" and
// "mixed" operators), without DALI. Field numbers are those of NVIDIA/DALI:dali/pipeline/proto/dali.proto @ 020a35a:
// PipelineDef.op = 5 (OpDef), OpDef.name = 1, OpDef.output = 3 and PipelineDef.pipe_outputs = 7 (InputOutput, whose
// device = 2), OpDef.args = 4 (Argument: name = 1, strings = 5; the operator's own "device" is one of them).

import { FileCursor, fields, messageEnd, string, WireError, type ByteSource } from './protobuf-wire';

/** One operator of the pipeline: its schema name and the device it was added with. */
export interface DaliOperator {
  readonly name: string;
  /** The `device` argument ("cpu", "gpu", "mixed"), or, when it is absent, "gpu" if an output is on the GPU, else "cpu". */
  readonly device: string;
}

export interface DaliPipelineSummary {
  readonly operators: readonly DaliOperator[];
  /** The devices of the pipeline's outputs, in order. */
  readonly outputDevices: readonly string[];
}

export type DaliReadResult =
  | { readonly ok: true; readonly pipeline: DaliPipelineSummary }
  | { readonly ok: false; readonly reason: string };

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
    const outputDevices: string[] = [];
    fields(c, c.size, (field, wire) => {
      if (field === 5) {
        operators.push(readOperator(c, messageEnd(c, wire, c.size)));
        return true;
      }
      if (field === 7) {
        outputDevices.push(readDevice(c, messageEnd(c, wire, c.size)));
        return true;
      }
      return false;
    });
    if (operators.length === 0 || operators.some((op) => op.name === '')) {
      return { ok: false, reason: 'is not a serialized DALI pipeline (no named operators in it)' };
    }
    return { ok: true, pipeline: { operators, outputDevices } };
  } catch (err) {
    if (err instanceof WireError) return { ok: false, reason: `is not a serialized DALI pipeline (${err.message})` };
    return { ok: false, reason: `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
}

/** Whether an operator or an output of the pipeline needs a GPU. */
export function daliGpuOperators(pipeline: DaliPipelineSummary): DaliOperator[] {
  return pipeline.operators.filter((op) => op.device === 'gpu' || op.device === 'mixed');
}

function readOperator(c: FileCursor, end: number): DaliOperator {
  let name = '';
  let device: string | undefined;
  let gpuOutput = false;
  fields(c, end, (field, wire) => {
    if (field === 1) name = string(c, wire, end);
    else if (field === 3) gpuOutput = readDevice(c, messageEnd(c, wire, end)) === 'gpu' || gpuOutput;
    else if (field === 4) {
      const argEnd = messageEnd(c, wire, end);
      let argName = '';
      let first: string | undefined;
      fields(c, argEnd, (f, w) => {
        if (f === 1) argName = string(c, w, argEnd);
        else if (f === 5) first ??= string(c, w, argEnd);
        else return false;
        return true;
      });
      if (argName === 'device' && first !== undefined) device = first;
    } else return false;
    return true;
  });
  return { name, device: device ?? (gpuOutput ? 'gpu' : 'cpu') };
}

/** InputOutput.device (field 2). */
function readDevice(c: FileCursor, end: number): string {
  let device = '';
  fields(c, end, (field, wire) => {
    if (field !== 2) return false;
    device = string(c, wire, end);
    return true;
  });
  return device;
}
