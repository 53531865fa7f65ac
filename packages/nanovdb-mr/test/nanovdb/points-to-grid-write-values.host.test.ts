import { describe, expect, it } from 'vitest';
import { ErrorCode, HsError, type MemoryRange } from '@hs/streams';
import { GridType } from '../../src/index.js';
import { FLOAT_LAYOUT, ON_INDEX_LAYOUT, valueLayoutOf, type ValueLayout } from '../../src/nanovdb/grid/grid-layout.js';
import { backgroundWords, writeLaunch } from '../../src/nanovdb/build/points-to-grid-kernels.js';
import { HostBackend } from '@hs/streams';
import { describeValueWrite } from './points-to-grid-write-values-suite.js';

// The launches run their host implementations: the write stage's logic CI checks without a GPU.
describeValueWrite('HostBackend', () => new HostBackend(), { points: 2000, range: 60 });
describeValueWrite('HostBackend with seeded interleaving and the ordering checker', () => new HostBackend({ seed: 3, orderingChecker: true }), { points: 300, range: 30 });

describe('writeLaunch: the values and background contract', () => {
  const range = (byteOffset: number, byteLength: number): MemoryRange => ({ memory: {} as MemoryRange['memory'], byteOffset, byteLength, label: 'test' });
  const layout = (t: GridType): ValueLayout => valueLayoutOf(t) as ValueLayout;
  const capacity = { uppers: 1, lowers: 1, leaves: 1 };
  const refused = (f: () => unknown, message: RegExp): void => {
    let error: unknown;
    try {
      f();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HsError);
    expect((error as HsError).code).toBe(ErrorCode.InvalidArgument);
    expect((error as HsError).message).toMatch(message);
  };

  it('encodes the background as the u32 words of its stored bytes', () => {
    expect(backgroundWords(FLOAT_LAYOUT, 1)).toEqual([0x3f800000]);
    expect(backgroundWords(layout(GridType.Double), -2)).toEqual([0, 0xc0000000]);
    expect(backgroundWords(layout(GridType.Int32), -1)).toEqual([0xffffffff]);
    expect(backgroundWords(layout(GridType.Vec3f), [1, -0, 2])).toEqual([0x3f800000, 0x80000000, 0x40000000]);
    expect(backgroundWords(layout(GridType.Vec3f), 1)).toEqual([0x3f800000, 0x3f800000, 0x3f800000]);
    expect(backgroundWords(layout(GridType.RGBA8), [1, 2, 3, 4])).toEqual([0x04030201]);
    expect(backgroundWords(layout(GridType.Mask), 5)).toEqual([1]);
    expect(backgroundWords(ON_INDEX_LAYOUT, 0)).toEqual([0, 0]);
  });

  it('refuses a grid type it does not write, and values missing, refused, short or misaligned', () => {
    const ws = range(0, 1 << 20);
    const out = range(0, 1 << 20);
    refused(() => writeLaunch(ws, out, 4, layout(GridType.Vec3d), capacity, 0), /Vec3d is not one it writes/);
    refused(() => writeLaunch(ws, out, 4, layout(GridType.Double), capacity, 0), /needs a values range/);
    refused(() => writeLaunch(ws, out, 4, layout(GridType.Mask), capacity, 0, range(0, 64)), /stores no voxel values/);
    refused(() => writeLaunch(ws, out, 4, ON_INDEX_LAYOUT, capacity, 0, range(0, 64)), /stores no voxel values/);
    refused(() => writeLaunch(ws, out, 4, layout(GridType.Vec3f), capacity, 0, range(0, 47)), /must hold 4 values of 12 bytes/);
    refused(() => writeLaunch(ws, out, 4, FLOAT_LAYOUT, capacity, 0, range(2, 16)), /4-byte aligned/);
    expect(writeLaunch(ws, out, 4, layout(GridType.Vec3f), capacity, 0, range(4, 48)).reads).toHaveLength(1);
    expect(writeLaunch(ws, out, 4, FLOAT_LAYOUT, capacity, 0).reads).toHaveLength(0);
  });

  it('refuses a background of the wrong length and a non-zero OnIndex background', () => {
    const ws = range(0, 1 << 20);
    refused(() => writeLaunch(ws, ws, 4, layout(GridType.Vec3f), capacity, [1, 2], range(0, 48)), /needs 1 or 3 numbers for Vec3f, got 2/);
    refused(() => writeLaunch(ws, ws, 4, ON_INDEX_LAYOUT, capacity, 1), /OnIndex grid's background is value index 0/);
  });
});
