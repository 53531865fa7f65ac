import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { GridType, HostResource, mergeRootTileGrids, planRootTilePartition, pointsToGrid } from '../../src/index.js';

const backend = new HostBackend();
const resource = new HostResource(backend);
/** The full-checksum OnIndex grid of world points, as bytes. */
const build = (positions: Float64Array, voxelSize: number, checksum: 'full' | 'disabled' = 'full'): Uint8Array => {
  const g = unwrap(pointsToGrid(backend, resource, { space: 'world', positions }, { gridType: GridType.OnIndex, voxelSize, name: 'parts', checksum }));
  const bytes = unwrap(g.hostBytes()).slice();
  g.dispose();
  return bytes;
};

/** Deterministic points in clusters around `centres` (world units). */
function clusters(centres: readonly (readonly [number, number, number, number])[], spread: number, seed = 3): Float64Array {
  const values: number[] = [];
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (const [x, y, z, n] of centres) for (let i = 0; i < n; i++) values.push(x + spread * (random() - 0.5), y + spread * (random() - 0.5), z + spread * (random() - 0.5));
  return new Float64Array(values);
}

/** Each point to its part's list, in order. */
function splitPoints(positions: Float64Array, partOf: (x: number, y: number, z: number) => number, k: number): Float64Array[] {
  const parts: number[][] = Array.from({ length: k }, () => []);
  for (let i = 0; i < positions.length; i += 3) parts[partOf(positions[i]!, positions[i + 1]!, positions[i + 2]!)]!.push(positions[i]!, positions[i + 1]!, positions[i + 2]!);
  return parts.map((p) => new Float64Array(p));
}

describe('planRootTilePartition + mergeRootTileGrids: builds of the parts merge into the one-build bytes', () => {
  const cloud = clusters(
    [
      [-9000, 100, 50, 40],
      [-5000, -3000, 10, 300],
      [2000, 6000, -7000, 120],
      [7000, 7000, 9000, 15],
      [9000, -8000, 200, 200],
      [100, -100, 5000, 90],
      [100, -100, -5000, 90],
    ],
    400,
  );
  for (const k of [1, 2, 3, 4, 7, 9]) {
    it(`${k} parts`, () => {
      const split = unwrap(planRootTilePartition(cloud, k, { voxelSize: 1 }));
      expect(split.partCount).toBe(k);
      expect(split.pointCounts.reduce((a, b) => a + b, 0)).toBe(cloud.length / 3);
      const parts = splitPoints(cloud, (x, y, z) => split.partOf(x, y, z), k);
      expect(parts.map((p) => p.length / 3)).toEqual(split.pointCounts);
      const one = build(cloud, 1);
      const out = new Uint8Array(one.byteLength + 100).fill(0xee);
      const size = unwrap(mergeRootTileGrids(parts.map((p) => build(p, 1, 'disabled')), out, 'full'));
      expect(size).toBe(one.byteLength);
      expect(Buffer.compare(out.subarray(0, size), one)).toBe(0);
      expect(out.subarray(size).every((b) => b === 0xee)).toBe(true); // bytes past the grid left as they were
    });
  }

  it('splits into runs of about equal point counts, and a part gets no tile when there are fewer tiles than parts', () => {
    const two = unwrap(planRootTilePartition(new Float64Array([0, 0, 0, 1, 1, 1, 5000, 0, 0, 5001, 0, 0]), 2));
    expect([two.pointCounts, two.tileCounts]).toEqual([
      [2, 2],
      [1, 1],
    ]);
    const few = unwrap(planRootTilePartition(new Float64Array([0, 0, 0, 5000, 0, 0]), 4));
    expect(few.pointCounts.filter((c) => c > 0).length).toBe(2);
    expect(few.tileCounts.reduce((a, b) => a + b, 0)).toBe(2);
  });

  it('every part of a frame may be empty or not: empty parts merge away, all empty gives the empty grid', () => {
    const a = new Float64Array([0, 0, 0, 3, 4, 5]);
    const b = new Float64Array([5000, 1, 2]);
    const empty = build(new Float64Array(0), 1);
    const out = new Uint8Array(1 << 20);
    for (const parts of [[empty, build(a, 1), empty, build(b, 1)], [build(a, 1), empty, build(b, 1), empty]]) {
      const size = unwrap(mergeRootTileGrids(parts, out, 'full'));
      expect(Buffer.compare(out.subarray(0, size), build(new Float64Array([...a, ...b]), 1))).toBe(0);
    }
    const size = unwrap(mergeRootTileGrids([empty, empty, empty], out, 'full'));
    expect(Buffer.compare(out.subarray(0, size), empty)).toBe(0);
  });

  it('refuses parts out of build order, a short out, and bad inputs', () => {
    const low = build(new Float64Array([-9000, 0, 0]), 1);
    const high = build(new Float64Array([5000, 0, 0]), 1);
    const out = new Uint8Array(1 << 20);
    const swapped = mergeRootTileGrids([high, low], out, 'full');
    expect(swapped.ok ? null : [swapped.error.code, swapped.error.detail]).toEqual([ErrorCode.InvalidArgument, "mergeRootTileGrids: part 1's first root tile does not follow the previous parts' tiles in build order"]);
    const short = mergeRootTileGrids([low, high], new Uint8Array(100), 'full');
    expect(short.ok ? null : short.error.detail).toMatch(/^mergeRootTileGrids: the merged grid takes \d+ bytes, out holds 100$/);
    expect(mergeRootTileGrids([], out, 'full').ok).toBe(false);
    expect(mergeRootTileGrids([new Uint8Array(10)], out, 'full').ok).toBe(false);
    const split = unwrap(planRootTilePartition(new Float64Array([0, 0, 0]), 1));
    expect([split.partOf(Number.NaN, 0, 0), split.partOf(1e300, 0, 0), split.partOf(0, 0, 0)]).toEqual([-1, -1, 0]);
    for (const [positions, k] of [
      [new Float64Array([0, 0]), 1],
      [new Float64Array([0, 0, 0]), 0],
      [new Float64Array([0, 0, 0]), 1.5],
      [new Float64Array([Number.NaN, 0, 0]), 2],
    ] as const) {
      const planned = planRootTilePartition(positions, k);
      expect(planned.ok ? null : planned.error.code).toBe(ErrorCode.InvalidArgument);
    }
  });
});
