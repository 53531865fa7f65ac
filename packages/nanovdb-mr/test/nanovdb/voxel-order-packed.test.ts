import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planGrid } from '../../src/nanovdb/build/grid-writer.js';
import { ON_INDEX_LAYOUT } from '../../src/nanovdb/grid/grid-layout.js';
import { countKeyLevels, sortPackedKeys } from '../../src/nanovdb/build/packed-voxel-keys.js';
import { KEY_WORDS, sortByBuildKey, sortVoxels } from '../../src/nanovdb/build/voxel-order.js';

/** Build key of a voxel as a BigInt (tile biased by 2^31, then upper, lower and leaf index): an independent model. */
function buildKey(x: number, y: number, z: number): bigint {
  const tile = (c: number): bigint => BigInt(((c ^ 0x80000000) >>> 12) & 0x1fffff);
  const upper = (((x & 4095) >> 7) << 10) | (((y & 4095) >> 7) << 5) | ((z & 4095) >> 7);
  const lower = (((x & 127) >> 3) << 8) | (((y & 127) >> 3) << 4) | ((z & 127) >> 3);
  const leaf = ((x & 7) << 6) | ((y & 7) << 3) | (z & 7);
  return (tile(x) << 78n) | (tile(y) << 57n) | (tile(z) << 36n) | (BigInt(upper) << 21n) | (BigInt(lower) << 9n) | BigInt(leaf);
}

/** The stable order of the model keys. */
function expected(coords: Int32Array): number[] {
  const n = coords.length / 3;
  const keys = Array.from({ length: n }, (_, i) => buildKey(coords[3 * i]!, coords[3 * i + 1]!, coords[3 * i + 2]!));
  return Array.from({ length: n }, (_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
}

/** sortVoxels with fresh scratch (histogram and tables pre-filled with garbage): the order and sorted triplets, or null. */
function packed(coords: Int32Array): { order: number[]; sorted: number[]; levels: number[] } | null {
  const n = coords.length / 3;
  const words = (): Uint32Array => new Uint32Array(n).fill(0xdeadbeef);
  const index = words();
  const sorted = new Int32Array(3 * n).fill(-7);
  // the keys share the sorted triplets' memory, as in the PointsToGrid workspace
  const keys = new Uint32Array(sorted.buffer, 0, 2 * n).fill(0xdeadbeef);
  const levels = new Float64Array(4).fill(-1);
  const ok = sortVoxels(coords, n, sorted, index, { keys, keys2: new Uint32Array(2 * n).fill(0xdeadbeef), index2: words() }, new Uint32Array(65536).fill(0xdeadbeef), levels);
  return ok ? { order: Array.from(index), sorted: Array.from(sorted), levels: Array.from(levels) } : null;
}

function check(coords: Int32Array): void {
  const want = expected(coords);
  const got = packed(coords);
  expect(got).not.toBeNull();
  if (got === null) return;
  expect(got.order).toEqual(want);
  expect(got.sorted).toEqual(want.flatMap((i) => [coords[3 * i]!, coords[3 * i + 1]!, coords[3 * i + 2]!]));
  // the level counts taken from the keys are planGrid's over the sorted voxels
  const { total } = planGrid(Int32Array.from(got.sorted), got.order.length, ON_INDEX_LAYOUT);
  expect(got.levels).toEqual([total.voxels, total.leaves, total.lowers, total.tiles]);
}

/** Triplets from `points`, every fourth repeated `repeats` more times (equal keys keep the input order). */
function withRepeats(points: readonly (readonly [number, number, number])[], repeats: number): Int32Array {
  return Int32Array.from(points.flatMap((p, i) => (i % 4 === 0 ? Array.from({ length: repeats + 1 }, () => p) : [p])).flat());
}

describe('sortVoxels (packed-key radix sort)', () => {
  it('orders like the build-key model, stably, for random clouds near the origin, across tiles and with duplicates', () => {
    const near = fc.integer({ min: -300, max: 300 });
    const tiles = fc.integer({ min: -20_000, max: 20_000 });
    const local = fc.integer({ min: 4090, max: 4200 });
    for (const coordinate of [near, tiles, local, fc.oneof(near, local)]) {
      fc.assert(
        fc.property(fc.array(fc.tuple(coordinate, coordinate, coordinate), { maxLength: 300 }), fc.integer({ min: 0, max: 3 }), (points, repeats) => check(withRepeats(points, repeats))),
        { seed: 20261204, numRuns: 150 },
      );
    }
  });

  it('orders clustered clouds and clouds offset to the index range ends (negative and positive)', () => {
    const offsets = [-2147483648, -2147480000, -1_000_000, -4096, -1, 0, 1_000_000, 2147483647 - 20_000];
    fc.assert(
      fc.property(fc.constantFrom(...offsets), fc.array(fc.tuple(fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 0, max: 64 }), fc.integer({ min: 0, max: 9 })), { maxLength: 200 }), (offset, points) =>
        check(withRepeats(points.map(([x, y, z]) => [offset + x, offset + (y % 16), offset + 3 * z] as const), 1)),
      ),
      { seed: 7, numRuns: 200 },
    );
  });

  it('handles wide spans: up to 64 key bits sorted, wider boxes refused (returns false) for the five-word sort', () => {
    // x spans 2^21 tiles-worth, y and z small: 21 + 12 + 3 + 3 bits fit
    check(Int32Array.from([-2147483648, 0, 0, 2147483647, 5, 3, 0, 0, 0, 12345678, 7, 2, -5, 1, 1]));
    // every axis across the whole range: 96 bits
    const wide = Int32Array.from([-2147483648, -2147483648, -2147483648, 2147483647, 2147483647, 2147483647, 0, 0, 0]);
    expect(packed(wide)).toBeNull();
    // the refusal leaves the five-word sort to agree with the model
    const n = wide.length / 3;
    expect(Array.from(sortByBuildKey(wide, new Uint32Array(KEY_WORDS * n), new Uint32Array(n), new Uint32Array(n), new Uint32Array(65536)))).toEqual(expected(wide));
    // two axes across the whole range and one narrow: 64 + bits, refused; 32 + 32 exactly: sorted
    expect(packed(Int32Array.from([-2147483648, -2147483648, 0, 2147483647, 2147483647, 1]))).toBeNull();
    check(Int32Array.from([-2147483648, -2147483648, 0, 2147483647, 2147483647, 0, 5, -9, 0]));
  });

  it('writes nothing for zero points and the point itself for one; a cloud of one voxel keeps its order', () => {
    expect(packed(new Int32Array(0))).toEqual({ order: [], sorted: [], levels: [0, 0, 0, 0] });
    expect(packed(Int32Array.from([-5, 7, 9]))).toEqual({ order: [0], sorted: [-5, 7, 9], levels: [1, 1, 1, 1] });
    expect(packed(Int32Array.from([3, 3, 3, 3, 3, 3, 3, 3, 3]))).toEqual({ order: [0, 1, 2], sorted: [3, 3, 3, 3, 3, 3, 3, 3, 3], levels: [1, 1, 1, 1] });
  });

  it('sorts a large uniform cube across the origin (four digit passes) like the five-word sort', () => {
    let s = 99;
    const next = (): number => ((s = (s * 1103515245 + 12345) >>> 0) >>> 8) % 1024;
    const n = 50_000;
    const coords = Int32Array.from({ length: 3 * n }, () => next() - 512);
    const got = packed(coords);
    check(coords.subarray(0, 3000));
    const reference = Array.from(sortByBuildKey(coords, new Uint32Array(KEY_WORDS * n), new Uint32Array(n), new Uint32Array(n), new Uint32Array(65536)));
    expect(got?.order).toEqual(reference);
    // without the input indices (index null) the sorted voxels are the same
    const w = (): Uint32Array => new Uint32Array(n);
    const keysOnly = new Int32Array(3 * n);
    expect(sortVoxels(coords, n, keysOnly, null, { keys: new Uint32Array(2 * n), keys2: new Uint32Array(2 * n), index2: w() }, new Uint32Array(65536))).toBe(true);
    expect(Array.from(keysOnly)).toEqual(got?.sorted);
  });
});

/** sortPackedKeys into leaf order (scratch pre-filled with garbage): each key's input point and the level counts, or null. */
function leafOrdered(coords: Int32Array): { order: number[]; levels: number[] } | null {
  const n = coords.length / 3;
  const garbage = (words: number): Uint32Array => new Uint32Array(words).fill(0xdeadbeef);
  const index = garbage(n);
  const sorted = sortPackedKeys(coords, n, index, { keys: garbage(2 * n), keys2: garbage(2 * n), index2: garbage(n) }, garbage(65536), 'leaf');
  if (sorted === null) return null;
  const levels = new Float64Array(4).fill(-1);
  countKeyLevels(sorted, n, levels);
  return { order: Array.from(index), levels: Array.from(levels).slice(1) };
}

describe('sortPackedKeys into leaf order', () => {
  it('orders the leaves like the build-key model (the voxels of a leaf in any order) and counts its leaves, lower nodes and tiles', () => {
    const near = fc.integer({ min: -300, max: 300 });
    const tiles = fc.integer({ min: -20_000, max: 20_000 });
    const one = fc.integer({ min: 16, max: 23 });
    for (const coordinate of [near, tiles, one, fc.oneof(near, one)]) {
      fc.assert(
        fc.property(fc.array(fc.tuple(coordinate, coordinate, coordinate), { minLength: 1, maxLength: 300 }), fc.integer({ min: 0, max: 3 }), (points, repeats) => {
          const coords = withRepeats(points, repeats);
          const got = leafOrdered(coords);
          expect(got).not.toBeNull();
          if (got === null) return;
          // a permutation of the points whose leaf keys (the build key without its 9 leaf voxel bits) never decrease
          expect([...got.order].sort((a, b) => a - b)).toEqual(Array.from({ length: coords.length / 3 }, (_, i) => i));
          const leafKey = (i: number): bigint => buildKey(coords[3 * i]!, coords[3 * i + 1]!, coords[3 * i + 2]!) >> 9n;
          for (let j = 1; j < got.order.length; j++) expect(leafKey(got.order[j]!) >= leafKey(got.order[j - 1]!)).toBe(true);
          const build = Int32Array.from(expected(coords).flatMap((i) => [coords[3 * i]!, coords[3 * i + 1]!, coords[3 * i + 2]!]));
          const { total } = planGrid(build, coords.length / 3, ON_INDEX_LAYOUT);
          expect(got.levels).toEqual([total.leaves, total.lowers, total.tiles]);
        }),
        { seed: 20261206, numRuns: 100 },
      );
    }
  });

  it('refuses a box wider than 64 key bits, as the build-order sort does', () => {
    expect(leafOrdered(Int32Array.from([-2147483648, -2147483648, -2147483648, 2147483647, 2147483647, 2147483647]))).toBeNull();
  });
});
