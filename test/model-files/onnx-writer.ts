// Writes minimal ONNX models (a graph with typed inputs and outputs, no nodes) for rule tests that need a model file
// Triton's onnxruntime backend would read. The reader (lib/model-files/onnx.ts) is tested against models written by
// python's onnx package; this writer only saves those tests a python process. Field numbers from onnx/onnx.proto.

import { varint } from './protobuf-writer';

/** [name, TensorProto.DataType, dims (number = dim_value, string = dim_param)] */
export type TensorSpec = readonly [string, number, readonly (number | string)[]];

export const FLOAT = 1;
export const INT32 = 6;
export const INT64 = 7;
export const STRING = 8;

function field(number: number, wire: 0 | 2, value: number | number[]): number[] {
  const tag = varint(number * 8 + wire);
  if (wire === 0) return [...tag, ...varint(value as number)];
  const bytes = value as number[];
  return [...tag, ...varint(bytes.length), ...bytes];
}

const text = (s: string) => [...Buffer.from(s, 'utf8')];

function valueInfo([name, elemType, dims]: TensorSpec): number[] {
  const shape = dims.flatMap((d) => field(1, 2, typeof d === 'number' ? field(1, 0, d) : field(2, 2, text(d))));
  const tensorType = [...field(1, 0, elemType), ...field(2, 2, shape)];
  return [...field(1, 2, text(name)), ...field(2, 2, field(1, 2, tensorType))];
}

/** An ONNX ModelProto (IR 8, opset 17) whose graph has these inputs and outputs. */
export function onnxModel(inputs: readonly TensorSpec[], outputs: readonly TensorSpec[]): Buffer {
  const graph = [
    ...field(2, 2, text('test')),
    ...inputs.flatMap((i) => field(11, 2, valueInfo(i))),
    ...outputs.flatMap((o) => field(12, 2, valueInfo(o))),
  ];
  return Buffer.from([...field(1, 0, 8), ...field(7, 2, graph), ...field(8, 2, field(2, 0, 17))]);
}
