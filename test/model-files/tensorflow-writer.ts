// Writes a minimal TensorFlow GraphDef (nodes with a name and an op, no attributes) for tests that need a model file
// the TensorFlow backend would read without a python process; make_model_files.py writes the fuller ones. Field
// numbers from tensorflow/core/framework/graph.proto (node = 1) and node_def.proto (name = 1, op = 2).

import { varint } from './protobuf-writer';

function lengthDelimited(field: number, bytes: Buffer): Buffer {
  return Buffer.concat([Buffer.from([...varint(field * 8 + 2), ...varint(bytes.length)]), bytes]);
}

/** A GraphDef with these [name, op] nodes. */
export function graphDef(nodes: readonly (readonly [string, string])[]): Buffer {
  return Buffer.concat(
    nodes.map(([name, op]) =>
      lengthDelimited(1, Buffer.concat([lengthDelimited(1, Buffer.from(name, 'utf8')), lengthDelimited(2, Buffer.from(op, 'utf8'))])),
    ),
  );
}

function varintField(field: number, value: number): Buffer {
  return Buffer.from([...varint(field * 8), ...varint(value)]);
}

/** [signature key, tensorflow.DataType number, dims] */
export type TfTensor = readonly [string, number, readonly number[]];

/**
 * A saved_model.pb with one meta graph tagged `serve` whose `serving_default` signature has these inputs and outputs
 * (saved_model.proto: meta_graphs = 2; meta_graph.proto: meta_info_def = 1 (tags = 4), signature_def = 5; SignatureDef:
 * inputs = 1, outputs = 2; TensorInfo: name = 1, dtype = 2, tensor_shape = 3 (dim = 2, size = 1)).
 */
export function savedModel(inputs: readonly TfTensor[], outputs: readonly TfTensor[]): Buffer {
  const text = (s: string) => Buffer.from(s, 'utf8');
  const info = ([key, dtype, dims]: TfTensor, field: number) =>
    lengthDelimited(
      field,
      Buffer.concat([
        lengthDelimited(1, text(key)),
        lengthDelimited(
          2,
          Buffer.concat([
            lengthDelimited(1, text(`${key}:0`)),
            varintField(2, dtype),
            lengthDelimited(3, Buffer.concat(dims.map((d) => lengthDelimited(2, varintField(1, d))))),
          ]),
        ),
      ]),
    );
  const signature = Buffer.concat([...inputs.map((i) => info(i, 1)), ...outputs.map((o) => info(o, 2))]);
  const metaGraph = Buffer.concat([
    lengthDelimited(1, lengthDelimited(4, text('serve'))),
    lengthDelimited(5, Buffer.concat([lengthDelimited(1, text('serving_default')), lengthDelimited(2, signature)])),
  ]);
  return Buffer.concat([varintField(1, 1), lengthDelimited(2, metaGraph)]);
}
