// Triton's tensor data types, each described once: the name config.pbtxt uses (TYPE_FP16), the name on the KServe v2
// wire (FP16), the bytes per element, the range of its values, whether JSON can carry it, and how one element is
// read and written as little-endian binary tensor data. The invoke codec and the validator's rules read this table
// instead of switching on the type name.

import type { DataTypeName } from './model-config-schema';
import { bfloat16Bits, bfloat16Value, float16Bits, float16Value } from './narrow-float';

/** Every tensor datatype of the KServe v2 protocol, in the order the protocol lists them. */
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

/** What the table reads and writes for a fixed-size element: BOOL a boolean, 64-bit integers a bigint. */
export type FixedValue = number | bigint | boolean;

interface DataTypeFacts {
  /** The name in config.pbtxt `data_type`. */
  readonly config: Exclude<DataTypeName, 'TYPE_INVALID'>;
  /** The name in a KServe v2 request or response. */
  readonly kserve: KServeDatatype;
  /**
   * Whether Triton accepts and returns the type as JSON `data`. It refuses FP16 and BF16 both ways: "receiving FP16
   * data via JSON is not supported. Please use the binary data format for input <name>" (server src/http_server.cc:
   * 695-712) and "sending FP16 data via JSON is not supported. Please use the binary data format for output"
   * (src/http_server.cc:867-880).
   */
  readonly json: boolean;
}

/**
 * A type of fixed element size, read and written at a byte offset of a Buffer (little-endian). `write` takes a value
 * already checked against the type (a boolean, an integer in range, a number) and only converts its representation.
 */
interface FixedSize<T extends FixedValue> extends DataTypeFacts {
  readonly byteSize: 1 | 2 | 4 | 8;
  read(buffer: Buffer, offset: number): T;
  write(buffer: Buffer, offset: number, value: FixedValue): void;
}

export interface BoolDataType extends FixedSize<boolean> {
  readonly kind: 'bool';
}

export interface IntegerDataType extends FixedSize<number | bigint> {
  readonly kind: 'integer';
  /** The smallest and largest value, inclusive. */
  readonly min: bigint;
  readonly max: bigint;
  /** 64-bit: elements are bigint, since JavaScript numbers are exact only to 2^53. */
  readonly wide: boolean;
}

export interface FloatDataType extends FixedSize<number> {
  readonly kind: 'float';
}

export interface BytesDataType extends DataTypeFacts {
  readonly kind: 'bytes';
  /** Variable length: each element is a 4-byte little-endian length, then that many bytes. */
  readonly byteSize: undefined;
}

export type FixedSizeDataType = BoolDataType | IntegerDataType | FloatDataType;
export type TensorDataType = FixedSizeDataType | BytesDataType;

function integer(
  config: IntegerDataType['config'],
  kserve: KServeDatatype,
  byteSize: IntegerDataType['byteSize'],
  signed: boolean,
  read: (buffer: Buffer, offset: number) => number | bigint,
  write: (buffer: Buffer, offset: number, value: FixedValue) => void,
): IntegerDataType {
  const bits = BigInt(byteSize * 8);
  const min = signed ? -(1n << (bits - 1n)) : 0n;
  const max = signed ? (1n << (bits - 1n)) - 1n : (1n << bits) - 1n;
  return { kind: 'integer', config, kserve, byteSize, json: true, min, max, wide: byteSize === 8, read, write };
}

function float(
  config: FloatDataType['config'],
  kserve: KServeDatatype,
  byteSize: FloatDataType['byteSize'],
  read: (buffer: Buffer, offset: number) => number,
  write: (buffer: Buffer, offset: number, value: FixedValue) => void,
): FloatDataType {
  return { kind: 'float', config, kserve, byteSize, json: byteSize !== 2, read, write };
}

/** Every data type, in KServe order. */
export const TENSOR_DATA_TYPES: readonly TensorDataType[] = [
  {
    kind: 'bool',
    config: 'TYPE_BOOL',
    kserve: 'BOOL',
    byteSize: 1,
    json: true,
    read: (b, o) => b.readUInt8(o) !== 0,
    write: (b, o, v) => void b.writeUInt8(v ? 1 : 0, o),
  },
  integer('TYPE_UINT8', 'UINT8', 1, false, (b, o) => b.readUInt8(o), (b, o, v) => void b.writeUInt8(Number(v), o)),
  integer('TYPE_UINT16', 'UINT16', 2, false, (b, o) => b.readUInt16LE(o), (b, o, v) => void b.writeUInt16LE(Number(v), o)),
  integer('TYPE_UINT32', 'UINT32', 4, false, (b, o) => b.readUInt32LE(o), (b, o, v) => void b.writeUInt32LE(Number(v), o)),
  integer('TYPE_UINT64', 'UINT64', 8, false, (b, o) => b.readBigUInt64LE(o), (b, o, v) => void b.writeBigUInt64LE(BigInt(v), o)),
  integer('TYPE_INT8', 'INT8', 1, true, (b, o) => b.readInt8(o), (b, o, v) => void b.writeInt8(Number(v), o)),
  integer('TYPE_INT16', 'INT16', 2, true, (b, o) => b.readInt16LE(o), (b, o, v) => void b.writeInt16LE(Number(v), o)),
  integer('TYPE_INT32', 'INT32', 4, true, (b, o) => b.readInt32LE(o), (b, o, v) => void b.writeInt32LE(Number(v), o)),
  integer('TYPE_INT64', 'INT64', 8, true, (b, o) => b.readBigInt64LE(o), (b, o, v) => void b.writeBigInt64LE(BigInt(v), o)),
  float('TYPE_FP16', 'FP16', 2, (b, o) => float16Value(b.readUInt16LE(o)), (b, o, v) => void b.writeUInt16LE(float16Bits(Number(v)), o)),
  float('TYPE_BF16', 'BF16', 2, (b, o) => bfloat16Value(b.readUInt16LE(o)), (b, o, v) => void b.writeUInt16LE(bfloat16Bits(Number(v)), o)),
  float('TYPE_FP32', 'FP32', 4, (b, o) => b.readFloatLE(o), (b, o, v) => void b.writeFloatLE(Number(v), o)),
  float('TYPE_FP64', 'FP64', 8, (b, o) => b.readDoubleLE(o), (b, o, v) => void b.writeDoubleLE(Number(v), o)),
  // Triton's config calls variable-length bytes TYPE_STRING; BYTES is only the name on the wire.
  { kind: 'bytes', config: 'TYPE_STRING', kserve: 'BYTES', byteSize: undefined, json: true },
];

const BY_KSERVE = new Map<string, TensorDataType>(TENSOR_DATA_TYPES.map((type) => [type.kserve, type]));
const BY_CONFIG = new Map<string, TensorDataType>(TENSOR_DATA_TYPES.map((type) => [type.config, type]));

export function isKServeDatatype(value: string): value is KServeDatatype {
  return BY_KSERVE.has(value);
}

/** The table entry of a KServe datatype. */
export function dataTypeOf(datatype: KServeDatatype): TensorDataType {
  return BY_KSERVE.get(datatype)!;
}

/** The table entry of a config.pbtxt `data_type` (`TYPE_FP16`), or undefined for TYPE_INVALID and unknown names. */
export function dataTypeOfConfig(configName: string | undefined): TensorDataType | undefined {
  return configName === undefined ? undefined : BY_CONFIG.get(configName);
}

/** Bytes per element of a config.pbtxt `data_type`, or undefined for TYPE_STRING (variable) and unknown names. */
export function configByteSize(configName: string | undefined): number | undefined {
  return dataTypeOfConfig(configName)?.byteSize;
}
