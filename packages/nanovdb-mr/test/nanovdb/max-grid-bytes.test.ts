import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { GridType, HostResource, StatisticsResource, countGridNodes, gridByteSize, pointsToGrid, voxelsToGrid } from '../../src/index.js';

// Three voxels: two in one leaf at the origin, one 5000 voxels away in x (its own root tile, lower node and leaf).
const COORDS = new Int32Array([0, 0, 0, 1, 0, 0, 5000, 0, 0]);
const NODES = { uppers: 2, lowers: 2, leaves: 2 };
const ON_INDEX_BYTES = 736 + 96 + 2 * (32 + 270400) + 2 * 33856 + 2 * 96;
const FLOAT_BYTES = 736 + 64 + 2 * (32 + 270400) + 2 * 33856 + 2 * 2144;

function message(bytes: number, cap: number, who: string): string {
  return `${who}: the grid takes ${bytes} bytes (${(bytes / 2 ** 20).toFixed(1)} MiB: 2 upper, 2 lower nodes, 2 leaves), above maxGridBytes ${cap}; use a larger voxel size or fewer points, or raise maxGridBytes`;
}

describe('maxGridBytes on the host builders', () => {
  const backend = new HostBackend();

  it('the grid sizes of the fixture, by hand and by gridByteSize', () => {
    expect(gridByteSize(GridType.OnIndex, NODES)).toBe(ON_INDEX_BYTES);
    expect(gridByteSize(GridType.Float, NODES)).toBe(FLOAT_BYTES);
  });

  for (const gridType of [GridType.OnIndex, GridType.Float] as const) {
    const bytes = gridType === GridType.OnIndex ? ON_INDEX_BYTES : FLOAT_BYTES;
    it(`pointsToGrid (${GridType[gridType]}, index points): one byte over the cap is refused before anything is allocated; at the cap it builds`, () => {
      const stats = new StatisticsResource(new HostResource(backend));
      const r = pointsToGrid(backend, stats, { space: 'index', coords: COORDS }, { gridType, maxGridBytes: bytes - 1 });
      expect(r.ok ? '' : `${r.error.code} ${r.error.message}`).toBe(`${ErrorCode.InvalidArgument} ${ErrorCode.InvalidArgument}: ${message(bytes, bytes - 1, 'pointsToGrid')}`);
      expect(stats.statistics.allocations.total).toBe(0);
      const built = unwrap(pointsToGrid(backend, stats, { space: 'index', coords: COORDS }, { gridType, maxGridBytes: bytes }));
      expect(built.grid(0)?.gridSize).toBe(bytes);
      built.dispose();
    });
  }

  it('pointsToGrid, world points: the cap uses the same voxel mapping as the build (voxel size and origin)', () => {
    const positions = new Float64Array([0.1, 0.1, 0.1, 0.3, 0.1, 0.1, 500.04, 0.1, 0.1]); // voxel size 0.1, origin 0.1: COORDS
    const options = { voxelSize: 0.1, origin: [0.1, 0.1, 0.1] as const };
    expect(unwrap(countGridNodes(positions, options))).toEqual({ voxels: 3, ...NODES });
    const stats = new StatisticsResource(new HostResource(backend));
    const r = pointsToGrid(backend, stats, { space: 'world', positions }, { gridType: GridType.OnIndex, ...options, maxGridBytes: 300_000 });
    expect(r.ok ? '' : r.error.message).toBe(`${ErrorCode.InvalidArgument}: ` + message(ON_INDEX_BYTES, 300_000, 'pointsToGrid'));
    expect(stats.statistics.allocations.total).toBe(0);
    // a voxel size 100 times larger puts every point in one root tile and lower node (two leaves): the grid fits
    const coarse = unwrap(pointsToGrid(backend, stats, { space: 'world', positions }, { gridType: GridType.OnIndex, voxelSize: 10, maxGridBytes: 400_000 }));
    expect(coarse.grid(0)?.nodeCount).toEqual([2, 1, 1]);
    expect(coarse.grid(0)?.gridSize).toBe(736 + 96 + 32 + 270400 + 33856 + 2 * 96);
    coarse.dispose();
  });

  it('pointsToGrid names a bad point before the cap, and refuses a cap that is not a positive integer, allocating nothing', () => {
    const stats = new StatisticsResource(new HostResource(backend));
    const nan = pointsToGrid(backend, stats, { space: 'world', positions: new Float32Array([0, 0, 0, Number.NaN, 0, 0]) }, { gridType: GridType.OnIndex, maxGridBytes: 1 << 20 });
    expect(nan.ok ? '' : nan.error.message).toContain('point 1 has a non-finite coordinate');
    for (const maxGridBytes of [0, -5, 2.5, Number.POSITIVE_INFINITY, Number.NaN]) {
      const r = pointsToGrid(backend, stats, { space: 'index', coords: COORDS }, { gridType: GridType.OnIndex, maxGridBytes });
      if (maxGridBytes === Number.POSITIVE_INFINITY) {
        // Infinity is the default: no cap
        unwrap(r).dispose();
        continue;
      }
      expect(r.ok ? '' : `${r.error.code} ${r.error.message}`).toBe(`${ErrorCode.InvalidArgument} ${ErrorCode.InvalidArgument}: pointsToGrid: maxGridBytes must be a positive integer (bytes), got ${String(maxGridBytes)}`);
    }
    expect(stats.statistics.allocations.total).toBe(2); // the one uncapped build: workspace and grid
  });

  it('voxelsToGrid: refused before anything is allocated for a fixed-leaf type; FpN is checked at its exact size before the grid', () => {
    const values = new Float32Array([0.5, -2, 7]);
    const stats = new StatisticsResource(new HostResource(backend));
    const r = voxelsToGrid(backend, stats, { coords: COORDS, values }, { gridType: GridType.Float, maxGridBytes: FLOAT_BYTES - 1 });
    expect(r.ok ? '' : `${r.error.code} ${r.error.message}`).toBe(`${ErrorCode.InvalidArgument} ${ErrorCode.InvalidArgument}: ${message(FLOAT_BYTES, FLOAT_BYTES - 1, 'voxelsToGrid')}`);
    expect(stats.statistics.allocations.total).toBe(0);
    unwrap(voxelsToGrid(backend, stats, { coords: COORDS, values }, { gridType: GridType.Float, maxGridBytes: FLOAT_BYTES })).dispose();

    const fpn = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: COORDS, values }, { gridType: GridType.FpN }));
    const fpnBytes = fpn.grid(0)?.gridSize as number;
    fpn.dispose();
    const before = stats.statistics.allocations.total;
    const refused = voxelsToGrid(backend, stats, { coords: COORDS, values }, { gridType: GridType.FpN, maxGridBytes: fpnBytes - 1 });
    expect(refused.ok ? '' : refused.error.message).toBe(`${ErrorCode.InvalidArgument}: ` + message(fpnBytes, fpnBytes - 1, 'voxelsToGrid'));
    // the node bytes fit, the codes do not: only the workspace was allocated, and it was returned
    expect(stats.statistics.allocations.total - before).toBe(1);
    expect(stats.statistics.allocations.current).toBe(0);
    unwrap(voxelsToGrid(backend, stats, { coords: COORDS, values }, { gridType: GridType.FpN, maxGridBytes: fpnBytes })).dispose();
  });
});
