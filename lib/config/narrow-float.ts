// FP16 (IEEE binary16) and BF16 (bfloat16) bit patterns from and to JavaScript numbers, for the tensor data types
// that have no typed array. Both conversions round the double directly, half to even, instead of going through
// float32, which would round twice; results below the smallest normal become subnormals, results too large become
// infinity, and NaN stays NaN (as the canonical quiet NaN).
//
// tritonclient rounds differently for BF16: `serialize_bf16_tensor` keeps the high half of the float32
// (client src/python/library/tritonclient/utils/__init__.py:329, `struct.pack("<f", obj)[2:4]`), which truncates,
// so a value sent by both can differ in the last bit of the BF16 mantissa (docs/live-endpoint.md says so).

interface NarrowFloat {
  readonly exponentBits: number;
  readonly mantissaBits: number;
}

const FLOAT16: NarrowFloat = { exponentBits: 5, mantissaBits: 10 };
const BFLOAT16: NarrowFloat = { exponentBits: 8, mantissaBits: 7 };

/** The FP16 bit pattern nearest to `value` (ties to even). */
export function float16Bits(value: number): number {
  return narrowFloatBits(value, FLOAT16);
}

/** The BF16 bit pattern nearest to `value` (ties to even). */
export function bfloat16Bits(value: number): number {
  return narrowFloatBits(value, BFLOAT16);
}

/** The exact value of an FP16 bit pattern. */
export function float16Value(bits: number): number {
  return narrowFloatValue(bits, FLOAT16);
}

/** The exact value of a BF16 bit pattern. */
export function bfloat16Value(bits: number): number {
  return narrowFloatValue(bits, BFLOAT16);
}

function narrowFloatBits(value: number, format: NarrowFloat): number {
  const { exponentBits, mantissaBits } = format;
  const signBit = value < 0 || Object.is(value, -0) ? 1 << (exponentBits + mantissaBits) : 0;
  const maxExponentField = (1 << exponentBits) - 1;
  if (Number.isNaN(value)) return (maxExponentField << mantissaBits) | (1 << (mantissaBits - 1));
  const magnitude = Math.abs(value);
  const infinity = signBit | (maxExponentField << mantissaBits);
  if (magnitude === Infinity) return infinity;

  const bias = (1 << (exponentBits - 1)) - 1;
  const minNormalExponent = 1 - bias;
  if (magnitude < 2 ** minNormalExponent) {
    // Subnormal: a multiple of the smallest subnormal; rounding up to 2^mantissaBits yields the smallest normal,
    // whose encoding is exactly that integer.
    return signBit | roundHalfToEven(magnitude / 2 ** (minNormalExponent - mantissaBits));
  }
  let exponent = binaryExponent(magnitude);
  let significand = roundHalfToEven(magnitude / 2 ** (exponent - mantissaBits));
  if (significand === 2 ** (mantissaBits + 1)) {
    exponent += 1;
    significand = 2 ** mantissaBits;
  }
  if (exponent > bias) return infinity;
  return signBit | ((exponent + bias) << mantissaBits) | (significand - 2 ** mantissaBits);
}

function narrowFloatValue(bits: number, format: NarrowFloat): number {
  const { exponentBits, mantissaBits } = format;
  const sign = bits & (1 << (exponentBits + mantissaBits)) ? -1 : 1;
  const exponentField = (bits >> mantissaBits) & ((1 << exponentBits) - 1);
  const mantissa = bits & ((1 << mantissaBits) - 1);
  const bias = (1 << (exponentBits - 1)) - 1;
  if (exponentField === (1 << exponentBits) - 1) return mantissa ? NaN : sign * Infinity;
  if (exponentField === 0) return sign * mantissa * 2 ** (1 - bias - mantissaBits);
  return sign * (2 ** mantissaBits + mantissa) * 2 ** (exponentField - bias - mantissaBits);
}

/** floor(log2(x)) for a positive finite double, read from its exponent bits (Math.log2 can be off by one). */
function binaryExponent(magnitude: number): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, magnitude);
  const field = (view.getUint16(0) >> 4) & 0x7ff;
  if (field === 0) return binaryExponent(magnitude * 2 ** 64) - 64;
  return field - 1023;
}

/** Rounds a non-negative double to an integer, ties to even. The inputs here are exact scalings by powers of two. */
function roundHalfToEven(x: number): number {
  const floor = Math.floor(x);
  const fraction = x - floor;
  if (fraction > 0.5) return floor + 1;
  if (fraction < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}
