import { ErrorCode, HsError } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { DType, DTypeCode } from '../src/index.js';

describe('DType', () => {
  it('has DLPack codes, bit widths and item sizes for every interned constant', () => {
    const table: [DType, DTypeCode, number, number, string][] = [
      [DType.int8, DTypeCode.Int, 8, 1, 'int8'],
      [DType.int16, DTypeCode.Int, 16, 2, 'int16'],
      [DType.int32, DTypeCode.Int, 32, 4, 'int32'],
      [DType.int64, DTypeCode.Int, 64, 8, 'int64'],
      [DType.uint8, DTypeCode.UInt, 8, 1, 'uint8'],
      [DType.uint16, DTypeCode.UInt, 16, 2, 'uint16'],
      [DType.uint32, DTypeCode.UInt, 32, 4, 'uint32'],
      [DType.uint64, DTypeCode.UInt, 64, 8, 'uint64'],
      [DType.float16, DTypeCode.Float, 16, 2, 'float16'],
      [DType.float32, DTypeCode.Float, 32, 4, 'float32'],
      [DType.float64, DTypeCode.Float, 64, 8, 'float64'],
      [DType.bfloat16, DTypeCode.Bfloat, 16, 2, 'bfloat16'],
      [DType.bool, DTypeCode.Bool, 8, 1, 'bool'],
      [DType.complex64, DTypeCode.Complex, 64, 8, 'complex64'],
      [DType.complex128, DTypeCode.Complex, 128, 16, 'complex128'],
    ];
    for (const [dtype, code, bits, itemSize, name] of table) {
      expect(dtype.code).toBe(code);
      expect(dtype.bits).toBe(bits);
      expect(dtype.lanes).toBe(1);
      expect(dtype.itemSize).toBe(itemSize);
      expect(dtype.name).toBe(name);
      expect(String(dtype)).toBe(name);
    }
    expect([DTypeCode.Int, DTypeCode.UInt, DTypeCode.Float, DTypeCode.Bfloat, DTypeCode.Complex, DTypeCode.Bool]).toEqual([0, 1, 2, 4, 5, 6]);
  });

  it('interns: equal code, bits and lanes give the same object', () => {
    expect(DType.of(DTypeCode.Float, 32)).toBe(DType.float32);
    expect(DType.of(DTypeCode.UInt, 8, 1)).toBe(DType.uint8);
    const vec = DType.of(DTypeCode.Float, 32, 4);
    expect(DType.of(DTypeCode.Float, 32, 4)).toBe(vec);
    expect(vec).not.toBe(DType.float32);
    expect(vec.itemSize).toBe(16);
    expect(vec.name).toBe('float32x4');
  });

  it('parses canonical names and rejects others', () => {
    expect(DType.parse('uint8')).toBe(DType.uint8);
    expect(DType.parse('bfloat16')).toBe(DType.bfloat16);
    expect(DType.parse('bool')).toBe(DType.bool);
    expect(DType.parse('complex128')).toBe(DType.complex128);
    expect(DType.parse('float32x4')).toBe(DType.of(DTypeCode.Float, 32, 4));
    for (const bad of ['float8', 'int', 'uint128', 'bfloat32', 'complex32', 'float32x0', 'half', '', 'Float32']) {
      expect(DType.parse(bad)).toBeUndefined();
    }
  });

  it('throws InvalidArgument for widths a code does not allow and bad lane counts', () => {
    const expectInvalid = (fn: () => unknown): void => {
      try {
        fn();
        expect.unreachable('should throw');
      } catch (e) {
        expect(e).toBeInstanceOf(HsError);
        expect((e as HsError).code).toBe(ErrorCode.InvalidArgument);
      }
    };
    expectInvalid(() => DType.of(DTypeCode.Float, 8));
    expectInvalid(() => DType.of(DTypeCode.Bool, 1));
    expectInvalid(() => DType.of(DTypeCode.Int, 4));
    expectInvalid(() => DType.of(3 as DTypeCode, 32));
    expectInvalid(() => DType.of(DTypeCode.Int, 32, 0));
    expectInvalid(() => DType.of(DTypeCode.Int, 32, 1.5));
  });
});
