// Bytes per element of the fixed-size data types, for the rules that check a data file's size against its dims
// (warmup input files, initial state files). TYPE_STRING has no fixed size and is absent.

import type { DataTypeName } from '../../config/model-config-schema';

const BYTE_SIZES: Partial<Record<DataTypeName, number>> = {
  TYPE_BOOL: 1, TYPE_UINT8: 1, TYPE_INT8: 1, TYPE_UINT16: 2, TYPE_INT16: 2, TYPE_FP16: 2, TYPE_BF16: 2,
  TYPE_UINT32: 4, TYPE_INT32: 4, TYPE_FP32: 4, TYPE_UINT64: 8, TYPE_INT64: 8, TYPE_FP64: 8,
};

/** The bytes a tensor of `dims` holds, or undefined for a variable-size shape or a type without a fixed size. */
export function byteSize(dataType: DataTypeName | undefined, dims: readonly bigint[]): number | undefined {
  const size = dataType ? BYTE_SIZES[dataType] : undefined;
  if (size === undefined || dims.some((d) => d < 0n)) return undefined;
  return Number(dims.reduce((n, d) => n * d, 1n)) * size;
}
