// The KServe v2 inference protocol as Triton speaks it on SageMaker: JSON tensors, the binary tensor data extension
// and the `application/vnd.sagemaker-triton.binary+json;json-header-size=N` framing
// (triton-inference-server/server:src/sagemaker_server.cc:74-132 and docs/protocol/extension_binary_data.md).
// What each datatype is (size, range, byte layout) comes from lib/config/data-types.ts.

import { MmeError } from '../errors';
import { FixedSizeDataType, FixedValue, KServeDatatype, TensorDataType, dataTypeOf, isKServeDatatype } from '../config/data-types';

export { KSERVE_DATATYPES, isKServeDatatype } from '../config/data-types';
export type { KServeDatatype } from '../config/data-types';
export { bfloat16Bits, bfloat16Value, float16Bits, float16Value } from '../config/narrow-float';

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

/** Whether Triton carries the datatype as JSON `data` (it refuses FP16 and BF16; see data-types.ts). */
export function jsonCarries(datatype: KServeDatatype): boolean {
  return dataTypeOf(datatype).json;
}

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((product, dim) => product * dim, 1);
}

// ---------------------------------------------------------------------------------------------------------------
// Element coercion: what a user or a JSON document may give for each kind of datatype, checked with a message
// naming the tensor and the element.

function describe(tensor: string, index: number): string {
  return `element ${index} of tensor '${tensor}'`;
}

/** One element checked against its datatype: a boolean, an integer in range (bigint), a number or bytes. */
function coerce(type: FixedSizeDataType, value: TensorElement, where: string): FixedValue;
function coerce(type: TensorDataType, value: TensorElement, where: string): FixedValue | Uint8Array;
function coerce(type: TensorDataType, value: TensorElement, where: string): FixedValue | Uint8Array {
  switch (type.kind) {
    case 'bool':
      return toBool(value, where);
    case 'integer':
      return toInteger(value, type, where);
    case 'float':
      return toFloat(value, type.kserve, where);
    case 'bytes':
      return toBytes(value, where);
  }
}

function toInteger(value: TensorElement, type: Extract<TensorDataType, { kind: 'integer' }>, where: string): bigint {
  let integer: bigint | undefined;
  if (typeof value === 'bigint') integer = value;
  else if (typeof value === 'number' && Number.isInteger(value)) {
    if (!Number.isSafeInteger(value) && type.wide) {
      throw new MmeError(
        'BAD_VALUE',
        `${where} is ${value}, beyond 2^53 where JSON numbers lose precision; ` +
          `write it as a string ("${BigInt(value)}") to send it exactly.`,
      );
    }
    integer = BigInt(value);
  } else if (typeof value === 'boolean') integer = value ? 1n : 0n;
  else if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) integer = BigInt(value.trim());
  if (integer === undefined) {
    throw new MmeError('BAD_VALUE', `${where} is ${printable(value)}, but ${type.kserve} needs an integer.`);
  }
  if (integer < type.min || integer > type.max) {
    throw new MmeError('BAD_VALUE', `${where} is ${integer}, outside the ${type.kserve} range ${type.min}..${type.max}.`);
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
  throw new MmeError('BAD_VALUE', `${where} is ${printable(value)}, but ${datatype} needs a number.`);
}

function toBool(value: TensorElement, where: string): boolean {
  if (typeof value === 'boolean') return value;
  if (value === 0 || value === 1) return value === 1;
  if (value === 0n || value === 1n) return value === 1n;
  throw new MmeError('BAD_VALUE', `${where} is ${printable(value)}, but BOOL needs true, false, 0 or 1.`);
}

function toBytes(value: TensorElement, where: string): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  throw new MmeError('BAD_VALUE', `${where} is ${printable(value)}, but BYTES needs a string.`);
}

function printable(value: TensorElement): string {
  if (value instanceof Uint8Array) return `${value.length} raw bytes`;
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

// ---------------------------------------------------------------------------------------------------------------
// Binary tensor data: little-endian, row-major, no padding; BYTES elements each carry a 4-byte little-endian length.

/**
 * Encodes elements as the binary tensor data extension lays them out. Elements that are already of the type's own
 * kind (a number for a float, a safe integer in range for a narrow integer) are written without the checks' messages
 * being built, into a typed array on a little-endian machine: 400,000 FP32 elements took 0.9 s element by element
 * through coerce() and Buffer.writeFloatLE, and take a few milliseconds so.
 */
export function encodeTensorData(datatype: KServeDatatype, data: readonly TensorElement[], name = 'input'): Buffer {
  const type = dataTypeOf(datatype);
  if (type.kind === 'bytes') {
    const parts: Buffer[] = [];
    data.forEach((value, index) => {
      const bytes = toBytes(value, describe(name, index));
      const prefix = Buffer.alloc(4);
      prefix.writeUInt32LE(bytes.length);
      parts.push(prefix, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
    });
    return Buffer.concat(parts);
  }
  const accept = plainValue(type);
  const View = LITTLE_ENDIAN ? TYPED_ARRAYS[type.kserve] : undefined;
  if (View) {
    const view = new View(data.length);
    for (let index = 0; index < data.length; index++) {
      const value = data[index]!;
      view[index] = accept(value) ? (value as number) : Number(coerce(type, value, describe(name, index)));
    }
    return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
  }
  const out = Buffer.alloc(type.byteSize * data.length);
  for (let index = 0; index < data.length; index++) {
    const value = data[index]!;
    type.write(out, index * type.byteSize, accept(value) ? (value as number) : coerce(type, value, describe(name, index)));
  }
  return out;
}

/** Whether the platform stores numbers little-endian, as the binary tensor data extension does. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

type NumberArray = Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array;
/** The typed arrays whose little-endian bytes are the datatype's binary layout (64-bit integers and BOOL go per element). */
const TYPED_ARRAYS: Partial<Record<KServeDatatype, new (length: number) => NumberArray>> = {
  FP32: Float32Array,
  FP64: Float64Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
};

/**
 * A test for elements that need no conversion: any number for a float type (NaN and infinities included), a safe
 * integer within range for an integer type up to 32 bits. Everything else goes through coerce(), which converts or
 * refuses it with a message naming the element.
 */
function plainValue(type: FixedSizeDataType): (value: TensorElement) => boolean {
  if (type.kind === 'float') return (value) => typeof value === 'number';
  if (type.kind === 'integer' && !type.wide) {
    const min = Number(type.min);
    const max = Number(type.max);
    return (value) => typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
  }
  return () => false;
}

/** Decodes binary tensor data; `count` (from the shape) is checked against the bytes when given. */
export function decodeTensorData(
  datatype: KServeDatatype,
  bytes: Uint8Array,
  count?: number,
  name = 'output',
): TensorElement[] {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const type = dataTypeOf(datatype);
  if (type.kind === 'bytes') {
    const elements: Uint8Array[] = [];
    let offset = 0;
    while (offset < buffer.length) {
      if (offset + 4 > buffer.length) {
        throw new MmeError(
          'BAD_BODY',
          `Tensor '${name}' (BYTES) ends inside the 4-byte length of element ${elements.length} (at byte ${offset} of ${buffer.length}).`,
        );
      }
      const length = buffer.readUInt32LE(offset);
      if (offset + 4 + length > buffer.length) {
        throw new MmeError(
          'BAD_BODY',
          `Tensor '${name}' (BYTES) element ${elements.length} declares ${length} bytes but only ${buffer.length - offset - 4} remain.`,
        );
      }
      elements.push(Uint8Array.prototype.slice.call(buffer, offset + 4, offset + 4 + length));
      offset += 4 + length;
    }
    if (count !== undefined && elements.length !== count) {
      throw new MmeError('BAD_BODY', `Tensor '${name}' (BYTES) holds ${elements.length} elements but its shape needs ${count}.`);
    }
    return elements;
  }
  const size = type.byteSize;
  if (buffer.length % size !== 0 || (count !== undefined && buffer.length !== count * size)) {
    const expected = count === undefined ? `a multiple of ${size}` : `${count * size} (${count} × ${size})`;
    throw new MmeError('BAD_BODY', `Tensor '${name}' (${datatype}) has ${buffer.length} bytes of data; expected ${expected}.`);
  }
  const elements: TensorElement[] = [];
  for (let offset = 0; offset < buffer.length; offset += size) elements.push(type.read(buffer, offset));
  return elements;
}

// ---------------------------------------------------------------------------------------------------------------
// JSON tensor data.

/** Nesting deeper than any tensor has dimensions (Triton caps dims well below this): a hostile or broken body. */
const MAX_JSON_DATA_DEPTH = 64;

/**
 * `data` flattened in row-major order, without recursion: a response nested a million levels deep is a BAD_BODY
 * error, never a stack overflow.
 */
function flattenJsonData(data: unknown, name: string): unknown[] {
  const flat: unknown[] = [];
  const stack: { array: unknown[]; next: number }[] = [];
  if (!Array.isArray(data)) return [data];
  stack.push({ array: data, next: 0 });
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.next >= top.array.length) {
      stack.pop();
      continue;
    }
    const value = top.array[top.next++];
    if (!Array.isArray(value)) {
      flat.push(value);
    } else if (stack.length >= MAX_JSON_DATA_DEPTH) {
      throw new MmeError('BAD_BODY', `Tensor '${name}' has data nested more than ${MAX_JSON_DATA_DEPTH} arrays deep; ` +
        'a tensor\'s JSON data is a flat or row-major nested array with one level per dimension.');
    } else {
      stack.push({ array: value, next: 0 });
    }
  }
  return flat;
}

/** Normalises JSON `data` (flat or nested arrays) to the element types `decodeTensorData` returns. */
export function tensorDataFromJson(datatype: KServeDatatype, data: unknown, name = 'output'): TensorElement[] {
  const type = dataTypeOf(datatype);
  const flat = flattenJsonData(data, name);
  return flat.map((value, index) => {
    const where = describe(name, index);
    if (typeof value !== 'number' && typeof value !== 'string' && typeof value !== 'boolean') {
      throw new MmeError('BAD_BODY', `${where} is ${JSON.stringify(value)}, which is not a ${datatype} value.`);
    }
    // A BYTES element is a JSON string; a number there is read as its text. A value the datatype cannot hold is a
    // fault of the body (BAD_BODY), not of anything the user gave.
    let element: FixedValue | Uint8Array;
    try {
      element = coerce(type, type.kind === 'bytes' ? String(value) : value, where);
    } catch (err) {
      throw err instanceof MmeError ? new MmeError('BAD_BODY', err.message) : err;
    }
    return typeof element === 'bigint' && type.kind === 'integer' && !type.wide ? Number(element) : element;
  });
}

/**
 * Writes elements as a JSON array the server accepts: 64-bit integers as exact digits, BYTES as strings, and a
 * negative zero as `-0.0`: Triton parses JSON with RapidJSON, whose reader takes `-0` for the integer 0 and keeps
 * the sign only on a number with a fraction (Tencent/rapidjson include/rapidjson/reader.h, ParseNumber: a minus
 * with an integer literal calls `handler.Int(~i + 1)`). NaN and the infinities go as the bare literals `NaN`,
 * `Infinity` and `-Infinity`, which Triton parses: its JSON reader sets kParseNanAndInfFlag
 * (triton-inference-server/common include/triton/common/triton_json.h:182-184; rapidjson reader.h:1523-1547).
 * `budget` stops the work as soon as the text outgrows it (the caller refuses the request then).
 */
function jsonData(tensor: Tensor, budget: { left: number }): string {
  const type = dataTypeOf(tensor.datatype);
  const plain = plainJsonArray(type, tensor.data);
  if (plain !== undefined) {
    budget.left -= plain.length;
    if (budget.left < 0) throw new OverBudget(tensor.data.length, tensor.data.length);
    return plain;
  }
  const accept = type.kind === 'bytes' ? () => false : plainValue(type);
  const parts: string[] = new Array<string>(tensor.data.length);
  for (let index = 0; index < tensor.data.length; index++) {
    const value = tensor.data[index]!;
    const part = accept(value) ? jsonNumber(value as number) : jsonElement(type, value, describe(tensor.name, index));
    parts[index] = part;
    budget.left -= part.length + 1;
    if (budget.left < 0) throw new OverBudget(index + 1, tensor.data.length);
  }
  return `[${parts.join(',')}]`;
}

/**
 * The JSON text of data that needs no conversion and no special spelling (finite numbers of a float or narrow integer
 * type, no -0), written by JSON.stringify, which writes such numbers exactly as String() does and is several times
 * faster than joining them one by one; undefined when some element needs the element-wise path.
 */
function plainJsonArray(type: TensorDataType, data: readonly TensorElement[]): string | undefined {
  if (type.kind === 'bytes' || type.kind === 'bool' || (type.kind === 'integer' && type.wide)) return undefined;
  const accept = plainValue(type);
  for (let index = 0; index < data.length; index++) {
    const value = data[index]!;
    if (!accept(value) || !Number.isFinite(value) || Object.is(value, -0)) return undefined;
  }
  return JSON.stringify(data);
}

function jsonNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  return Object.is(value, -0) ? '-0.0' : String(value);
}

function jsonElement(type: TensorDataType, value: TensorElement, where: string): string {
  const element = coerce(type, value, where);
  if (element instanceof Uint8Array) {
    const text = Buffer.from(element).toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(Buffer.from(element))) {
      throw new MmeError('BAD_VALUE', `${where} is not valid UTF-8, which JSON cannot carry; send it with --binary.`);
    }
    return JSON.stringify(text);
  }
  if (typeof element === 'number') return jsonNumber(element);
  return String(element);
}

/** Thrown inside jsonData when the text outgrew its budget: how far it got. */
class OverBudget extends Error {
  constructor(
    readonly done: number,
    readonly total: number,
  ) {
    super('over budget');
  }
}

/**
 * Parses JSON as Triton writes it. Integers beyond 2^53 stay exact: such a literal becomes its decimal text (a
 * string), which the 64-bit decoders read as an exact bigint; Triton writes INT64/UINT64 outputs as exact integer
 * literals (server src/http_server.cc:817-823 AppendUInt, :857-863 AppendInt), which plain JSON.parse would round.
 * The bare literals `NaN`, `Infinity` and `-Infinity`, which Triton writes for non-finite floats (its JSON writer
 * sets kWriteNanAndInfFlag: triton-inference-server/common include/triton/common/triton_json.h:210-215; rapidjson
 * include/rapidjson/writer.h:350-372), become the strings "NaN", "Infinity", "-Infinity", which the float decoders
 * read back as the numbers.
 */
export function parseJsonExact(text: string): unknown {
  // Fast path: no run of 16 digits (so no integer beyond 2^53: 9007199254740992 has 16 digits) and no NaN or
  // Infinity. Otherwise the string-aware scan below costs about one more JSON.parse (measured on 19.6 MB of FP32
  // JSON: 116 -> 229 ms).
  if (!/\d{16}|NaN|Infinity/.test(text)) return JSON.parse(text);
  return JSON.parse(text.replace(STRING_OR_SPECIAL, (token: string, integer: string | undefined, special: string | undefined) => {
    if (special !== undefined) return `"${special}"`;
    if (integer === undefined) return token;
    const value = BigInt(integer);
    return value > MAX_SAFE || value < -MAX_SAFE ? `"${integer}"` : token;
  }));
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/**
 * A JSON string (consumed whole, so nothing inside strings is ever touched); an integer literal of 16 or more digits
 * that is a whole token: not preceded by a digit, `.`, exponent or sign, nor followed by a fraction or exponent; or
 * a bare NaN, Infinity or -Infinity.
 */
const STRING_OR_SPECIAL = /"(?:[^"\\]|\\.)*"|(?<![\d.eE+-])(-?\d{16,})(?![\d.eE])|(?<![\w.])(NaN|-?Infinity)(?!\w)/g;

// ---------------------------------------------------------------------------------------------------------------
// Whole request and response bodies.

function checkShape(tensor: Tensor): void {
  if (!tensor.shape.every((dim) => Number.isInteger(dim) && dim >= 0)) {
    throw new MmeError(
      'BAD_SHAPE',
      `Tensor '${tensor.name}' has shape [${tensor.shape.join(', ')}]; every dimension must be a non-negative integer.`,
    );
  }
  if (tensor.shape.length === 0) {
    // Every model input has dims (core src/model_config_utils.cc ValidateIOShape: "model input '<n>' must specify
    // 'dims'"), and a request's shape must match them, so Triton has no scalar inputs.
    throw new MmeError(
      'BAD_SHAPE',
      `Input '${tensor.name}' has shape [] (a scalar), which Triton never accepts: every model input has at least one ` +
        'dimension. Send it with shape [1] (one element); a model that wants a scalar declares dims: [ 1 ] with ' +
        'reshape: { shape: [ ] } in its config.pbtxt.',
    );
  }
  const count = elementCount(tensor.shape);
  if (count !== tensor.data.length) {
    throw new MmeError(
      'BAD_SHAPE',
      `Tensor '${tensor.name}' has ${tensor.data.length} elements but its shape [${tensor.shape.join(', ')}] needs ${count}.`,
    );
  }
}

/**
 * A request larger than `maxBytes`, refused before it was (wholly) encoded. `bytes` is the exact size of a binary
 * request, and for JSON an estimate from the part encoded before the limit was passed (`exact` false).
 */
export class RequestTooLargeError extends MmeError {
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
    readonly exact: boolean,
    readonly binary: boolean,
  ) {
    super('USAGE', `The request is ${exact ? '' : 'about '}${mebibytes(bytes)} MiB, over the ${mebibytes(maxBytes)} MiB allowed.`);
  }
}

function mebibytes(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

export interface EncodeOptions {
  /** Send every input as binary tensor data after the JSON header (binary+json); false sends JSON `data`. */
  readonly binary: boolean;
  /**
   * Ask for outputs as binary tensor data (`binary_data_output`, or `binary_data` on each listed output), as
   * tritonclient does: BYTES that are not UTF-8, FP16 and BF16 come back intact only so.
   * @default - the same as `binary`
   */
  readonly binaryOutputs?: boolean;
  /** Refuse (RequestTooLargeError) a body larger than this, before encoding it (binary) or as soon as it is passed. */
  readonly maxBytes?: number;
}

/**
 * Encodes a request. With `binary`, every input's data follows the JSON header as binary tensor data; without it, the
 * body is plain JSON, which Triton refuses for FP16 and BF16 inputs, so those are refused here first with Triton's
 * words. With `binaryOutputs`, outputs are asked for in binary (a listed output keeps an explicit `binary_data` it
 * already has). A scalar input (shape []) is refused: Triton has none.
 */
export function encodeInferenceRequest(request: InferenceRequest, options: EncodeOptions): EncodedBody {
  const binaryOutputs = options.binaryOutputs ?? options.binary;
  const maxBytes = options.maxBytes ?? Infinity;
  for (const tensor of request.inputs) checkShape(tensor);
  if (options.binary && maxBytes !== Infinity) {
    const size = request.inputs.reduce((sum, tensor) => sum + binarySize(tensor), 0);
    if (size > maxBytes) throw new RequestTooLargeError(size, maxBytes, true, true);
  }
  const budget = { left: maxBytes };
  const blobs: Buffer[] = [];
  const inputs = request.inputs.map((tensor) => {
    const { name, shape, datatype } = tensor;
    const head = `{"name":${JSON.stringify(name)},"shape":${JSON.stringify(shape)},"datatype":${JSON.stringify(datatype)}`;
    if (!options.binary) {
      if (!jsonCarries(datatype)) {
        throw new MmeError(
          'USAGE',
          `Input '${name}' is ${datatype}, which Triton does not take as JSON ("receiving ${datatype} data via JSON ` +
            `is not supported. Please use the binary data format for input ${name}"); send it as binary tensor data.`,
        );
      }
      const parameters = tensor.parameters ? `,"parameters":${JSON.stringify(tensor.parameters)}` : '';
      let data: string;
      try {
        data = jsonData(tensor, budget);
      } catch (err) {
        if (!(err instanceof OverBudget)) throw err;
        const estimate = Math.max(maxBytes + 1, Math.round(((maxBytes - budget.left) * err.total) / err.done));
        throw new RequestTooLargeError(estimate, maxBytes, false, false);
      }
      return `${head}${parameters},"data":${data}}`;
    }
    const blob = encodeTensorData(tensor.datatype, tensor.data, tensor.name);
    blobs.push(blob);
    return `${head},"parameters":${JSON.stringify({ ...tensor.parameters, binary_data_size: blob.length })}}`;
  });
  const fields: string[] = [];
  if (request.id !== undefined) fields.push(`"id":${JSON.stringify(request.id)}`);
  let parameters = request.parameters;
  let outputs = request.outputs;
  if (binaryOutputs) {
    // server src/http_server.cc:2932 reads binary_data_output, :974 and :1105 each output's binary_data.
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
  const size = header.length + blobs.reduce((sum, blob) => sum + blob.length, 0);
  if (size > maxBytes) throw new RequestTooLargeError(size, maxBytes, true, options.binary);
  if (!options.binary) return { body: header, contentType: JSON_CONTENT_TYPE };
  return { body: Buffer.concat([header, ...blobs]), contentType: binaryJsonContentType(header.length) };
}

/** The bytes of a tensor's binary data, computed without encoding it. */
function binarySize(tensor: Tensor): number {
  const type = dataTypeOf(tensor.datatype);
  if (type.kind !== 'bytes') return type.byteSize * tensor.data.length;
  let size = 0;
  for (const value of tensor.data) {
    size += 4 + (value instanceof Uint8Array ? value.length : typeof value === 'string' ? Buffer.byteLength(value) : 0);
  }
  return size;
}

/**
 * The JSON header length announced by a content type, or undefined when the whole body is JSON. Follows Triton:
 * the binary MIME type must start the content type, and the size must lie in 0..body length.
 */
export function jsonHeaderSize(contentType: string | undefined, bodyLength: number): number | undefined {
  if (!contentType || !contentType.trimStart().toLowerCase().startsWith(BINARY_JSON_MIME)) return undefined;
  const match = /json-header-size\s*=\s*([^;\s]*)/i.exec(contentType);
  if (!match) throw new MmeError('BAD_BODY', `Unable to parse inference header size, got: ${contentType}`);
  const size = Number(match[1]);
  if (!/^\d+$/.test(match[1]!) || size > bodyLength) {
    throw new MmeError('BAD_BODY', `inference header size should be in range (0, ${bodyLength}), got: ${match[1]}`);
  }
  return size;
}

/** Decodes a response body: JSON, or a JSON header followed by the binary outputs in `outputs` order. */
export function decodeInferenceResponse(body: Uint8Array, contentType?: string): InferenceResponse {
  const { header, tensors } = decodeBody(body, contentType, 'outputs', 'response');
  if (typeof header.error === 'string') throw new MmeError('MODEL_ERROR', `The model returned an error: ${header.error}`);
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
    header = parseJsonExact(buffer.subarray(0, headerSize).toString('utf8'));
  } catch (err) {
    throw new MmeError(
      'BAD_BODY',
      `The ${what} is not a KServe v2 inference ${what}: its JSON header does not parse (${(err as Error).message}). ` +
        `Content type: ${contentType ?? 'none'}.`,
    );
  }
  if (!isRecord(header)) throw new MmeError('BAD_BODY', `The ${what} JSON is not an object.`);
  if (what === 'response' && typeof header.error === 'string') return { header, tensors: [] };
  const list = header[listKey];
  if (!Array.isArray(list)) throw new MmeError('BAD_BODY', `The ${what} JSON has no "${listKey}" array.`);

  let offset = headerSize;
  const tensors = list.map((raw: unknown, index: number): Tensor => {
    if (!isRecord(raw) || typeof raw.name !== 'string') throw new MmeError('BAD_BODY', `Tensor ${index} of the ${what} has no name.`);
    const name = raw.name;
    const datatype = String(raw.datatype);
    if (!isKServeDatatype(datatype)) {
      throw new MmeError('BAD_BODY', `Tensor '${name}' has unknown datatype ${JSON.stringify(raw.datatype)}.`);
    }
    if (!Array.isArray(raw.shape) || !raw.shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new MmeError('BAD_BODY', `Tensor '${name}' has no valid shape.`);
    }
    const shape = raw.shape as number[];
    const parameters = isRecord(raw.parameters) ? raw.parameters : undefined;
    const binarySize = parameters?.binary_data_size;
    let data: TensorElement[];
    if (binarySize !== undefined) {
      if (!Number.isInteger(binarySize) || (binarySize as number) < 0) {
        throw new MmeError('BAD_BODY', `Tensor '${name}' has an invalid binary_data_size ${JSON.stringify(binarySize)}.`);
      }
      const end = offset + (binarySize as number);
      if (end > buffer.length) {
        throw new MmeError(
          'BAD_BODY',
          `Tensor '${name}' declares binary_data_size ${binarySize as number} ` +
            `but only ${buffer.length - offset} bytes remain in the ${what}.`,
        );
      }
      data = decodeTensorData(datatype, buffer.subarray(offset, end), elementCount(shape), name);
      offset = end;
    } else {
      data = tensorDataFromJson(datatype, raw.data ?? [], name);
      if (data.length !== elementCount(shape)) {
        throw new MmeError(
          'BAD_BODY',
          `Tensor '${name}' holds ${data.length} elements but its shape [${shape.join(', ')}] needs ${elementCount(shape)}.`,
        );
      }
    }
    const tensor: Tensor = { name, datatype, shape, data };
    return parameters ? { ...tensor, parameters } : tensor;
  });
  if (offset !== buffer.length) {
    throw new MmeError('BAD_BODY', `The ${what} has ${buffer.length - offset} bytes after its last binary tensor that no tensor declares.`);
  }
  return { header, tensors };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
