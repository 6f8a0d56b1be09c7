// Reads what a serving runtime needs to know of an ONNX model — the graph's inputs, outputs and initializer names —
// straight from the protobuf wire format, without a runtime and without reading the weights: length-delimited fields
// that are not needed (nodes, initializer data, docs) are skipped by moving the file position, so a 10 GB model costs
// a few small reads. Field numbers are those of onnx/onnx.proto (ModelProto, GraphProto, ValueInfoProto, TypeProto,
// TensorShapeProto, TensorProto). The reader knows nothing of Triton; lib/repository/onnx-rules.ts applies Triton's
// onnxruntime backend to what it returns.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { FileCursor, fields, int, messageEnd, skipTo, string, WireError, type ByteSource } from './protobuf-wire';

export type { ByteSource } from './protobuf-wire';

/** TensorProto.DataType numbers. */
export const ONNX_ELEM_TYPES = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  UINT16: 4,
  INT16: 5,
  INT32: 6,
  INT64: 7,
  STRING: 8,
  BOOL: 9,
  FLOAT16: 10,
  DOUBLE: 11,
  UINT32: 12,
  UINT64: 13,
  BFLOAT16: 16,
} as const;

/** What a graph input or output is, as the runtime reports it. */
export interface OnnxValueInfo {
  readonly name: string;
  /** 'tensor' for tensors; other kinds (sequence, map, optional, sparse_tensor) cannot be served by Triton. */
  readonly kind: 'tensor' | 'sequence' | 'map' | 'optional' | 'sparse_tensor' | 'none';
  /** TensorProto.DataType of the elements (0 when not a tensor or not given). */
  readonly elemType: number;
  /** Dimensions as ONNX Runtime reports them: dim_value, or -1 for a named (dim_param) or unknown dimension. */
  readonly dims: readonly number[];
  /** The names of the named dimensions, where there are (same length as dims; '' for the others). */
  readonly dimParams: readonly string[];
}

export interface OnnxModelSummary {
  readonly irVersion: number;
  readonly opsets: readonly { readonly domain: string; readonly version: number }[];
  readonly producerName: string;
  /** graph.input as written (initializers that are also listed here included). */
  readonly graphInputs: readonly OnnxValueInfo[];
  readonly outputs: readonly OnnxValueInfo[];
  /** Names of graph.initializer and graph.sparse_initializer entries. */
  readonly initializers: readonly string[];
  /** `location` of every initializer stored as external data (relative to the model file's directory). */
  readonly externalData: readonly string[];
  /** Bytes actually read from the file (for the benchmark: never the whole of a large file). */
  readonly bytesRead: number;
}

export type OnnxReadResult =
  | { readonly ok: true; readonly model: OnnxModelSummary }
  | { readonly ok: false; readonly reason: string };

/** The inputs a runtime asks for: graph.input without the initializers listed there (those have defaults). */
export function requiredInputs(model: OnnxModelSummary): OnnxValueInfo[] {
  const initializers = new Set(model.initializers);
  return model.graphInputs.filter((i) => !initializers.has(i.name));
}

/** Graph inputs that are initializers: inputs a request may override (ONNX IR version 4 and later). */
export function overridableInitializers(model: OnnxModelSummary): OnnxValueInfo[] {
  if (model.irVersion < 4) return [];
  const initializers = new Set(model.initializers);
  return model.graphInputs.filter((i) => initializers.has(i.name));
}

/** Reads `path` (the model.onnx file) and returns its graph interface, or why it is not an ONNX model. */
export function readOnnxModel(path: string): OnnxReadResult {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    return { ok: false, reason: `cannot be opened (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
  try {
    return readOnnx({ size: fstatSync(fd).size, read: (buffer, length, position) => readSync(fd, buffer, 0, length, position) });
  } finally {
    closeSync(fd);
  }
}

/** Reads an ONNX model from an open file. Never throws for what the file holds; I/O errors are reported as reasons. */
export function readOnnx(source: ByteSource): OnnxReadResult {
  try {
    if (source.size === 0) return { ok: false, reason: 'is empty' };
    return { ok: true, model: readModel(new FileCursor(source)) };
  } catch (err) {
    if (err instanceof WireError) return { ok: false, reason: `is not an ONNX model: its protobuf encoding breaks off (${err.message})` };
    return { ok: false, reason: `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
}

function readModel(c: FileCursor): OnnxModelSummary {
  let irVersion = 0;
  let producerName = '';
  const opsets: { domain: string; version: number }[] = [];
  let graph: Omit<OnnxModelSummary, 'irVersion' | 'opsets' | 'producerName' | 'bytesRead'> | undefined;
  fields(c, c.size, (field, wire) => {
    switch (field) {
      case 1: // ir_version
        irVersion = int(c, wire, c.size);
        return true;
      case 2: // producer_name
        producerName = string(c, wire, c.size);
        return true;
      case 7: // graph
        graph = readGraph(c, messageEnd(c, wire, c.size));
        return true;
      case 8: {
        // opset_import
        const end = messageEnd(c, wire, c.size);
        const opset = { domain: '', version: 0 };
        fields(c, end, (f, w) => {
          if (f === 1) opset.domain = string(c, w, end);
          else if (f === 2) opset.version = int(c, w, end);
          else return false;
          return true;
        });
        opsets.push(opset);
        return true;
      }
      default:
        return false;
    }
  });
  if (!graph) throw new WireError('no graph');
  if (irVersion <= 0) throw new WireError('no ir_version');
  return { irVersion, opsets, producerName, ...graph, bytesRead: c.bytesRead };
}

function readGraph(c: FileCursor, end: number): Omit<OnnxModelSummary, 'irVersion' | 'opsets' | 'producerName' | 'bytesRead'> {
  const graphInputs: OnnxValueInfo[] = [];
  const outputs: OnnxValueInfo[] = [];
  const initializers: string[] = [];
  const externalData: string[] = [];
  fields(c, end, (field, wire) => {
    switch (field) {
      case 5: // initializer (TensorProto)
        readInitializer(c, messageEnd(c, wire, end), initializers, externalData);
        return true;
      case 15: {
        // sparse_initializer (SparseTensorProto): the name is that of its `values` tensor (field 1)
        const sparseEnd = messageEnd(c, wire, end);
        fields(c, sparseEnd, (f, w) => {
          if (f !== 1) return false;
          readInitializer(c, messageEnd(c, w, sparseEnd), initializers, externalData);
          return true;
        });
        return true;
      }
      case 11: // input (ValueInfoProto)
        graphInputs.push(readValueInfo(c, messageEnd(c, wire, end)));
        return true;
      case 12: // output
        outputs.push(readValueInfo(c, messageEnd(c, wire, end)));
        return true;
      default:
        // node (1), value_info (13), doc_string (10), quantization_annotation (14), ...: skipped unread
        return false;
    }
  });
  return { graphInputs, outputs, initializers, externalData };
}

function readInitializer(c: FileCursor, end: number, names: string[], externalData: string[]): void {
  let name = '';
  fields(c, end, (field, wire) => {
    if (field === 8) {
      name = string(c, wire, end);
      return true;
    }
    if (field === 13) {
      // external_data (StringStringEntryProto): key 1, value 2; the file is the entry whose key is "location"
      const entryEnd = messageEnd(c, wire, end);
      let key = '';
      let value = '';
      fields(c, entryEnd, (f, w) => {
        if (f === 1) key = string(c, w, entryEnd);
        else if (f === 2) value = string(c, w, entryEnd);
        else return false;
        return true;
      });
      if (key === 'location' && value && !externalData.includes(value)) externalData.push(value);
      return true;
    }
    return false; // dims, data_type, raw_data (9) and the typed data fields are skipped unread
  });
  names.push(name);
}

function readValueInfo(c: FileCursor, end: number): OnnxValueInfo {
  let name = '';
  let type: Omit<OnnxValueInfo, 'name'> = { kind: 'none', elemType: 0, dims: [], dimParams: [] };
  fields(c, end, (field, wire) => {
    if (field === 1) name = string(c, wire, end);
    else if (field === 2) type = readType(c, messageEnd(c, wire, end));
    else return false;
    return true;
  });
  return { name, ...type };
}

const TYPE_KINDS: Record<number, OnnxValueInfo['kind']> = { 1: 'tensor', 4: 'sequence', 5: 'map', 8: 'sparse_tensor', 9: 'optional' };

function readType(c: FileCursor, end: number): Omit<OnnxValueInfo, 'name'> {
  let result: Omit<OnnxValueInfo, 'name'> = { kind: 'none', elemType: 0, dims: [], dimParams: [] };
  fields(c, end, (field, wire) => {
    const kind = TYPE_KINDS[field];
    if (!kind) return false;
    const valueEnd = messageEnd(c, wire, end);
    if (kind !== 'tensor') {
      skipTo(c, valueEnd);
      result = { kind, elemType: 0, dims: [], dimParams: [] };
      return true;
    }
    let elemType = 0;
    const dims: number[] = [];
    const dimParams: string[] = [];
    fields(c, valueEnd, (f, w) => {
      if (f === 1) elemType = int(c, w, valueEnd);
      else if (f === 2) {
        // TensorShapeProto: repeated Dimension dim = 1; Dimension: dim_value 1 | dim_param 2
        const shapeEnd = messageEnd(c, w, valueEnd);
        fields(c, shapeEnd, (sf, sw) => {
          if (sf !== 1) return false;
          const dimEnd = messageEnd(c, sw, shapeEnd);
          // dim_value and dim_param are a oneof: the last one given wins.
          let value = -1;
          let param = '';
          fields(c, dimEnd, (df, dw) => {
            if (df === 1) {
              value = int(c, dw, dimEnd);
              param = '';
            } else if (df === 2) {
              param = string(c, dw, dimEnd);
              value = -1;
            } else return false;
            return true;
          });
          dims.push(param ? -1 : value);
          dimParams.push(param);
          return true;
        });
      } else return false;
      return true;
    });
    result = { kind, elemType, dims, dimParams };
    return true;
  });
  return result;
}
