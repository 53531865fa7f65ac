import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { GridType, HostResource, pointsToGrid, type PointsToGridOptions } from '../../src/index.js';
import { mergeGridsByRootTiles, planGridMerge } from '../../src/nanovdb/build/grid-merge.js';
import { describeDistributedPointsToGrid, distributedCases, tiledPoints } from './distributed-points-to-grid-suite.js';

// The launches run their host implementations on simulated devices: the logic CI checks without a GPU.
describeDistributedPointsToGrid('HostBackend({ deviceCount: 2 })', () => new HostBackend({ deviceCount: 2 }), [Device.cuda(0), Device.cuda(1)], 1500);
describeDistributedPointsToGrid('HostBackend({ deviceCount: 3 })', () => new HostBackend({ deviceCount: 3 }), [Device.cuda(0), Device.cuda(1), Device.cuda(2)], 1500);
describeDistributedPointsToGrid('HostBackend({ deviceCount: 4 })', () => new HostBackend({ deviceCount: 4 }), [Device.cuda(0), Device.cuda(1), Device.cuda(2), Device.cuda(3)], 1500);
// devices that do not reach each other: the split's parts and the merge's nodes go through the host
describeDistributedPointsToGrid('HostBackend without peer access', () => new HostBackend({ deviceCount: 2, peerAccess: false, orderingChecker: true }), [Device.cuda(0), Device.cuda(1)], 600);
describeDistributedPointsToGrid('HostBackend with seeded interleaving and the ordering checker', () => new HostBackend({ deviceCount: 2, seed: 5, orderingChecker: true }), [Device.cuda(0), Device.cuda(1)], 300);
describeDistributedPointsToGrid('HostBackend, two streams of one device', () => new HostBackend(), [Device.cuda(0), Device.cuda(0)], 300);
describeDistributedPointsToGrid('HostBackend, three streams of two devices', () => new HostBackend({ deviceCount: 2, orderingChecker: true }), [Device.cuda(0), Device.cuda(1), Device.cuda(0)], 300);

/** The root tile of an index coordinate, biased as the build orders it. */
const tileOf = (c: number): number => ((c ^ 0x80000000) >>> 12) & 0x1fffff;

describe('mergeGridsByRootTiles on grids of the host builder', () => {
  const backend = new HostBackend();
  const resource = new HostResource(backend);
  const build = (coords: Int32Array, options: PointsToGridOptions): Uint8Array => {
    const g = unwrap(pointsToGrid(backend, resource, { space: 'index', coords }, options));
    const bytes = unwrap(g.hostBytes()).slice();
    g.dispose();
    return bytes;
  };
  /** Splits index points at root-tile x coordinate boundaries into `k` parts (tiles ordered by x first). */
  const splitByX = (coords: Int32Array, cuts: readonly number[]): Int32Array[] => {
    const parts: number[][] = cuts.map(() => []);
    parts.push([]);
    for (let i = 0; i < coords.length; i += 3) {
      const t = tileOf(coords[i] as number);
      let p = 0;
      while (p < cuts.length && t >= (cuts[p] as number)) p++;
      parts[p]!.push(coords[i] as number, coords[i + 1] as number, coords[i + 2] as number);
    }
    return parts.map((p) => new Int32Array(p));
  };

  for (const c of distributedCases(800).filter((x) => x.points.space === 'index')) {
    it(`merges split host builds into the one build: ${c.name}`, () => {
      const coords = (c.points as { coords: Int32Array }).coords;
      const whole = build(coords, c.options);
      const parts = splitByX(coords, [tileOf(-4096), tileOf(0), tileOf(4096)]).map((p) => build(p, { ...c.options, checksum: 'disabled' }));
      const plan = unwrap(planGridMerge(parts));
      const out = new Uint8Array(plan.gridSize);
      mergeGridsByRootTiles(parts, plan, out, c.options.checksum ?? 'full');
      expect(out.length).toBe(whole.length);
      expect(out.findIndex((b, i) => b !== whole[i])).toBe(-1);
    });
  }

  it('refuses parts out of order, of other types or settings, and with blind data', () => {
    const a = build(new Int32Array([0, 0, 0]), { gridType: GridType.OnIndex });
    const b = build(new Int32Array([9000, 0, 0]), { gridType: GridType.OnIndex });
    const f = build(new Int32Array([9000, 0, 0]), { gridType: GridType.Float });
    const named = build(new Int32Array([9000, 0, 0]), { gridType: GridType.OnIndex, name: 'x' });
    expect(planGridMerge([a, b]).ok).toBe(true);
    for (const parts of [[b, a], [a, a], [a, f], [a, named], [], [a, new Uint8Array(10)], [a, b.subarray(0, b.length - 1)]]) {
      const r = planGridMerge(parts);
      expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
    }
  });
});
