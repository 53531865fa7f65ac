import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { GridType, HostResource, StatisticsResource, pointAttributesToGrid, pointsToGrid, type AttributeGridType, type PointAttributeArray, type PointReduction } from '../../src/index.js';

const backend = new HostBackend();

/** Deterministic pseudo-random numbers in [0, 1). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
}

/** The reference: points grouped by voxel in a Map (input order kept), each channel reduced straightforwardly. */
function reference(coords: Int32Array, values: PointAttributeArray, channels: number, reduction: PointReduction): Map<string, number[]> {
  const groups = new Map<string, number[][]>();
  for (let i = 0; i < coords.length / 3; i++) {
    const key = `${coords[3 * i]},${coords[3 * i + 1]},${coords[3 * i + 2]}`;
    const list = groups.get(key) ?? [];
    list.push([...values.subarray(channels * i, channels * i + channels)]);
    groups.set(key, list);
  }
  const out = new Map<string, number[]>();
  for (const [key, list] of groups) {
    const result: number[] = [];
    for (let c = 0; c < channels; c++) {
      const xs = list.map((v) => v[c] as number);
      const sum = xs.reduce((a, b) => a + b, 0);
      result.push(
        reduction === 'mean' ? sum / xs.length
        : reduction === 'sum' ? sum
        : reduction === 'min' ? Math.min(...xs)
        : reduction === 'max' ? Math.max(...xs)
        : reduction === 'count' ? xs.length
        : (xs[xs.length - 1] as number),
      );
    }
    out.set(key, result);
  }
  return out;
}

function cloud(n: number, seed: number): Int32Array {
  const r = random(seed);
  // a few dozen voxels, so most hold several points; some far away in other root tiles, some negative
  return Int32Array.from({ length: 3 * n }, (_, i) => Math.floor(r() * 6) - 3 + (i % 3 === 0 && i % 9 === 0 ? 5000 : 0));
}

describe('pointAttributesToGrid', () => {
  const n = 400;
  const coords = cloud(n, 7);
  const r = random(11);
  const f32 = Float32Array.from({ length: 4 * n }, () => r() * 200 - 100);
  const u8 = Uint8Array.from({ length: 4 * n }, () => Math.floor(r() * 256));
  const i16 = Int16Array.from({ length: n }, () => Math.floor(r() * 60000) - 30000);

  const cases: [AttributeGridType, PointAttributeArray, number, (v: number) => number][] = [
    [GridType.Float, f32.subarray(0, n), 1, Math.fround],
    [GridType.Double, i16, 1, (v) => v],
    [GridType.Int32, f32.subarray(0, n), 1, (v) => Math.sign(v) * Math.round(Math.abs(v))],
    [GridType.Vec3f, f32.subarray(0, 3 * n), 3, Math.fround],
    [GridType.RGBA8, u8, 4, (v) => Math.min(255, Math.max(0, Math.sign(v) * Math.round(Math.abs(v))))],
  ];
  for (const [gridType, values, channels, round] of cases) {
    for (const reduction of ['mean', 'sum', 'min', 'max', 'count', 'last'] as const) {
      it(`${GridType[gridType]} from ${values.constructor.name} x${channels}, ${reduction}: every voxel holds the reference value, the topology is pointsToGrid's`, () => {
        const ch = reduction === 'count' && channels !== (gridType === GridType.Vec3f ? 3 : gridType === GridType.RGBA8 ? 4 : 1) ? 1 : channels;
        const handle = unwrap(pointAttributesToGrid(backend, new HostResource(backend), { space: 'index', coords }, { values, channels: ch, reduction }, { gridType }));
        const acc = unwrap(handle.accessor());
        const expected = reference(coords, values, channels, reduction);
        const out = new Float64Array(4);
        for (const [key, want] of expected) {
          const [x, y, z] = key.split(',').map(Number) as [number, number, number];
          expect(acc.isActive(x, y, z)).toBe(true);
          const got = want.length === 1 ? [acc.getValue(x, y, z)] : [...acc.getVector(x, y, z, out).subarray(0, want.length)];
          expect(got).toEqual(want.map(round));
        }
        const topology = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, { gridType: GridType.OnIndex }));
        expect(handle.grid(0)?.voxelCount).toBe(expected.size);
        expect(handle.grid(0)?.nodeCount).toEqual(topology.grid(0)?.nodeCount);
        expect(handle.grid(0)?.indexBBox).toEqual(topology.grid(0)?.indexBBox);
        topology.dispose();
        handle.dispose();
      });
    }
  }

  it('hand-checked accumulation and rounding: float64 sums in input order, Int32 ties away from zero, RGBA8 clamped', () => {
    const three = new Int32Array([0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9]);
    const build = (gridType: AttributeGridType, values: PointAttributeArray, channels: number, reduction: PointReduction) =>
      unwrap(pointAttributesToGrid(backend, new HostResource(backend), { space: 'index', coords: three }, { values, channels, reduction }, { gridType }));
    // 1e8 + 1 - 1e8 is 1 in float64 (0 in float32 accumulation)
    const sum = build(GridType.Float, new Float32Array([1e8, 1, -1e8, 0.5, 0.25]), 1, 'sum');
    expect([unwrap(sum.accessor()).getValue(0, 0, 0), unwrap(sum.accessor()).getValue(9, 9, 9)]).toEqual([1, 0.75]);
    sum.dispose();
    const int = build(GridType.Int32, new Int32Array([-1, -2, -3, 1, 2]), 1, 'mean'); // -2 and 1.5
    expect([unwrap(int.accessor()).getValue(0, 0, 0), unwrap(int.accessor()).getValue(9, 9, 9)]).toEqual([-2, 2]);
    int.dispose();
    const half = build(GridType.Int32, new Float64Array([-1, -2, -2, 0, 0]), 1, 'mean'); // (-1 - 2 - 2) / 3
    expect(unwrap(half.accessor()).getValue(0, 0, 0)).toBe(-2);
    half.dispose();
    const tie = build(GridType.Int32, new Float64Array([-0.5, -0.5, -0.5, 0, 0]), 1, 'mean');
    expect(unwrap(tie.accessor()).getValue(0, 0, 0)).toBe(-1);
    tie.dispose();
    const rgba = build(GridType.RGBA8, new Float32Array([300, -5, 10.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]), 4, 'max');
    expect([...unwrap(rgba.accessor()).getVector(0, 0, 0, new Float64Array(4))]).toEqual([255, 0, 11, 0]); // 300 clamped, 10.5 a tie away from zero
    rgba.dispose();
  });

  it('Mask grids: the voxels only; world points map as in pointsToGrid', () => {
    const positions = Float64Array.from(coords, (c) => c * 0.1 + 0.05);
    const handle = unwrap(pointAttributesToGrid(backend, new HostResource(backend), { space: 'world', positions }, { values: i16, channels: 1, reduction: 'count' }, { gridType: GridType.Mask, voxelSize: 0.1, origin: [0.05, 0.05, 0.05] }));
    expect(handle.grid(0)?.voxelCount).toBe(reference(coords, i16, 1, 'count').size);
    handle.dispose();
  });

  it('refuses a bad attribute before anything is allocated, naming it', () => {
    const stats = new StatisticsResource(new HostResource(backend));
    const bad: [unknown, string][] = [
      [{ values: f32.subarray(0, n - 1), channels: 1, reduction: 'mean' }, `attributes.values holds ${n - 1} numbers; ${n} points of 1 channels need ${n}`],
      [{ values: [1, 2], channels: 1, reduction: 'mean' }, 'attributes.values must be a Float32Array'],
      [{ values: new BigInt64Array(n), channels: 1, reduction: 'mean' }, 'attributes.values must be a Float32Array'],
      [{ values: f32.subarray(0, n), channels: 0, reduction: 'mean' }, 'attributes.channels must be 1, 2, 3 or 4, got 0'],
      [{ values: f32.subarray(0, 5 * n), channels: 5, reduction: 'mean' }, 'attributes.channels must be 1, 2, 3 or 4, got 5'],
      [{ values: f32.subarray(0, n), channels: 1, reduction: 'median' }, 'attributes.reduction must be one of mean, sum, min, max, count, last, got median'],
      [{ values: f32.subarray(0, 2 * n), channels: 2, reduction: 'mean' }, 'a Float grid takes 1 channels per voxel, the attribute has 2'],
    ];
    for (const [attributes, message] of bad) {
      const result = pointAttributesToGrid(backend, stats, { space: 'index', coords }, attributes as never, { gridType: GridType.Float });
      expect(result.ok ? '' : `${result.error.code} ${result.error.message}`).toContain(`${ErrorCode.InvalidArgument}: pointAttributesToGrid: ${message}`);
    }
    const type = pointAttributesToGrid(backend, stats, { space: 'index', coords }, { values: f32.subarray(0, n), channels: 1, reduction: 'sum' }, { gridType: GridType.Index as never });
    expect(type.ok ? '' : type.error.message).toContain('gridType must be Float, Double, Int32, Vec3f, RGBA8, Mask or OnIndex');
    expect(stats.statistics.allocations.total).toBe(0);
  });
});
