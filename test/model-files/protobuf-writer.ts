// The protobuf wire format's base-128 varint, for the test writers of model files (ONNX, TensorFlow, DALI): negative
// numbers are written as int64 two's complement, in 10 bytes, as protobuf writes them.

export function varint(value: number): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(64, BigInt(value));
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? byte | 0x80 : byte);
  } while (v > 0n);
  return out;
}
