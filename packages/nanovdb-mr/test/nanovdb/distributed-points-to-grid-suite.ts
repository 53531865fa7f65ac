import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, HsError, unwrap, type Backend, type Device, type Stream } from '@hs/streams';
import {
  AsyncFromSync,
  DeviceResource,
  FaultyResource,
  GridType,
  HostResource,
  StatisticsResource,
  distributedPointsToGrid,
  pointsToGrid,
  validateGrids,
  type AsyncResource,
  type IndexPoints,
  type MemoryBlock,
  type PointsToGridOptions,
  type WorldPoints,
} from '../../src/index.js';
import { indexPoints, random } from './stream-points-to-grid-suite.js';

/** A named cloud and the options to build it with. */
export interface DistributedCase {
  readonly name: string;
  readonly points: IndexPoints | WorldPoints;
  readonly options: PointsToGridOptions;
}

/** Points around several root tiles (4096 voxels apart), some tiles far denser than others. */
export function tiledPoints(n: number, seed: number): Int32Array {
  const next = random(seed);
  const out = new Int32Array(3 * n);
  for (let i = 0; i < n; i++) {
    const tile = next() < 0.7 ? 0 : Math.floor(next() * 6);
    out[3 * i] = (tile - 3) * 4096 + Math.floor(next() * 300);
    out[3 * i + 1] = ((tile % 2) - 1) * 4096 + Math.floor(next() * 200);
    out[3 * i + 2] = Math.floor(next() * 100) - 50;
  }
  return out;
}

/** The identity cases: many clouds, both grid types, every checksum mode. */
export function distributedCases(points: number): DistributedCase[] {
  const uniform = indexPoints(points, 'uniform', 20000, 11);
  const clustered = indexPoints(points, 'clustered', 9000, 12);
  const tiled = tiledPoints(points, 13);
  const oneTile = indexPoints(points, 'uniform', 1000, 14).map((c) => Math.abs(c));
  const negative = indexPoints(points, 'uniform', 9000, 15).map((c) => -Math.abs(c) - 1);
  const duplicates = new Int32Array(3 * points).map((_, i) => (Math.floor(i / 30) % 7) * 4096 + (i % 3));
  const worldF32 = new Float32Array(indexPoints(points, 'clustered', 9000, 16)).map((c) => c * 0.013);
  const worldF64 = new Float64Array(indexPoints(points, 'uniform', 9000, 17)).map((c) => c * 0.0071 - 3);
  const one = new Int32Array([-5000, 7, 9]);
  const cases: DistributedCase[] = [];
  for (const gridType of [GridType.OnIndex, GridType.Float] as const) {
    const t = GridType[gridType];
    cases.push(
      { name: `${t} uniform`, points: { space: 'index', coords: uniform }, options: { gridType } },
      { name: `${t} clustered, partial checksum`, points: { space: 'index', coords: clustered }, options: { gridType, checksum: 'partial' } },
      { name: `${t} uneven tiles, no checksum`, points: { space: 'index', coords: tiled }, options: { gridType, checksum: 'disabled', name: 'tiles' } },
      { name: `${t} one tile (all points in one part)`, points: { space: 'index', coords: oneTile }, options: { gridType } },
      { name: `${t} negative coordinates`, points: { space: 'index', coords: negative }, options: { gridType } },
      { name: `${t} duplicates`, points: { space: 'index', coords: duplicates }, options: { gridType } },
      { name: `${t} world f32`, points: { space: 'world', positions: worldF32 }, options: { gridType, voxelSize: 0.05, origin: [0.3, -1, 2] } },
      { name: `${t} world f64`, points: { space: 'world', positions: worldF64 }, options: { gridType, voxelSize: 0.02 } },
      { name: `${t} one point (empty parts)`, points: { space: 'index', coords: one }, options: { gridType } },
      { name: `${t} no points`, points: { space: 'index', coords: new Int32Array(0) }, options: { gridType } },
    );
  }
  cases.push({ name: 'Float with a background and class', points: { space: 'index', coords: tiled }, options: { gridType: GridType.Float, background: -2.5, gridClass: 2 } });
  return cases;
}

/** Streams and resources of one build. */
interface Fixture {
  readonly backend: Backend;
  readonly streams: Stream[];
  readonly resources: StatisticsResource<AsyncResource>[];
}

async function readBack(f: Fixture, stream: Stream, data: MemoryBlock | null, size: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(size);
  if (data !== null) unwrap(f.backend.copyToHostAsync(stream, bytes, data));
  await f.backend.synchronizeStream(stream);
  return bytes;
}

/** -1 when equal, -2 for other lengths, else the first differing byte. */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return -2;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

async function rejection(call: () => Promise<unknown>): Promise<unknown> {
  return call().then(
    () => null,
    (e: unknown) => e,
  );
}

/**
 * The identity, refusal and release tests of `distributedPointsToGrid` on `devices` (one stream and one
 * DeviceResource per entry), each case compared with the host `pointsToGrid` byte for byte.
 */
export function describeDistributedPointsToGrid(label: string, makeBackend: () => Backend, devices: readonly Device[], points: number): void {
  describe(`distributedPointsToGrid on ${label}, ${devices.length} parts`, () => {
    let f: Fixture;
    beforeAll(() => {
      const backend = makeBackend();
      f = {
        backend,
        streams: devices.map((d) => unwrap(backend.createStream(d))),
        resources: devices.map((d) => new StatisticsResource(new DeviceResource(backend, d))),
      };
    });
    afterAll(() => {
      for (const s of f.streams) unwrap(f.backend.destroyStream(s));
      f.backend.dispose();
    });
    const balanced = async (): Promise<void> => {
      for (const s of f.streams) await f.backend.synchronizeStream(s);
      for (const r of f.resources) expect(r.statistics.bytes.current).toBe(0);
    };

    for (const c of distributedCases(points)) {
      it(`is byte-identical to one build: ${c.name}`, async () => {
        const one = unwrap(pointsToGrid(f.backend, new HostResource(f.backend), c.points, c.options));
        const expected = unwrap(one.hostBytes()).slice();
        one.dispose();
        unwrap(validateGrids(expected)); // pointsToGrid does not validate its own grid: the reference must pass validation
        const built = await distributedPointsToGrid(f.backend, c.points, f.streams, f.resources, c.options);
        expect(built.gridSize).toBe(expected.length);
        const bytes = await readBack(f, f.streams[0] as Stream, built.buffer.data, built.gridSize);
        expect(firstDifference(bytes, expected)).toBe(-1);
        const grid = new DataView(bytes.buffer);
        expect(built.counts.voxels).toBe(Number(grid.getBigUint64(672 + 56, true)));
        expect(built.counts.uppers).toBe(grid.getUint32(672 + 40, true));
        expect(validateGrids(bytes).ok).toBe(true);
        built.buffer.dispose();
        await balanced();
      });
    }

    it('spreads the points of several tiles over the parts (every part builds)', async () => {
      const coords = tiledPoints(points, 21).map((c, i) => (i % 3 === 0 ? c + (Math.floor(i / 3) % devices.length) * 32768 : c));
      const before = f.resources.map((r) => r.statistics.bytes.total);
      const built = await distributedPointsToGrid(f.backend, { space: 'index', coords }, f.streams, f.resources, { gridType: GridType.OnIndex });
      const totals = f.resources.map((r, i) => r.statistics.bytes.total - (before[i] as number));
      for (const t of totals) expect(t).toBeGreaterThan(0);
      built.buffer.dispose();
      await balanced();
    });

    it('refuses bad input with InvalidArgument before any allocation', async () => {
      const p: IndexPoints = { space: 'index', coords: new Int32Array([1, 2, 3]) };
      const o: PointsToGridOptions = { gridType: GridType.OnIndex };
      const host = new AsyncFromSync(f.backend, new HostResource(f.backend));
      const bad: [string, () => Promise<unknown>][] = [
        ['no streams', () => distributedPointsToGrid(f.backend, p, [], [], o)],
        ['length mismatch', () => distributedPointsToGrid(f.backend, p, f.streams, f.resources.slice(1), o)],
        ['not a resource', () => distributedPointsToGrid(f.backend, p, f.streams, f.streams.map(() => ({}) as AsyncResource), o)],
        ['bad points', () => distributedPointsToGrid(f.backend, { space: 'index', coords: new Float32Array(3) } as never, f.streams, f.resources, o)],
        ['not triplets', () => distributedPointsToGrid(f.backend, { space: 'index', coords: new Int32Array(4) }, f.streams, f.resources, o)],
        ['bad grid type', () => distributedPointsToGrid(f.backend, p, f.streams, f.resources, { gridType: GridType.Double as never })],
        ['bad voxel size', () => distributedPointsToGrid(f.backend, p, f.streams, f.resources, { gridType: GridType.Float, voxelSize: -1 })],
        ['attributes', () => distributedPointsToGrid(f.backend, p, f.streams, f.resources, { ...o, attributes: {} } as never)],
        ['a host resource', () => distributedPointsToGrid(f.backend, p, f.streams, f.resources.map((r, i) => (i === 0 ? host : r)), o)],
      ];
      const second = devices.find((d) => d !== devices[0]);
      if (second !== undefined) {
        const swapped = f.resources.map((r, i) => (i === 0 ? new DeviceResource(f.backend, second) : r));
        bad.push(['a resource of another device', () => distributedPointsToGrid(f.backend, p, f.streams, swapped, o)]);
      }
      const totals = f.resources.map((r) => r.statistics.bytes.total);
      for (const [what, call] of bad) {
        const error = await rejection(call);
        expect(error, what).toBeInstanceOf(HsError);
        expect((error as HsError).code, what).toBe(ErrorCode.InvalidArgument);
      }
      expect(f.resources.map((r) => r.statistics.bytes.total)).toEqual(totals);
    });

    it('finds the first point that maps to no voxel on the device, names it and frees everything', async () => {
      const o: PointsToGridOptions = { gridType: GridType.OnIndex, voxelSize: 0.5 };
      const base = new Float64Array(indexPoints(points, 'uniform', 20000, 23)).map((c) => c * 0.5);
      const bad: [string, Float32Array | Float64Array, number, number, string][] = [
        ['f32 NaN', new Float32Array(base), Math.floor(points / 2), Number.NaN, 'non-finite'],
        ['f64 infinity', base.slice(), points - 1, Number.NEGATIVE_INFINITY, 'non-finite'],
        ['f64 out of range', base.slice(), 1, 2e9, 'outside the 32-bit range'],
      ];
      for (const [what, positions, at, value, reason] of bad) {
        positions[3 * at + 1] = value;
        // a later bad point too: the first one is named
        if (at + 1 < points) positions[3 * (points - 1)] = Number.NaN;
        const error = (await rejection(() => distributedPointsToGrid(f.backend, { space: 'world', positions }, f.streams, f.resources, o))) as HsError;
        expect(error, what).toBeInstanceOf(HsError);
        expect(error.code, what).toBe(ErrorCode.InvalidArgument);
        expect(error.message, what).toContain(`point ${at} `);
        expect(error.message, what).toContain(reason);
        await balanced();
      }
      const nan: WorldPoints = { space: 'world', positions: new Float32Array([0, 0, 0, 1, Number.NaN, 0]) };
      expect(((await rejection(() => distributedPointsToGrid(f.backend, nan, f.streams, f.resources, o))) as HsError).message).toContain('point 1 has a non-finite coordinate (1, NaN, 0)');
      await balanced();
    });

    it('frees every part when an allocation of any part or of the merged grid fails', async () => {
      const coords = tiledPoints(points, 21).map((c, i) => (i % 3 === 0 ? c + (Math.floor(i / 3) % devices.length) * 32768 : c));
      let failures = 0;
      for (let part = 0; part < devices.length; part++) {
        // part 0 allocates the uploaded cloud, the split's meta block and the points in part order; part i its
        // input, workspace and grid; part 0 then the merged grid and the checksum scratch
        for (let failAt = 1; failAt <= 8; failAt++) {
          const resources = f.resources.map((r, i) => (i === part ? new FaultyResource(r, { failAt }) : r));
          const outcome = await distributedPointsToGrid(f.backend, { space: 'index', coords }, f.streams, resources, { gridType: GridType.OnIndex }).then(
            (built) => {
              built.buffer.dispose();
              return null;
            },
            (e: unknown) => e,
          );
          if (outcome !== null) {
            failures++;
            expect((outcome as HsError).code).toBe(ErrorCode.OutOfMemory);
          }
          await balanced();
        }
      }
      expect(failures).toBe(3 * devices.length + 5);
    });

    it('refuses a merged grid above maxGridBytes and frees everything', async () => {
      const coords = tiledPoints(points, 31);
      const one = unwrap(pointsToGrid(f.backend, new HostResource(f.backend), { space: 'index', coords }, { gridType: GridType.OnIndex }));
      const size = one.grid()?.gridSize as number;
      one.dispose();
      const error = (await rejection(() => distributedPointsToGrid(f.backend, { space: 'index', coords }, f.streams, f.resources, { gridType: GridType.OnIndex, maxGridBytes: size - 1 }))) as HsError;
      expect(error.code).toBe(ErrorCode.InvalidArgument);
      expect(error.message).toContain('maxGridBytes');
      await balanced();
    });
  });
}
