// The KServe v2 inference protocol as Triton speaks it on SageMaker: JSON tensors, the binary tensor data extension
// and the `application/vnd.sagemaker-triton.binary+json;json-header-size=N` framing (sagemaker-mme-contract.md §6–7).

import { CliError, UsageError } from '../user-errors';

/** Every tensor datatype of the KServe v2 protocol. */
export const KSERVE_DATATYPES = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'BF16',
  'FP32',
  'FP64',
  'BYTES',
] as const;

export type KServeDatatype = (typeof KSERVE_DATATYPES)[number];

/**
 * One tensor element. Decoded values are typed by datatype: BOOL -> boolean, INT64/UINT64 -> bigint (exact),
 * other numeric types -> number, BYTES -> Uint8Array (the raw bytes; a JSON string is its UTF-8 encoding).
 * Encoders also accept numbers for 64-bit types, decimal strings for 64-bit types, 0/1 for BOOL and strings for BYTES.
 */
export type TensorElement = number | bigint | boolean | string | Uint8Array;

export interface Tensor {
  readonly name: string;
  readonly datatype: KServeDatatype;
  readonly shape: readonly number[];
  /** Row-major elements; their count is the product of `shape`. */
  readonly data: readonly TensorElement[];
  readonly parameters?: Readonly<Record<string, unknown>>;
}

export interface RequestedOutput {
  readonly name: string;
  readonly parameters?: Readonly<Record<string, unknown>>;
}

export interface InferenceRequest {
  readonly id?: string;
  readonly parameters?: Readonly<Record<string, unknown>>;
  readonly inputs: readonly Tensor[];
  readonly outputs?: readonly RequestedOutput[];
}

export interface InferenceResponse {
  readonly model_name?: string;
  readonly model_version?: string;
  readonly id?: string;
  readonly parameters?: Readonly<Record<string, unknown>>;
  readonly outputs: readonly Tensor[];
}

export interface EncodedBody {
  readonly body: Buffer;
  readonly contentType: string;
}

export const JSON_CONTENT_TYPE = 'application/json';
/** SageMaker strips custom headers, so Triton reads the JSON header length from the content type instead. */
export const BINARY_JSON_MIME = 'application/vnd.sagemaker-triton.binary+json';

export function binaryJsonContentType(jsonHeaderSize: number): string {
  return `${BINARY_JSON_MIME};json-header-size=${jsonHeaderSize}`;
}

export function isKServeDatatype(value: string): value is KServeDatatype {
  return (KSERVE_DATATYPES as readonly string[]).includes(value);
}

/** Bytes per element, or undefined for BYTES (variable length). */
export function elementByteSize(datatype: KServeDatatype): number | undefined {
  switch (datatype) {
    case 'BOOL':
    case 'UINT8':
    case 'INT8':
      return 1;
    case 'UINT16':
    case 'INT16':
    case 'FP16':
    case 'BF16':
      return 2;
    case 'UINT32':
    case 'INT32':
    case 'FP32':
      return 4;
    case 'UINT64':
    case 'INT64':
    case 'FP64':
      return 8;
    case 'BYTES':
      return undefined;
  }
}

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((product, dim) => product * dim, 1);
}

// ---------------------------------------------------------------------------------------------------------------
// Half-precision conversions. Both round the double directly (round half to even) instead of going through
// float32, which would round twice; results below the smallest normal become subnormals, results too large become
// infinity, and NaN stays NaN (as the canonical quiet NaN).

interface NarrowFloat {
  readonly exponentBits: number;
  readonly mantissaBits: number;
}

const FLOAT16: NarrowFloat = { exponentBits: 5, mantissaBits: 10 };
const BFLOAT16: NarrowFloat = { exponentBits: 8, mantissaBits: 7 };

export function float16Bits(value: number): number {
  return narrowFloatBits(value, FLOAT16);
}

export function bfloat16Bits(value: number): number {
  return narrowFloatBits(value, BFLOAT16);
}

export function float16Value(bits: number): number {
  return narrowFloatValue(bits, FLOAT16);
}

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

// ---------------------------------------------------------------------------------------------------------------
// Element coercion: what a user or a JSON document may give for each datatype, checked with a message naming the
// tensor and the element.

const INTEGER_RANGES: Partial<Record<KServeDatatype, readonly [bigint, bigint]>> = {
  UINT8: [0n, 0xffn],
  UINT16: [0n, 0xffffn],
  UINT32: [0n, 0xffffffffn],
  UINT64: [0n, 0xffffffffffffffffn],
  INT8: [-0x80n, 0x7fn],
  INT16: [-0x8000n, 0x7fffn],
  INT32: [-0x80000000n, 0x7fffffffn],
  INT64: [-0x8000000000000000n, 0x7fffffffffffffffn],
};

function describe(tensor: string, index: number): string {
  return `element ${index} of tensor '${tensor}'`;
}

function toInteger(value: TensorElement, datatype: KServeDatatype, where: string): bigint {
  let integer: bigint | undefined;
  if (typeof value === 'bigint') integer = value;
  else if (typeof value === 'number' && Number.isInteger(value)) {
    if (!Number.isSafeInteger(value) && (datatype === 'INT64' || datatype === 'UINT64')) {
      throw new CliError(
        `${where} is ${value}, beyond 2^53 where JSON numbers lose precision; write it as a string ("${BigInt(value)}") to send it exactly.`,
      );
    }
    integer = BigInt(value);
  } else if (typeof value === 'boolean') integer = value ? 1n : 0n;
  else if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) integer = BigInt(value.trim());
  if (integer === undefined) {
    throw new CliError(`${where} is ${printable(value)}, but ${datatype} needs an integer.`);
  }
  const [min, max] = INTEGER_RANGES[datatype]!;
  if (integer < min || integer > max) {
    throw new CliError(`${where} is ${integer}, outside the ${datatype} range ${min}..${max}.`);
  }
  return integer;
}

function toFloat(value: TensorElement, datatype: KServeDatatype, where: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') {
    const text = value.trim();
    if (/^[-+]?(nan|inf|infinity)$/i.test(text)) {
      if (/nan/i.test(text)) return NaN;
      return text.startsWith('-') ? -Infinity : Infinity;
    }
    const parsed = Number(text);
    if (text !== '' && !Number.isNaN(parsed)) return parsed;
  }
  throw new CliError(`${where} is ${printable(value)}, but ${datatype} needs a number.`);
}

function toBool(value: TensorElement, where: string): boolean {
  if (typeof value === 'boolean') return value;
  if (value === 0 || value === 1) return value === 1;
  if (value === 0n || value === 1n) return value === 1n;
  throw new CliError(`${where} is ${printable(value)}, but BOOL needs true, false, 0 or 1.`);
}

function toBytes(value: TensorElement, where: string): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  throw new CliError(`${where} is ${printable(value)}, but BYTES needs a string.`);
}

function printable(value: TensorElement): string {
  if (value instanceof Uint8Array) return `${value.length} raw bytes`;
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

// ---------------------------------------------------------------------------------------------------------------
// Binary tensor data: little-endian, row-major, no padding; BYTES elements each carry a 4-byte little-endian length.

/** Encodes elements as the binary tensor data extension lays them out. */
export function encodeTensorData(datatype: KServeDatatype, data: readonly TensorElement[], name = 'input'): Buffer {
  if (datatype === 'BYTES') {
    const parts: Buffer[] = [];
    data.forEach((value, index) => {
      const bytes = toBytes(value, describe(name, index));
      const prefix = Buffer.alloc(4);
      prefix.writeUInt32LE(bytes.length);
      parts.push(prefix, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
    });
    return Buffer.concat(parts);
  }
  const size = elementByteSize(datatype)!;
  const out = Buffer.alloc(size * data.length);
  data.forEach((value, index) => {
    const where = describe(name, index);
    const offset = index * size;
    switch (datatype) {
      case 'BOOL':
        out.writeUInt8(toBool(value, where) ? 1 : 0, offset);
        break;
      case 'UINT8':
        out.writeUInt8(Number(toInteger(value, datatype, where)), offset);
        break;
      case 'UINT16':
        out.writeUInt16LE(Number(toInteger(value, datatype, where)), offset);
        break;
      case 'UINT32':
        out.writeUInt32LE(Number(toInteger(value, datatype, where)), offset);
        break;
      case 'UINT64':
        out.writeBigUInt64LE(toInteger(value, datatype, where), offset);
        break;
      case 'INT8':
        out.writeInt8(Number(toInteger(value, datatype, where)), offset);
        break;
      case 'INT16':
        out.writeInt16LE(Number(toInteger(value, datatype, where)), offset);
        break;
      case 'INT32':
        out.writeInt32LE(Number(toInteger(value, datatype, where)), offset);
        break;
      case 'INT64':
        out.writeBigInt64LE(toInteger(value, datatype, where), offset);
        break;
      case 'FP16':
        out.writeUInt16LE(float16Bits(toFloat(value, datatype, where)), offset);
        break;
      case 'BF16':
        out.writeUInt16LE(bfloat16Bits(toFloat(value, datatype, where)), offset);
        break;
      case 'FP32':
        out.writeFloatLE(toFloat(value, datatype, where), offset);
        break;
      case 'FP64':
        out.writeDoubleLE(toFloat(value, datatype, where), offset);
        break;
    }
  });
  return out;
}

/** Decodes binary tensor data; `count` (from the shape) is checked against the bytes when given. */
export function decodeTensorData(
  datatype: KServeDatatype,
  bytes: Uint8Array,
  count?: number,
  name = 'output',
): TensorElement[] {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (datatype === 'BYTES') {
    const elements: Uint8Array[] = [];
    let offset = 0;
    while (offset < buffer.length) {
      if (offset + 4 > buffer.length) {
        throw new CliError(
          `Tensor '${name}' (BYTES) ends inside the 4-byte length of element ${elements.length} (at byte ${offset} of ${buffer.length}).`,
        );
      }
      const length = buffer.readUInt32LE(offset);
      if (offset + 4 + length > buffer.length) {
        throw new CliError(
          `Tensor '${name}' (BYTES) element ${elements.length} declares ${length} bytes but only ${buffer.length - offset - 4} remain.`,
        );
      }
      elements.push(Uint8Array.prototype.slice.call(buffer, offset + 4, offset + 4 + length));
      offset += 4 + length;
    }
    if (count !== undefined && elements.length !== count) {
      throw new CliError(`Tensor '${name}' (BYTES) holds ${elements.length} elements but its shape needs ${count}.`);
    }
    return elements;
  }
  const size = elementByteSize(datatype)!;
  if (buffer.length % size !== 0 || (count !== undefined && buffer.length !== count * size)) {
    const expected = count === undefined ? `a multiple of ${size}` : `${count * size} (${count} × ${size})`;
    throw new CliError(`Tensor '${name}' (${datatype}) has ${buffer.length} bytes of data; expected ${expected}.`);
  }
  const elements: TensorElement[] = [];
  for (let offset = 0; offset < buffer.length; offset += size) {
    elements.push(readElement(buffer, offset, datatype));
  }
  return elements;
}

function readElement(buffer: Buffer, offset: number, datatype: Exclude<KServeDatatype, 'BYTES'>): TensorElement {
  switch (datatype) {
    case 'BOOL':
      return buffer.readUInt8(offset) !== 0;
    case 'UINT8':
      return buffer.readUInt8(offset);
    case 'UINT16':
      return buffer.readUInt16LE(offset);
    case 'UINT32':
      return buffer.readUInt32LE(offset);
    case 'UINT64':
      return buffer.readBigUInt64LE(offset);
    case 'INT8':
      return buffer.readInt8(offset);
    case 'INT16':
      return buffer.readInt16LE(offset);
    case 'INT32':
      return buffer.readInt32LE(offset);
    case 'INT64':
      return buffer.readBigInt64LE(offset);
    case 'FP16':
      return float16Value(buffer.readUInt16LE(offset));
    case 'BF16':
      return bfloat16Value(buffer.readUInt16LE(offset));
    case 'FP32':
      return buffer.readFloatLE(offset);
    case 'FP64':
      return buffer.readDoubleLE(offset);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// JSON tensor data.

/** Normalises JSON `data` (flat or nested arrays) to the element types `decodeTensorData` returns. */
export function tensorDataFromJson(datatype: KServeDatatype, data: unknown, name = 'output'): TensorElement[] {
  const flat: unknown[] = [];
  const flatten = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(flatten);
    else flat.push(value);
  };
  flatten(data);
  return flat.map((value, index) => {
    const where = describe(name, index);
    if (typeof value !== 'number' && typeof value !== 'string' && typeof value !== 'boolean') {
      throw new CliError(`${where} is ${JSON.stringify(value)}, which is not a ${datatype} value.`);
    }
    switch (datatype) {
      case 'BOOL':
        return toBool(value, where);
      case 'BYTES':
        return toBytes(typeof value === 'string' ? value : String(value), where);
      case 'INT64':
      case 'UINT64':
        // JSON numbers beyond 2^53 have already lost precision in the server's output; keep what arrived.
        return typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : toInteger(value, datatype, where);
      case 'FP16':
      case 'BF16':
      case 'FP32':
      case 'FP64':
        return toFloat(value, datatype, where);
      default:
        return Number(toInteger(value, datatype, where));
    }
  });
}

/** Writes elements as a JSON array the server accepts: 64-bit integers as exact digits, BYTES as strings. */
function jsonData(tensor: Tensor): string {
  const parts = tensor.data.map((value, index) => {
    const where = describe(tensor.name, index);
    switch (tensor.datatype) {
      case 'BOOL':
        return toBool(value, where) ? 'true' : 'false';
      case 'BYTES': {
        const bytes = toBytes(value, where);
        const text = Buffer.from(bytes).toString('utf8');
        if (!Buffer.from(text, 'utf8').equals(Buffer.from(bytes))) {
          throw new CliError(`${where} is not valid UTF-8, which JSON cannot carry; send it with --binary.`);
        }
        return JSON.stringify(text);
      }
      case 'FP16':
      case 'BF16':
      case 'FP32':
      case 'FP64': {
        const number = toFloat(value, tensor.datatype, where);
        if (!Number.isFinite(number)) {
          throw new CliError(`${where} is ${number}, which JSON cannot carry; send it with --binary.`);
        }
        return JSON.stringify(number);
      }
      default:
        return toInteger(value, tensor.datatype, where).toString();
    }
  });
  return `[${parts.join(',')}]`;
}

// ---------------------------------------------------------------------------------------------------------------
// Whole request and response bodies.

function checkShape(tensor: Tensor): void {
  if (!tensor.shape.every((dim) => Number.isInteger(dim) && dim >= 0)) {
    throw new UsageError(`Tensor '${tensor.name}' has shape [${tensor.shape.join(', ')}]; every dimension must be a non-negative integer.`);
  }
  const count = elementCount(tensor.shape);
  if (count !== tensor.data.length) {
    throw new UsageError(
      `Tensor '${tensor.name}' has ${tensor.data.length} elements but its shape [${tensor.shape.join(', ')}] needs ${count}.`,
    );
  }
}

/**
 * Encodes a request. With `binary`, every input's data follows the JSON header as binary tensor data and outputs
 * are asked for in binary (a listed output keeps an explicit `binary_data` it already has); without it, the body is
 * plain JSON.
 */
export function encodeInferenceRequest(request: InferenceRequest, options: { binary: boolean }): EncodedBody {
  const blobs: Buffer[] = [];
  const inputs = request.inputs.map((tensor) => {
    checkShape(tensor);
    const head = `{"name":${JSON.stringify(tensor.name)},"shape":${JSON.stringify(tensor.shape)},"datatype":${JSON.stringify(tensor.datatype)}`;
    if (!options.binary) {
      const parameters = tensor.parameters ? `,"parameters":${JSON.stringify(tensor.parameters)}` : '';
      return `${head}${parameters},"data":${jsonData(tensor)}}`;
    }
    const blob = encodeTensorData(tensor.datatype, tensor.data, tensor.name);
    blobs.push(blob);
    return `${head},"parameters":${JSON.stringify({ ...tensor.parameters, binary_data_size: blob.length })}}`;
  });
  const fields: string[] = [];
  if (request.id !== undefined) fields.push(`"id":${JSON.stringify(request.id)}`);
  let parameters = request.parameters;
  let outputs = request.outputs;
  if (options.binary) {
    if (outputs && outputs.length > 0) {
      outputs = outputs.map((output) => ({ ...output, parameters: { binary_data: true, ...output.parameters } }));
    } else {
      parameters = { binary_data_output: true, ...parameters };
    }
  }
  if (parameters && Object.keys(parameters).length > 0) fields.push(`"parameters":${JSON.stringify(parameters)}`);
  fields.push(`"inputs":[${inputs.join(',')}]`);
  if (outputs && outputs.length > 0) fields.push(`"outputs":${JSON.stringify(outputs)}`);
  const header = Buffer.from(`{${fields.join(',')}}`, 'utf8');
  if (!options.binary) return { body: header, contentType: JSON_CONTENT_TYPE };
  return { body: Buffer.concat([header, ...blobs]), contentType: binaryJsonContentType(header.length) };
}

/**
 * The JSON header length announced by a content type, or undefined when the whole body is JSON. Follows Triton:
 * the binary MIME type must start the content type, and the size must lie in 0..body length.
 */
export function jsonHeaderSize(contentType: string | undefined, bodyLength: number): number | undefined {
  if (!contentType || !contentType.trimStart().toLowerCase().startsWith(BINARY_JSON_MIME)) return undefined;
  const match = /json-header-size\s*=\s*([^;\s]*)/i.exec(contentType);
  if (!match) throw new CliError(`Unable to parse inference header size, got: ${contentType}`);
  const size = Number(match[1]);
  if (!/^\d+$/.test(match[1]!) || size > bodyLength) {
    throw new CliError(`inference header size should be in range (0, ${bodyLength}), got: ${match[1]}`);
  }
  return size;
}

/** Decodes a response body: JSON, or a JSON header followed by the binary outputs in `outputs` order. */
export function decodeInferenceResponse(body: Uint8Array, contentType?: string): InferenceResponse {
  const { header, tensors } = decodeBody(body, contentType, 'outputs', 'response');
  if (typeof header.error === 'string') throw new CliError(`The model returned an error: ${header.error}`);
  const response: { -readonly [K in keyof InferenceResponse]: InferenceResponse[K] } = { outputs: tensors };
  if (typeof header.model_name === 'string') response.model_name = header.model_name;
  if (typeof header.model_version === 'string') response.model_version = header.model_version;
  if (typeof header.id === 'string') response.id = header.id;
  if (isRecord(header.parameters)) response.parameters = header.parameters;
  return response;
}

/** Decodes a request body the way the server does (for tests and local stand-ins of the server). */
export function decodeInferenceRequest(body: Uint8Array, contentType?: string): InferenceRequest {
  const { header, tensors } = decodeBody(body, contentType, 'inputs', 'request');
  const request: { -readonly [K in keyof InferenceRequest]: InferenceRequest[K] } = { inputs: tensors };
  if (typeof header.id === 'string') request.id = header.id;
  if (isRecord(header.parameters)) request.parameters = header.parameters;
  if (Array.isArray(header.outputs)) request.outputs = header.outputs as RequestedOutput[];
  return request;
}

function decodeBody(
  body: Uint8Array,
  contentType: string | undefined,
  listKey: 'inputs' | 'outputs',
  what: 'request' | 'response',
): { header: Record<string, unknown>; tensors: Tensor[] } {
  const buffer = Buffer.from(body.buffer, body.byteOffset, body.length);
  const headerSize = jsonHeaderSize(contentType, buffer.length) ?? buffer.length;
  let header: unknown;
  try {
    header = JSON.parse(buffer.subarray(0, headerSize).toString('utf8'));
  } catch (err) {
    throw new CliError(
      `The ${what} is not a KServe v2 inference ${what}: its JSON header does not parse (${(err as Error).message}). Content type: ${contentType ?? 'none'}.`,
    );
  }
  if (!isRecord(header)) throw new CliError(`The ${what} JSON is not an object.`);
  if (what === 'response' && typeof header.error === 'string') return { header, tensors: [] };
  const list = header[listKey];
  if (!Array.isArray(list)) throw new CliError(`The ${what} JSON has no "${listKey}" array.`);

  let offset = headerSize;
  const tensors = list.map((raw: unknown, index: number): Tensor => {
    if (!isRecord(raw) || typeof raw.name !== 'string') throw new CliError(`Tensor ${index} of the ${what} has no name.`);
    const name = raw.name;
    const datatype = String(raw.datatype);
    if (!isKServeDatatype(datatype)) throw new CliError(`Tensor '${name}' has unknown datatype ${JSON.stringify(raw.datatype)}.`);
    if (!Array.isArray(raw.shape) || !raw.shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new CliError(`Tensor '${name}' has no valid shape.`);
    }
    const shape = raw.shape as number[];
    const parameters = isRecord(raw.parameters) ? raw.parameters : undefined;
    const binarySize = parameters?.binary_data_size;
    let data: TensorElement[];
    if (binarySize !== undefined) {
      if (!Number.isInteger(binarySize) || (binarySize as number) < 0) {
        throw new CliError(`Tensor '${name}' has an invalid binary_data_size ${JSON.stringify(binarySize)}.`);
      }
      const end = offset + (binarySize as number);
      if (end > buffer.length) {
        throw new CliError(
          `Tensor '${name}' declares binary_data_size ${binarySize as number} but only ${buffer.length - offset} bytes remain in the ${what}.`,
        );
      }
      data = decodeTensorData(datatype, buffer.subarray(offset, end), elementCount(shape), name);
      offset = end;
    } else {
      data = tensorDataFromJson(datatype, raw.data ?? [], name);
      if (data.length !== elementCount(shape)) {
        throw new CliError(`Tensor '${name}' holds ${data.length} elements but its shape [${shape.join(', ')}] needs ${elementCount(shape)}.`);
      }
    }
    const tensor: Tensor = { name, datatype, shape, data };
    return parameters ? { ...tensor, parameters } : tensor;
  });
  if (offset !== buffer.length) {
    throw new CliError(`The ${what} has ${buffer.length - offset} bytes after its last binary tensor that no tensor declares.`);
  }
  return { header, tensors };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
