import { DATA_TYPES } from '../../lib/config/model-config-schema';
import {
  KSERVE_DATATYPES,
  TENSOR_DATA_TYPES,
  configByteSize,
  dataTypeOf,
  dataTypeOfConfig,
} from '../../lib/config/data-types';

describe('the data-type table', () => {
  it('names every config.pbtxt data_type but TYPE_INVALID once, and every KServe datatype once', () => {
    expect(TENSOR_DATA_TYPES.map((t) => t.config).sort()).toEqual(DATA_TYPES.filter((t) => t !== 'TYPE_INVALID').sort());
    expect(TENSOR_DATA_TYPES.map((t) => t.kserve)).toEqual([...KSERVE_DATATYPES]);
  });

  it('maps config names to KServe names, TYPE_STRING to BYTES', () => {
    expect(dataTypeOfConfig('TYPE_FP16')?.kserve).toBe('FP16');
    expect(dataTypeOfConfig('TYPE_STRING')?.kserve).toBe('BYTES');
    expect(dataTypeOfConfig('TYPE_BYTES')).toBeUndefined();
    expect(dataTypeOfConfig('TYPE_INVALID')).toBeUndefined();
    expect(dataTypeOf('BF16').config).toBe('TYPE_BF16');
  });

  it('gives the byte size per element, none for variable-length strings', () => {
    const sizes = Object.fromEntries(TENSOR_DATA_TYPES.map((t) => [t.kserve, t.byteSize]));
    expect(sizes).toEqual({
      BOOL: 1, UINT8: 1, UINT16: 2, UINT32: 4, UINT64: 8, INT8: 1, INT16: 2, INT32: 4, INT64: 8,
      FP16: 2, BF16: 2, FP32: 4, FP64: 8, BYTES: undefined,
    });
    expect(configByteSize('TYPE_INT64')).toBe(8);
    expect(configByteSize('TYPE_STRING')).toBeUndefined();
  });

  it('gives integer ranges from the width and signedness', () => {
    const range = (name: 'UINT8' | 'INT8' | 'UINT64' | 'INT64') => {
      const type = dataTypeOf(name);
      return type.kind === 'integer' ? [type.min, type.max, type.wide] : undefined;
    };
    expect(range('UINT8')).toEqual([0n, 255n, false]);
    expect(range('INT8')).toEqual([-128n, 127n, false]);
    expect(range('UINT64')).toEqual([0n, 2n ** 64n - 1n, true]);
    expect(range('INT64')).toEqual([-(2n ** 63n), 2n ** 63n - 1n, true]);
  });

  it('marks FP16 and BF16 as not carried by JSON, as Triton refuses them', () => {
    expect(TENSOR_DATA_TYPES.filter((t) => !t.json).map((t) => t.kserve)).toEqual(['FP16', 'BF16']);
  });

  it('reads back what it writes, little-endian', () => {
    const buffer = Buffer.alloc(8);
    for (const type of TENSOR_DATA_TYPES) {
      if (type.kind === 'bytes') continue;
      const value = type.kind === 'bool' ? true : type.kind === 'float' ? -1.5 : type.wide ? type.min : Number(type.max);
      buffer.fill(0);
      type.write(buffer, 0, value);
      expect([type.kserve, type.read(buffer, 0)]).toEqual([type.kserve, value]);
    }
    const int16 = dataTypeOf('INT16');
    if (int16.kind !== 'integer') throw new Error('INT16 is an integer type');
    int16.write(buffer, 0, 0x1234);
    expect(buffer.subarray(0, 2).toString('hex')).toBe('3412');
  });
});
