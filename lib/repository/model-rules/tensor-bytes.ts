// The bytes a tensor of fixed-size data type holds, for the rules that check a data file's size against its dims
// (warmup input files, initial state files). Element sizes come from the one data-type table.

import { configByteSize } from '../../config/data-types';
import type { DataTypeName } from '../../config/model-config-schema';

/** The bytes a tensor of `dims` holds, or undefined for a variable-size shape or a type without a fixed size. */
export function byteSize(dataType: DataTypeName | undefined, dims: readonly bigint[]): number | undefined {
  const size = configByteSize(dataType);
  if (size === undefined || dims.some((d) => d < 0n)) return undefined;
  return Number(dims.reduce((n, d) => n * d, 1n)) * size;
}
