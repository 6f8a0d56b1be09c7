// Files shaped like model weights, for the benchmarks that need a big repository (package, push).
'use strict';
const { randomFillSync } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

/** Writes `sizeMib` MiB to `file` in 4 MiB chunks, each filled by `fill(buffer)`. */
function writeLarge(file, sizeMib, fill) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.allocUnsafe(4 << 20);
  try {
    for (let written = 0; written < sizeMib << 20; written += chunk.length) {
      fill(chunk);
      fs.writeSync(fd, chunk, 0, Math.min(chunk.length, (sizeMib << 20) - written));
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Incompressible bytes, like most trained weights. */
function fillRandom(buffer) {
  randomFillSync(buffer);
}

// fp16 weights of a trained layer: random sign and mantissa, exponents clustered around 2^-4 (|w| ~ 0.01-0.2).
const EXPONENTS = [10, 11, 11, 12, 12, 12, 13, 13, 13, 13, 13, 14, 14, 14, 14, 15];
function fillFp16(buffer) {
  randomFillSync(buffer);
  for (let i = 1; i < buffer.length; i += 2) {
    const r = buffer[i];
    buffer[i] = (r & 0x83) | (EXPONENTS[(r >> 2) & 15] << 2);
  }
}

function mib(bytes) {
  return (bytes / (1 << 20)).toFixed(1);
}

// ---- a real ONNX model around large weights -------------------------------------------------------------------------
// The validator reads model.onnx (lib/model-files/onnx.ts), so a benchmark repository needs a valid ModelProto, not
// random bytes: one initializer holding the weights, the graph's inputs and outputs, written in protobuf wire format
// (field numbers of onnx/onnx.proto). The weights are streamed into the initializer's raw_data like writeLarge does.

function varint(n) {
  const bytes = [];
  let v = BigInt(n);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v > 0n);
  return Buffer.from(bytes);
}
const key = (field, wire) => varint((field << 3) | wire);
const varintField = (field, n) => Buffer.concat([key(field, 0), varint(n)]);
const lenField = (field, payload) => Buffer.concat([key(field, 2), varint(payload.length), payload]);
const stringField = (field, text) => lenField(field, Buffer.from(text, 'utf8'));

/** ValueInfoProto of a tensor: `dims` numbers, or strings for named (batch) dimensions. */
function valueInfo(name, elemType, dims) {
  const dim = (d) => lenField(1, typeof d === 'string' ? stringField(2, d) : varintField(1, d));
  const shape = lenField(2, Buffer.concat(dims.map(dim)));
  const tensorType = lenField(1, Buffer.concat([varintField(1, elemType), shape]));
  return Buffer.concat([stringField(1, name), lenField(2, tensorType)]);
}

/**
 * Writes a valid ONNX model to `file`: `inputs` and `outputs` as [name, elemType, dims], and one FLOAT16 initializer
 * of `weightsMib` MiB filled by `fill`. The graph has no nodes: the validator and the packer read only its interface.
 */
function writeOnnxModel(file, { inputs, outputs, weightsMib, fill }) {
  const weightBytes = weightsMib << 20;
  const tensorHead = Buffer.concat([varintField(1, weightBytes / 2), varintField(2, 10), stringField(8, 'weights')]);
  const rawKey = Buffer.concat([key(9, 2), varint(weightBytes)]);
  const tensorLength = tensorHead.length + rawKey.length + weightBytes;
  const io = Buffer.concat([
    ...inputs.map(([name, type, dims]) => lenField(11, valueInfo(name, type, dims))),
    ...outputs.map(([name, type, dims]) => lenField(12, valueInfo(name, type, dims))),
  ]);
  const graphHead = Buffer.concat([stringField(2, 'bench'), key(5, 2), varint(tensorLength), tensorHead, rawKey]);
  const graphLength = graphHead.length + weightBytes + io.length;
  const modelHead = Buffer.concat([
    varintField(1, 8), // ir_version
    stringField(2, 'mme-deploy bench'),
    lenField(8, Buffer.concat([stringField(1, ''), varintField(2, 17)])), // opset_import
    key(7, 2),
    varint(graphLength),
    graphHead,
  ]);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, modelHead);
    const chunk = Buffer.allocUnsafe(4 << 20);
    for (let written = 0; written < weightBytes; written += chunk.length) {
      fill(chunk);
      fs.writeSync(fd, chunk, 0, Math.min(chunk.length, weightBytes - written));
    }
    fs.writeSync(fd, io);
  } finally {
    fs.closeSync(fd);
  }
}

/** TensorProto.DataType numbers the benchmarks use. */
const ONNX = { FLOAT: 1, INT64: 7, FLOAT16: 10 };

module.exports = { writeLarge, writeOnnxModel, ONNX, fillRandom, fillFp16, mib };
