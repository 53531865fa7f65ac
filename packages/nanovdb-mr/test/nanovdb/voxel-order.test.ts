import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KEY_WORDS, sortByBuildKey } from '../../src/nanovdb/build/voxel-order.js';

/** Build key of a voxel as a BigInt (tile biased by 2^31, then upper, lower and leaf index): an independent model. */
function buildKey(x: number, y: number, z: number): bigint {
  const tile = (c: number): bigint => BigInt(((c ^ 0x80000000) >>> 12) & 0x1fffff);
  const upper = (((x & 4095) >> 7) << 10) | (((y & 4095) >> 7) << 5) | ((z & 4095) >> 7);
  const lower = (((x & 127) >> 3) << 8) | (((y & 127) >> 3) << 4) | ((z & 127) >> 3);
  const leaf = ((x & 7) << 6) | ((y & 7) << 3) | (z & 7);
  return (tile(x) << 78n) | (tile(y) << 57n) | (tile(z) << 36n) | (BigInt(upper) << 21n) | (BigInt(lower) << 9n) | BigInt(leaf);
}

/** Sorts with the workspace sortByBuildKey expects, the histogram pre-filled with garbage. */
function sorted(coords: Int32Array): number[] {
  const n = coords.length / 3;
  const counts = new Uint32Array(65536).fill(0xdeadbeef);
  return Array.from(sortByBuildKey(coords, new Uint32Array(KEY_WORDS * n), new Uint32Array(n), new Uint32Array(n), counts));
}

/** The stable order of the model keys. */
function expected(coords: Int32Array): number[] {
  const n = coords.length / 3;
  const keys = Array.from({ length: n }, (_, i) => buildKey(coords[3 * i]!, coords[3 * i + 1]!, coords[3 * i + 2]!));
  return Array.from({ length: n }, (_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
}

describe('sortByBuildKey', () => {
  it('orders point indices by build key, stably, for clouds near the origin, spread across tiles and at the index range ends', () => {
    const near = fc.integer({ min: -300, max: 300 });
    const spread = fc.integer({ min: -2_000_000, max: 2_000_000 });
    const extreme = fc.constantFrom(-2147483648, -2147483647, -4097, -4096, -1, 0, 4095, 4096, 2147483647);
    const coordinate = fc.oneof(near, spread, extreme);
    fc.assert(
      fc.property(fc.array(fc.tuple(coordinate, coordinate, coordinate), { maxLength: 300 }), fc.integer({ min: 0, max: 3 }), (points, repeats) => {
        // repeated points make equal keys, whose order must stay the input order
        const all = points.flatMap((p, i) => (i % 4 === 0 ? Array.from({ length: repeats + 1 }, () => p) : [p]));
        const coords = Int32Array.from(all.flat());
        expect(sorted(coords)).toEqual(expected(coords));
      }),
      { seed: 20261130, numRuns: 300 },
    );
  });

  it('returns the identity for zero and one point, and a cloud whose keys are all equal keeps its order', () => {
    expect(sorted(new Int32Array(0))).toEqual([]);
    expect(sorted(Int32Array.from([-5, 7, 9]))).toEqual([0]);
    expect(sorted(Int32Array.from([3, 3, 3, 3, 3, 3, 3, 3, 3]))).toEqual([0, 1, 2]);
  });
});
