// Reads what a serving runtime needs to know of an ONNX model — the graph's inputs, outputs and initializer names —
// straight from the protobuf wire format, without a runtime and without reading the weights: length-delimited fields
// that are not needed (nodes, initializer data, docs) are skipped by moving the file position, so a 10 GB model costs
// a few small reads. Field numbers are those of onnx/onnx.proto (ModelProto, GraphProto, ValueInfoProto, TypeProto,
// TensorShapeProto, TensorProto). The reader knows nothing of Triton; lib/repository/onnx-rules.ts applies Triton's
// onnxruntime backend to what it returns.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** A file open for positioned reads (lib/repository/model-files.ts gives one per model file). */
export interface ByteSource {
  readonly size: number;
  /** Reads up to `length` bytes at `position` into the start of `buffer`; returns how many were read. */
  read(buffer: Buffer, length: number, position: number): number;
}

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

/** Thrown inside the reader only; readOnnxModel turns it into `{ ok: false }`. */
class NotOnnx extends Error {}

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;
/** Bytes fetched when reading on from the last read: runs of small fields (nodes, value infos) come in few reads. */
const WINDOW = 16 * 1024;
/** Bytes fetched after a skip: enough for the next tensor's header (name, dims), little of the weights after it. */
const AFTER_SKIP = 512;

/**
 * A forward cursor over a file with a small read window. `skip` moves the position without reading, so the bytes
 * of skipped fields are only read when they happen to share a window with fields that are needed.
 */
/** One read window for all cursors: reading is synchronous, and a 16 KiB allocation per model costs (10,000 models). */
const SHARED_WINDOW = Buffer.allocUnsafe(WINDOW);

class FileCursor {
  pos = 0;
  bytesRead = 0;
  private readonly buf = SHARED_WINDOW;
  private bufStart = 0;
  private bufEnd = 0;

  readonly size: number;

  constructor(private readonly source: ByteSource) {
    this.size = source.size;
  }

  private fill(at: number): void {
    const want = at === this.bufEnd ? WINDOW : AFTER_SKIP;
    const n = this.source.read(this.buf, Math.min(want, this.size - at), at);
    if (n <= 0) throw new NotOnnx('the file ends early');
    this.bytesRead += n;
    this.bufStart = at;
    this.bufEnd = at + n;
  }

  byte(limit: number): number {
    if (this.pos >= limit) throw new NotOnnx('a field runs past the end of its message');
    if (this.pos < this.bufStart || this.pos >= this.bufEnd) this.fill(this.pos);
    return this.buf[this.pos++ - this.bufStart]!;
  }

  /** A varint as a JS number: exact below 2^53, and int64 values read as two's complement (-1 is -1). */
  varint(limit: number): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      const b = this.byte(limit);
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    // Eight bytes or more: large or negative 64-bit values, done exactly in BigInt (rare: dims are small).
    let big = BigInt(result);
    let shift = 49n;
    for (let i = 7; i < 10; i++) {
      const b = this.byte(limit);
      big |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return Number(BigInt.asIntN(64, big));
      shift += 7n;
    }
    throw new NotOnnx('a varint is longer than 10 bytes');
  }

  bytes(length: number, limit: number): Buffer {
    if (this.pos + length > limit) throw new NotOnnx('a field runs past the end of its message');
    const out = Buffer.allocUnsafe(length);
    let done = 0;
    while (done < length) {
      if (this.pos < this.bufStart || this.pos >= this.bufEnd) this.fill(this.pos);
      const n = Math.min(length - done, this.bufEnd - this.pos);
      this.buf.copy(out, done, this.pos - this.bufStart, this.pos - this.bufStart + n);
      this.pos += n;
      done += n;
    }
    return out;
  }

  skip(length: number, limit: number): void {
    if (length < 0 || this.pos + length > limit) throw new NotOnnx('a field runs past the end of its message');
    this.pos += length;
  }
}

/** Iterates the fields of a message that ends at `end`, calling `onField` for each; unknown fields are skipped. */
function fields(c: FileCursor, end: number, onField: (field: number, wire: number) => boolean): void {
  while (c.pos < end) {
    const tag = c.varint(end);
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 0) throw new NotOnnx('field number 0');
    if (onField(field, wire)) continue;
    skipValue(c, wire, end);
  }
  if (c.pos !== end) throw new NotOnnx('a message ends inside a field');
}

function skipValue(c: FileCursor, wire: number, end: number): void {
  switch (wire) {
    case WIRE_VARINT:
      c.varint(end);
      return;
    case WIRE_I64:
      c.skip(8, end);
      return;
    case WIRE_LEN:
      c.skip(c.varint(end), end);
      return;
    case WIRE_I32:
      c.skip(4, end);
      return;
    default:
      // Groups (3, 4) do not occur in onnx.proto; 6 and 7 are not wire types.
      throw new NotOnnx(`wire type ${wire}`);
  }
}

/** The end offset of a length-delimited field that starts at the cursor. */
function messageEnd(c: FileCursor, wire: number, end: number): number {
  if (wire !== WIRE_LEN) throw new NotOnnx('a message field is not length-delimited');
  const length = c.varint(end);
  if (length < 0 || c.pos + length > end) throw new NotOnnx('a message runs past the end of the file');
  return c.pos + length;
}

function string(c: FileCursor, wire: number, end: number): string {
  if (wire !== WIRE_LEN) throw new NotOnnx('a string field is not length-delimited');
  const length = c.varint(end);
  return c.bytes(length, end).toString('utf8');
}

function int(c: FileCursor, wire: number, end: number): number {
  if (wire !== WIRE_VARINT) throw new NotOnnx('an integer field is not a varint');
  return c.varint(end);
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
    if (err instanceof NotOnnx) return { ok: false, reason: `is not an ONNX model: its protobuf encoding breaks off (${err.message})` };
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
  if (!graph) throw new NotOnnx('no graph');
  if (irVersion <= 0) throw new NotOnnx('no ir_version');
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
      c.skip(valueEnd - c.pos, valueEnd);
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
