import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { GridType, HostResource, countGridNodes, gridByteSize, pointsToGrid, validateGrids } from '../../src/index.js';

const backend = new HostBackend();
const resource = new HostResource(backend);

/** Builds the grid and returns its node counts, voxel count and bytes. */
function built(positions: Float64Array, gridType: GridType.OnIndex | GridType.Float, voxelSize: number, origin: [number, number, number]) {
  const handle = unwrap(pointsToGrid(backend, resource, { space: 'world', positions }, { gridType, voxelSize, origin, checksum: 'disabled' }));
  const grid = handle.grid(0)!;
  // the handle's metadata come from the headers pointsToGrid wrote: hold them to what validation reads of the nodes
  expect(unwrap(validateGrids(unwrap(handle.hostBytes())))).toEqual([grid]);
  const [leaves, lowers, uppers] = grid.nodeCount;
  const figures = { counts: { voxels: grid.voxelCount, leaves, lowers, uppers }, bytes: grid.gridSize };
  handle.dispose();
  return figures;
}

describe('countGridNodes and gridByteSize', () => {
  it('predict the node counts and bytes of the grid pointsToGrid builds (OnIndex and Float, spread clouds)', () => {
    const coordinate = fc.double({ min: -20000, max: 20000, noNaN: true });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(coordinate, coordinate, coordinate), { minLength: 1, maxLength: 200 }),
        fc.constantFrom(0.05, 0.5, 1, 7.25),
        fc.constantFrom<GridType.OnIndex | GridType.Float>(GridType.OnIndex, GridType.Float),
        fc.tuple(fc.integer({ min: -50, max: 50 }), fc.integer({ min: -50, max: 50 }), fc.integer({ min: -50, max: 50 })),
        (points, voxelSize, gridType, origin) => {
          const positions = Float64Array.from(points.flat());
          const expected = built(positions, gridType, voxelSize, origin);
          const counts = unwrap(countGridNodes(positions, { voxelSize, origin }));
          expect(counts).toEqual(expected.counts);
          expect(gridByteSize(gridType, counts)).toBe(expected.bytes);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('counts a tiny voxel size as one upper node per point, the case a cap must refuse before building', () => {
    const positions = Float32Array.from([0, 0, 0, 0.001, 0, 0, 0, 0.002, 0]);
    const counts = unwrap(countGridNodes(positions, { voxelSize: 0.0000001 }));
    expect(counts).toEqual({ voxels: 3, leaves: 3, lowers: 3, uppers: 3 });
    expect(gridByteSize(GridType.OnIndex, counts)).toBeGreaterThan(3 * 270_400);
    expect(unwrap(countGridNodes(new Float64Array(0)))).toEqual({ voxels: 0, leaves: 0, lowers: 0, uppers: 0 });
  });

  it('reject bad input with typed errors naming the problem', () => {
    const nan = countGridNodes(Float64Array.from([0, 0, 0, 1, Number.NaN, 1]), { voxelSize: 1 });
    expect(nan.ok ? undefined : [nan.error.code, nan.error.message]).toEqual([ErrorCode.InvalidArgument, expect.stringContaining('countGridNodes: point 1 has a non-finite coordinate')]);
    expect(nan.ok ? undefined : nan.error.message).toBe('InvalidArgument: countGridNodes: point 1 has a non-finite coordinate (1, NaN, 1); remove NaN and infinite points first');
    const far = countGridNodes(Float64Array.from([1e12, 0, 0]), { voxelSize: 0.001 });
    expect(far.ok ? undefined : far.error.message).toBe(
      'InvalidArgument: countGridNodes: point 0 (1000000000000, 0, 0) maps to a voxel index outside the 32-bit range (-2^31 to 2^31 - 1) at voxel size 0.001; use a larger voxel size or another origin',
    );
    const ragged = countGridNodes(new Float64Array(4));
    expect(ragged.ok ? undefined : ragged.error.message).toContain('not a multiple of 3');
    const voxel = countGridNodes(new Float64Array(3), { voxelSize: 0 });
    expect(voxel.ok ? undefined : voxel.error.message).toContain('voxelSize must be a positive finite number');
    expect(() => countGridNodes([0, 0, 0] as unknown as Float64Array)).toThrow(/Float32Array or Float64Array/);
    expect(() => gridByteSize(99 as GridType, { uppers: 1, lowers: 1, leaves: 1 })).toThrow(/gridType must be/);
    expect(() => gridByteSize(GridType.OnIndex, { uppers: -1, lowers: 1, leaves: 1 })).toThrow(/non-negative integer/);
    expect(() => gridByteSize(GridType.OnIndex, { uppers: 1.5, lowers: 1, leaves: 1 })).toThrow(/non-negative integer/);
  });
});
