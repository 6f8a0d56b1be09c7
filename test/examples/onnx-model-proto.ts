// Reads the parts of an ONNX ModelProto that the examples' tests check (IR version, opsets, graph inputs, outputs,
// operators) straight from the protobuf wire format, so the check runs where no python onnx package is installed.
// Field numbers are those of onnx/onnx.proto.

export interface OnnxValueInfo {
  readonly name: string;
  /** TensorProto.DataType: 1 FLOAT, 6 INT32, 7 INT64, 8 STRING, ... */
  readonly elemType: number;
  /** A number for a fixed dimension, the symbol for a named one (`batch`), undefined when neither is set. */
  readonly dims: (number | string | undefined)[];
}

export interface OnnxModelSummary {
  readonly irVersion: number;
  readonly producerName: string;
  readonly opsets: { domain: string; version: number }[];
  readonly graph: {
    readonly nodes: { opType: string; domain: string }[];
    readonly initializers: string[];
    readonly inputs: OnnxValueInfo[];
    readonly outputs: OnnxValueInfo[];
  };
}

export const ONNX_ELEM_TYPES: Readonly<Record<string, number>> = {
  TYPE_FP32: 1,
  TYPE_UINT8: 2,
  TYPE_INT8: 3,
  TYPE_UINT16: 4,
  TYPE_INT16: 5,
  TYPE_INT32: 6,
  TYPE_INT64: 7,
  TYPE_STRING: 8,
  TYPE_BOOL: 9,
  TYPE_FP16: 10,
  TYPE_FP64: 11,
  TYPE_UINT32: 12,
  TYPE_UINT64: 13,
};

type Field = { number: number; varint?: number; bytes?: Uint8Array };

/** Splits one protobuf message into its fields; throws on truncated or malformed input. */
function fields(bytes: Uint8Array): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (at >= bytes.length) throw new Error(`truncated varint at byte ${at}`);
      const b = bytes[at++]!;
      value += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return value;
      scale *= 128;
    }
    throw new Error(`varint longer than 10 bytes at byte ${at}`);
  };
  while (at < bytes.length) {
    const key = varint();
    const number = Math.floor(key / 8);
    const wire = key % 8;
    if (number === 0) throw new Error(`field number 0 at byte ${at}`);
    if (wire === 0) out.push({ number, varint: varint() });
    else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      if (at + size > bytes.length) throw new Error(`truncated fixed-width field ${number}`);
      out.push({ number, bytes: bytes.subarray(at, at + size) });
      at += size;
    } else if (wire === 2) {
      const length = varint();
      if (at + length > bytes.length) throw new Error(`field ${number} claims ${length} bytes, ${bytes.length - at} left`);
      out.push({ number, bytes: bytes.subarray(at, at + length) });
      at += length;
    } else {
      throw new Error(`unsupported wire type ${wire} for field ${number}`);
    }
  }
  return out;
}

const text = (b: Uint8Array | undefined): string => (b ? Buffer.from(b).toString('utf8') : '');
const first = (fs: Field[], n: number): Field | undefined => fs.find((f) => f.number === n);
const all = (fs: Field[], n: number): Field[] => fs.filter((f) => f.number === n);

function valueInfo(bytes: Uint8Array): OnnxValueInfo {
  const f = fields(bytes); // ValueInfoProto: 1 name, 2 type
  const type = first(f, 2)?.bytes;
  const tensor = type ? first(fields(type), 1)?.bytes : undefined; // TypeProto: 1 tensor_type
  const tensorFields = tensor ? fields(tensor) : []; // TypeProto.Tensor: 1 elem_type, 2 shape
  const shape = first(tensorFields, 2)?.bytes;
  const dims = (shape ? all(fields(shape), 1) : []).map((d) => {
    const df = fields(d.bytes!); // Dimension: 1 dim_value, 2 dim_param
    const value = first(df, 1);
    if (value) return value.varint;
    const param = first(df, 2);
    return param ? text(param.bytes) : undefined;
  });
  return { name: text(first(f, 1)?.bytes), elemType: first(tensorFields, 1)?.varint ?? 0, dims };
}

/** Decodes `bytes` as an ONNX ModelProto; throws when they are not one (truncated, or no graph). */
export function readOnnxModel(bytes: Uint8Array): OnnxModelSummary {
  const model = fields(bytes); // 1 ir_version, 2 producer_name, 7 graph, 8 opset_import
  const graphBytes = first(model, 7)?.bytes;
  if (!graphBytes) throw new Error('no graph (ModelProto field 7)');
  const graph = fields(graphBytes); // 1 node, 5 initializer, 11 input, 12 output
  return {
    irVersion: first(model, 1)?.varint ?? 0,
    producerName: text(first(model, 2)?.bytes),
    opsets: all(model, 8).map((o) => {
      const f = fields(o.bytes!); // OperatorSetIdProto: 1 domain, 2 version
      return { domain: text(first(f, 1)?.bytes), version: first(f, 2)?.varint ?? 0 };
    }),
    graph: {
      nodes: all(graph, 1).map((n) => {
        const f = fields(n.bytes!); // NodeProto: 4 op_type, 7 domain
        return { opType: text(first(f, 4)?.bytes), domain: text(first(f, 7)?.bytes) };
      }),
      initializers: all(graph, 5).map((t) => text(first(fields(t.bytes!), 8)?.bytes)), // TensorProto: 8 name
      inputs: all(graph, 11).map((v) => valueInfo(v.bytes!)),
      outputs: all(graph, 12).map((v) => valueInfo(v.bytes!)),
    },
  };
}
