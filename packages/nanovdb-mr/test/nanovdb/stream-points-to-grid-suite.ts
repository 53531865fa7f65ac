import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, OK_VOID, unwrap, type Backend, type MemoryRange, type Result, type Stream } from '@hs/streams';
import {
  AsyncFromSync,
  BoundedPointsToGrid,
  ResourceBuffer,
  BufferView,
  DeviceResource,
  GridType,
  HostResource,
  ManagedResource,
  StatisticsResource,
  countGridNodes,
  pointsToGrid,
  pointsToGridAsync,
  validateGrids,
  type MemoryBlock,
  type PointsToGridCapacity,
  type PointsToGridOptions,
  type SyncResource,
} from '../../src/index.js';

type Coords = Int32Array | Float32Array | Float64Array;

/** Deterministic pseudo-random numbers in [0, 1). */
export function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 4294967296;
  };
}

/** `n` index points: `uniform` over [-r, r)^3, or clustered on a few sphere shells (bunny-like surfaces). */
export function indexPoints(n: number, kind: 'uniform' | 'clustered', r: number, seed: number): Int32Array {
  const next = random(seed);
  const out = new Int32Array(3 * n);
  for (let i = 0; i < n; i++) {
    if (kind === 'uniform') {
      for (let a = 0; a < 3; a++) out[3 * i + a] = Math.floor((2 * next() - 1) * r);
    } else {
      const c = Math.floor(next() * 4);
      const u = 2 * next() - 1;
      const t = 2 * Math.PI * next();
      const s = Math.sqrt(1 - u * u);
      const radius = r * (0.2 + 0.1 * c);
      out[3 * i] = Math.round(c * r * 0.3 + radius * s * Math.cos(t));
      out[3 * i + 1] = Math.round(-c * r * 0.2 + radius * s * Math.sin(t));
      out[3 * i + 2] = Math.round(radius * u);
    }
  }
  return out;
}

/**
 * Index points whose voxel range spans `bits` bits per axis from 0 (both ends present, so the device's packed sort
 * key is bits[0] + bits[1] + bits[2] bits wide): a few far points spread over the range, then a dense cluster with
 * duplicates near the origin. 96 bits ([32, 32, 32], from -2^31 to 2^31 - 1) and 64 take the device sort's stable
 * passes for keys wider than 63 bits; 63 is the widest of the one sort. Below that the device sort runs only the
 * 8-bit passes the key needs (its branches end at 8, 16, ..., 64 bits; one bit more when invalid points are among
 * the keys).
 */
export function spanPoints(bits: readonly [number, number, number], far: number, cluster: number, seed: number): Int32Array {
  const next = random(seed);
  const low = bits.map((b) => (b === 32 ? -(2 ** 31) : 0));
  const high = bits.map((b, a) => (low[a] as number) + 2 ** b - 1);
  const out: number[] = [...low, ...high];
  for (let i = 0; i < far; i++) for (let a = 0; a < 3; a++) out.push(Math.floor((low[a] as number) + next() * 2 ** (bits[a] as number)));
  for (let i = 0; i < cluster; i++) for (let a = 0; a < 3; a++) out.push((low[a] as number) + Math.floor(next() * 40));
  out.push(...high, ...out.slice(3 * (2 + far), 3 * (2 + far) + 30));
  return Int32Array.from(out);
}

/** The host builder's grid bytes for the same points (the reference). */
export function hostGridBytes(points: Coords, options: PointsToGridOptions): Uint8Array {
  const backend = new HostBackend();
  const spec = points instanceof Int32Array ? ({ space: 'index', coords: points } as const) : ({ space: 'world', positions: points } as const);
  const handle = unwrap(pointsToGrid(backend, new HostResource(backend), spec, options));
  const bytes = unwrap(handle.hostBytes()).slice();
  handle.dispose();
  unwrap(validateGrids(bytes)); // pointsToGrid does not validate its own grid: the reference must pass validation
  return bytes;
}

/** Expects equal bytes, reporting the first differing offset (never a diff of megabytes). */
export function expectSameBytes(got: Uint8Array, expected: Uint8Array): void {
  expect(got.length).toBe(expected.length);
  let first = -1;
  for (let i = 0; i < got.length; i++) {
    if (got[i] !== expected[i]) {
      first = i;
      break;
    }
  }
  expect(first === -1 ? 'identical' : `first difference at byte ${first}: ${got[first]} vs ${expected[first]}`).toBe('identical');
}

/** Build key of a voxel (tile biased by 2^31, then upper, lower and leaf index), as a BigInt. */
export function buildKey(x: number, y: number, z: number): bigint {
  const t = (c: number): bigint => BigInt(((c ^ 0x80000000) >>> 12) & 0xfffff);
  const upper = (((x & 4095) >> 7) << 10) | (((y & 4095) >> 7) << 5) | ((z & 4095) >> 7);
  const lower = (((x & 127) >> 3) << 8) | (((y & 127) >> 3) << 4) | ((z & 127) >> 3);
  const leaf = ((x & 7) << 6) | ((y & 7) << 3) | (z & 7);
  return (t(x) << 82n) | (t(y) << 62n) | (t(z) << 42n) | (BigInt(upper) << 21n) | (BigInt(lower) << 9n) | BigInt(leaf);
}

/** The voxels a capacity-bounded build keeps: the longest build-order prefix whose node counts fit (an independent model). */
export function keptVoxels(coords: Int32Array, capacity: PointsToGridCapacity): Int32Array {
  const seen = new Map<bigint, [number, number, number]>();
  for (let i = 0; i < Math.min(coords.length / 3, capacity.points); i++) {
    const v: [number, number, number] = [coords[3 * i] as number, coords[3 * i + 1] as number, coords[3 * i + 2] as number];
    seen.set(buildKey(...v), v);
  }
  const keys = [...seen.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const tiles = new Set<bigint>();
  const lowers = new Set<bigint>();
  const leaves = new Set<bigint>();
  const kept: number[] = [];
  for (const k of keys) {
    tiles.add(k >> 36n);
    lowers.add(k >> 21n);
    leaves.add(k >> 9n);
    if (tiles.size > capacity.uppers || lowers.size > capacity.lowers || leaves.size > capacity.leaves) break;
    kept.push(...(seen.get(k) as [number, number, number]));
  }
  return new Int32Array(kept);
}

/** What a stream suite's tests run on: the backend, its first device, one stream and a device resource on it. */
export interface StreamSuiteBackend {
  readonly backend: Backend;
  readonly device: Device;
  readonly stream: Stream;
  readonly deviceResource: DeviceResource;
}

/**
 * Inside a suite's describe: before its tests, makes the backend with `make` and hands `take` its first device, a
 * stream labelled `streamLabel` and a device resource; after them, expects no ordering violations (with the host
 * backend's ordering checker on, every launch, copy and free was ordered) and disposes of the backend.
 */
export function useStreamSuiteBackend(make: () => Backend, streamLabel: string, take: (setup: StreamSuiteBackend) => void): void {
  let backend: Backend;
  beforeAll(() => {
    backend = make();
    const device = backend.devices[0] as Device;
    take({ backend, device, stream: unwrap(backend.createStream(device, { label: streamLabel })), deviceResource: new DeviceResource(backend, device) });
  });
  afterAll(() => {
    expect(backend.orderingChecker?.violations ?? []).toEqual([]);
    backend.dispose();
  });
}

/**
 * The stream-ordered and capacity-bounded PointsToGrid builds on one backend: byte identity with the
 * host builder, the validator, resource accounting, clamping and overflow reports. `sizes` sets the
 * point count of the large clouds and the half-width of the uniform ones (small on the host backend,
 * large and dense on a GPU).
 */
export function describeStreamPointsToGrid(label: string, make: () => Backend, sizes: { readonly points: number; readonly range: number }): void {
  const scale = sizes.points;
  describe(`stream-ordered PointsToGrid on ${label}`, () => {
    let backend: Backend;
    let device: Device;
    let stream: Stream;
    let deviceResource: DeviceResource;
    useStreamSuiteBackend(make, 'pointsToGrid', (setup) => ({ backend, device, stream, deviceResource } = setup));

    function upload<T extends Coords>(values: T): ResourceBuffer<DeviceResource, Int32ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor> {
      const element = values.constructor as Int32ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor;
      const buffer = unwrap(ResourceBuffer.allocateAsync(backend, stream, deviceResource, Math.max(values.length, 3), { noInit: true, element }));
      if (values.length > 0) unwrap(backend.copyFromHostAsync(stream, { ...(buffer.data as MemoryBlock), byteLength: values.byteLength }, new Uint8Array(values.buffer, values.byteOffset, values.byteLength)));
      return buffer;
    }

    function spanOf(buffer: ResourceBuffer<DeviceResource, Int32ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor>, values: Coords) {
      const view = unwrap(BufferView.of(buffer.data, values.length, buffer.element));
      return buffer.element === Int32Array
        ? ({ space: 'index', coords: view as BufferView<Int32ArrayConstructor> } as const)
        : ({ space: 'world', positions: view as BufferView<Float32ArrayConstructor> } as const);
    }

    async function download(range: MemoryRange, bytes: number): Promise<Uint8Array> {
      const out = new Uint8Array(bytes);
      unwrap(backend.copyToHostAsync(stream, out, { ...range, byteLength: bytes }));
      await backend.synchronizeStream(stream);
      return out;
    }

    async function streamGridBytes(points: Coords, options: PointsToGridOptions, resource = deviceResource): Promise<Uint8Array> {
      const input = upload(points);
      const built = await pointsToGridAsync(backend, stream, resource, spanOf(input, points), options);
      const bytes = await download(built.buffer.data as MemoryBlock, built.gridSize);
      built.buffer.dispose();
      input.dispose();
      return bytes;
    }

    const clouds: [string, () => Coords][] = [
      ['one point', () => new Int32Array([1, 2, 3])],
      ['no points', () => new Int32Array(0)],
      ['duplicates and negative tiles', () => new Int32Array([5000, 0, 0, -1, 0, 0, -1, 0, 0, 7, 7, 7, 8, 0, 0, 5000, 0, 0, -4097, -9000, 3])],
      ['far-apart points over the whole index range (a 96-bit key on the device)', () => spanPoints([32, 32, 32], 24, Math.min(scale, 3000), 5)],
      ['a 64-bit key on the device', () => spanPoints([22, 22, 20], 24, Math.min(scale, 3000), 6)],
      ['a 63-bit key on the device', () => spanPoints([22, 22, 19], 24, Math.min(scale, 3000), 7)],
      ['uniform index points', () => indexPoints(scale, 'uniform', sizes.range, 1)],
      ['clustered index points', () => indexPoints(scale, 'clustered', 400, 2)],
      ['uniform world points, f32', () => Float32Array.from(indexPoints(scale, 'uniform', sizes.range * 4, 3), (c) => c * 0.013 + 0.25)],
      ['clustered world points, f64', () => Float64Array.from(indexPoints(scale, 'clustered', 300, 4), (c) => c * 0.0071 - 1.5)],
    ];
    for (const [name, cloud] of clouds) {
      for (const gridType of [GridType.OnIndex, GridType.Float] as const) {
        it(`${name}, ${GridType[gridType]}: the same bytes as the host builder, valid, checksum included`, async () => {
          const points = cloud();
          const options: PointsToGridOptions = { gridType, voxelSize: points instanceof Int32Array ? 1 : 0.05, origin: points instanceof Int32Array ? [0, 0, 0] : [0.5, -0.25, 1], name: name };
          const expected = hostGridBytes(points, options);
          const bytes = await streamGridBytes(points, options);
          expectSameBytes(bytes, expected);
          const grids = unwrap(validateGrids(bytes));
          expect(grids[0]?.gridType).toBe(gridType);
        });
      }
    }

    it('a non-zero background: the host builder\'s bytes on every backend (root, tables, inactive voxels)', async () => {
      const points = new Int32Array([5000, 0, 0, -1, 0, 0, 7, 7, 7, -4097, -9000, 3]);
      for (const background of [-3.5, 0.1, 1e30]) {
        const options: PointsToGridOptions = { gridType: GridType.Float, background };
        const bytes = await streamGridBytes(points, options);
        expectSameBytes(bytes, hostGridBytes(points, options));
        expect(unwrap(validateGrids(bytes))[0]?.gridType).toBe(GridType.Float);
      }
      const cloud = Float32Array.from(indexPoints(Math.min(scale, 5000), 'clustered', 300, 14), (c) => c * 0.05 + 0.5);
      const options: PointsToGridOptions = { gridType: GridType.Float, background: 2.25, voxelSize: 0.05, origin: [0.5, 0.5, 0.5] };
      expectSameBytes(await streamGridBytes(cloud, options), hostGridBytes(cloud, options));
    });

    /** `deviceResource` with every allocation it makes listed by size (sync and async), and its frees counted. */
    function countingResource(): { resource: DeviceResource; allocated: number[]; freed: () => number } {
      const allocated: number[] = [];
      let freed = 0;
      const resource = {
        hostAccessible: deviceResource.hostAccessible,
        deviceAccessible: deviceResource.deviceAccessible,
        allocate: (bytes: number, alignment: number) => (allocated.push(bytes), deviceResource.allocate(bytes, alignment)),
        deallocate: (block: MemoryBlock, bytes: number, alignment: number) => (freed++, deviceResource.deallocate(block, bytes, alignment)),
        allocateAsync: (bytes: number, alignment: number, s: Stream) => (allocated.push(bytes), deviceResource.allocateAsync(bytes, alignment, s)),
        deallocateAsync: (block: MemoryBlock | null, bytes: number, alignment: number, s: Stream) => (freed++, deviceResource.deallocateAsync(block, bytes, alignment, s)),
      } as unknown as DeviceResource;
      return { resource, allocated, freed: () => freed };
    }

    it('maxGridBytes: a grid above the cap rejects with InvalidArgument naming its bytes and the cap; the grid is never allocated', async () => {
      // two voxels in two root tiles: 2 upper, 2 lower nodes, 2 leaves of an OnIndex grid
      const points = new Int32Array([0, 0, 0, 5000, 0, 0]);
      const size = 736 + 96 + 2 * (32 + 270400) + 2 * 33856 + 2 * 96;
      const exact = hostGridBytes(points, { gridType: GridType.OnIndex });
      expect(exact.length).toBe(size);
      const { resource, allocated, freed } = countingResource();
      const input = upload(points);
      try {
        await expect(pointsToGridAsync(backend, stream, resource, spanOf(input, points), { gridType: GridType.OnIndex, maxGridBytes: size - 1 })).rejects.toMatchObject({
          code: ErrorCode.InvalidArgument,
          message: expect.stringMatching(new RegExp(`^InvalidArgument: pointsToGridAsync: the grid takes ${size} bytes \\(0\\.6 MiB: 2 upper, 2 lower nodes, 2 leaves\\), above maxGridBytes ${size - 1}; use a larger voxel size`)),
        });
        // only the workspace was allocated (device points are counted by the sort kernel; its size is the
        // backend's: the CUDA sort's temporary storage is larger than this grid), and it was freed
        expect(allocated).toHaveLength(1);
        expect(allocated[0]).not.toBe(size);
        expect(freed()).toBe(1);
        // at the cap exactly: the host builder's grid
        const built = await pointsToGridAsync(backend, stream, deviceResource, spanOf(input, points), { gridType: GridType.OnIndex, maxGridBytes: size });
        expectSameBytes(await download(built.buffer.data as MemoryBlock, built.gridSize), exact);
        built.buffer.dispose();
      } finally {
        input.dispose();
      }
    });

    it('maxGridBytes: BoundedPointsToGrid refuses a grid capacity above the cap before allocating anything', () => {
      const capacity = { points: 10, uppers: 1, lowers: 1, leaves: 1 };
      const { resource, allocated } = countingResource();
      const capacityBytes = 736 + 64 + 32 + 270400 + 33856 + 2144; // Float
      const r = BoundedPointsToGrid.create(backend, stream, resource, capacity, { gridType: GridType.Float, maxGridBytes: capacityBytes - 32 });
      expect(r.ok ? '' : `${r.error.code} ${r.error.message}`).toBe(
        `InvalidArgument InvalidArgument: BoundedPointsToGrid: the grid takes ${capacityBytes} bytes (0.3 MiB: 1 upper, 1 lower nodes, 1 leaves), above maxGridBytes ${capacityBytes - 32}; use a larger voxel size or fewer points, or raise maxGridBytes`,
      );
      expect(allocated).toEqual([]);
      const fits = unwrap(BoundedPointsToGrid.create(backend, stream, resource, capacity, { gridType: GridType.Float, maxGridBytes: capacityBytes }));
      expect(fits.gridCapacityBytes).toBe(capacityBytes);
      expect(allocated).toHaveLength(1);
      fits.dispose();
      for (const maxGridBytes of [0, -1, 1.5, Number.NaN]) {
        const bad = BoundedPointsToGrid.create(backend, stream, resource, capacity, { gridType: GridType.Float, maxGridBytes });
        expect(bad.ok ? '' : bad.error.message).toContain('maxGridBytes must be a positive integer');
      }
      expect(allocated).toHaveLength(1);
    });

    it('partial and disabled checksums match the host builder too', async () => {
      const points = indexPoints(Math.min(scale, 5000), 'uniform', 500, 9);
      for (const checksum of ['partial', 'disabled'] as const) {
        const options: PointsToGridOptions = { gridType: GridType.OnIndex, checksum };
        expectSameBytes(await streamGridBytes(points, options), hostGridBytes(points, options));
      }
    });

    it('allocates through an AsyncFromSync over a counting sync resource: allocations == deallocations', async () => {
      const managed = new ManagedResource(backend, device);
      let allocations = 0;
      let deallocations = 0;
      const counting: SyncResource = {
        hostAccessible: true,
        deviceAccessible: true,
        allocate(bytes, alignment): Result<MemoryRange | null> {
          const r = managed.allocate(bytes, alignment);
          if (r.ok) allocations++;
          return r;
        },
        deallocate(block, bytes, alignment) {
          const r = managed.deallocate(block, bytes, alignment);
          if (r.ok) deallocations++;
          return r.ok ? OK_VOID : r;
        },
      };
      const lifted = new AsyncFromSync(backend, counting);
      const points = indexPoints(Math.min(scale, 20000), 'clustered', 200, 5);
      const options: PointsToGridOptions = { gridType: GridType.Float };
      const bytes = await streamGridBytes(points, options, lifted as unknown as DeviceResource);
      expectSameBytes(bytes, hostGridBytes(points, options));
      await backend.synchronizeStream(stream);
      await new Promise((r) => setTimeout(r, 20)); // AsyncFromSync returns blocks from a host function
      await backend.synchronizeStream(stream);
      expect(allocations).toBe(2); // workspace and grid
      expect(deallocations).toBe(allocations);
    });

    it('names the first NaN or out-of-range world point, leaving nothing allocated', async () => {
      const stats = new StatisticsResource(deviceResource);
      for (const bad of [NaN, Infinity, 1e12]) {
        const points = new Float32Array([0, 0, 0, 1, 1, 1, 2, bad, 2, bad, 0, 0]);
        const input = upload(points);
        await expect(pointsToGridAsync(backend, stream, stats, spanOf(input, points), { gridType: GridType.OnIndex })).rejects.toMatchObject({
          name: 'HsError',
          code: ErrorCode.InvalidArgument,
          message: expect.stringContaining('point 2 '),
        });
        input.dispose();
      }
      await backend.synchronizeStream(stream);
      expect(stats.statistics.allocations.current).toBe(0);
    });

    it('rejects malformed spans and options with typed errors', async () => {
      const input = upload(new Int32Array(6));
      const ragged = unwrap(BufferView.of(input.data, 4, Int32Array));
      const invalid = { name: 'HsError', code: ErrorCode.InvalidArgument };
      await expect(pointsToGridAsync(backend, stream, deviceResource, { space: 'index', coords: ragged }, { gridType: GridType.OnIndex })).rejects.toMatchObject(invalid);
      await expect(pointsToGridAsync(backend, stream, deviceResource, spanOf(input, new Int32Array(6)), { gridType: GridType.OnIndex, voxelSize: -1 })).rejects.toMatchObject(invalid);
      await expect(pointsToGridAsync(backend, stream, deviceResource, { space: 'world', positions: ragged as never }, { gridType: GridType.OnIndex })).rejects.toThrow(/Float32Array/);
      await expect(pointsToGridAsync(backend, stream, {} as never, spanOf(input, new Int32Array(6)), { gridType: GridType.OnIndex })).rejects.toMatchObject(invalid);
      input.dispose();
    });

    it('rejects with the stream wait\'s HsError (DeviceError after a fault, InvalidState on a destroyed stream), leaving nothing allocated', async () => {
      const stats = new StatisticsResource(deviceResource);
      const points = new Int32Array([1, 2, 3, 40, 50, 60]);
      const input = upload(points);
      await backend.synchronizeStream(stream);
      const faulty = unwrap(backend.createStream(device, { label: 'faulty pointsToGrid' }));
      unwrap(
        backend.launchHostFunc(faulty, () => {
          throw new Error('planted fault before the build');
        }),
      );
      await expect(pointsToGridAsync(backend, faulty, stats, spanOf(input, points), { gridType: GridType.OnIndex })).rejects.toMatchObject({
        name: 'HsError',
        code: ErrorCode.DeviceError,
        message: expect.stringContaining('planted fault before the build'),
      });
      await backend.synchronizeStream(faulty).catch(() => undefined);
      expect(stats.statistics.allocations.current).toBe(0);
      unwrap(backend.destroyStream(faulty));
      await expect(pointsToGridAsync(backend, faulty, stats, spanOf(input, points), { gridType: GridType.OnIndex })).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState, message: expect.stringContaining('destroyed') });
      expect(stats.statistics.allocations.current).toBe(0);
      // and it resolves with the grid on a healthy stream
      const built = await pointsToGridAsync(backend, stream, stats, spanOf(input, points), { gridType: GridType.OnIndex });
      expect(built.counts.voxels).toBe(2);
      built.buffer.dispose();
      input.dispose();
    });

    describe('BoundedPointsToGrid', () => {
      async function boundedBytes(build: BoundedPointsToGrid) {
        const report = await build.readReport(stream);
        const bytes = await download(build.grid.data as MemoryBlock, report.gridSize);
        return { report, bytes };
      }

      it('with room to spare: the host grid, no overflow, counts on the device', async () => {
        const points = indexPoints(scale, 'clustered', 500, 6);
        const options: PointsToGridOptions = { gridType: GridType.OnIndex, name: 'bounded' };
        const build = unwrap(BoundedPointsToGrid.create(backend, stream, deviceResource, { points: scale, uppers: 64, lowers: 4096, leaves: scale }, options));
        const input = upload(points);
        unwrap(build.encode(stream, spanOf(input, points)));
        const { report, bytes } = await boundedBytes(build);
        expect(report.overflowed).toBe(false);
        expect(report.counts).toEqual(report.needed);
        expectSameBytes(bytes, hostGridBytes(points, options));
        input.dispose();
        build.dispose();
      });

      for (const [level, capacity] of [
        ['leaves', { points: 1e6, uppers: 8, lowers: 1000, leaves: 37 }],
        ['lowers', { points: 1e6, uppers: 8, lowers: 3, leaves: 1000 }],
        ['uppers', { points: 1e6, uppers: 2, lowers: 1000, leaves: 1000 }],
        ['points', { points: 50, uppers: 8, lowers: 1000, leaves: 1000 }],
      ] as const) {
        it(`overflowing ${level}: a clamped prefix grid that validates and equals the host grid of the kept voxels; overflow reported`, async () => {
          const points = indexPoints(Math.min(scale, 1000), 'uniform', 3000, 7);
          for (const options of [{ gridType: GridType.OnIndex }, { gridType: GridType.Float }, { gridType: GridType.Float, background: -0.75 }] as const) {
            const build = unwrap(BoundedPointsToGrid.create(backend, stream, deviceResource, capacity, options));
            const input = upload(points);
            unwrap(build.encode(stream, spanOf(input, points)));
            const { report, bytes } = await boundedBytes(build);
            expect(report.overflowed).toBe(true);
            expect(report.overflow[level]).toBe(true);
            expect(unwrap(validateGrids(bytes))[0]?.voxelCount).toBe(report.counts.voxels);
            const kept = keptVoxels(points, capacity);
            expect(report.counts.voxels).toBe(kept.length / 3);
            expectSameBytes(bytes, hostGridBytes(kept, options));
            if (level === 'points') expect([report.given, report.used]).toEqual([points.length / 3, 50]);
            input.dispose();
            build.dispose();
          }
        });
      }

      it('hand-checked clamp: two voxels in two leaves, room for one leaf: the one-voxel grid of 305 216 bytes', async () => {
        const points = new Int32Array([9, 9, 9, 1, 2, 3]);
        const build = unwrap(BoundedPointsToGrid.create(backend, stream, deviceResource, { points: 2, uppers: 1, lowers: 1, leaves: 1 }, { gridType: GridType.OnIndex }));
        expect(build.gridCapacityBytes).toBe(736 + 96 + 32 + 270400 + 33856 + 96);
        const input = upload(points);
        unwrap(build.encode(stream, spanOf(input, points)));
        const { report, bytes } = await boundedBytes(build);
        expect(report).toMatchObject({ given: 2, used: 2, valid: 2, gridSize: 305216, overflowed: true, overflow: { points: false, uppers: false, lowers: false, leaves: true } });
        expect(report.needed).toEqual({ voxels: 2, leaves: 2, lowers: 1, uppers: 1 });
        expect(report.counts).toEqual({ voxels: 1, leaves: 1, lowers: 1, uppers: 1 });
        // (1, 2, 3) comes first in build order: leaf 0 of lower 0 before leaf (8, 8, 8)
        const v = new DataView(bytes.buffer);
        expect([v.getInt32(305120, true), v.getInt32(305124, true), v.getInt32(305128, true)]).toEqual([1, 2, 3]);
        expectSameBytes(bytes, hostGridBytes(new Int32Array([1, 2, 3]), { gridType: GridType.OnIndex }));
        input.dispose();
        build.dispose();
      });

      it('re-encodes with new points in the same input memory, and builds into a caller-owned BufferView', async () => {
        const capacity = { points: 4000, uppers: 16, lowers: 256, leaves: 4000 };
        const options: PointsToGridOptions = { gridType: GridType.Float, voxelSize: 0.5 };
        const bytes = unwrap(BoundedPointsToGrid.requiredBytes(backend, capacity, GridType.Float));
        const memory = unwrap(ResourceBuffer.allocateAsync(backend, stream, deviceResource, bytes, { noInit: true }));
        const build = unwrap(BoundedPointsToGrid.create(backend, stream, BufferView.over(memory), capacity, options));
        const first = Float32Array.from(indexPoints(4000, 'clustered', 100, 8), (c) => c * 0.5);
        const input = upload(first);
        for (const round of [0, 1]) {
          const points = round === 0 ? first : Float32Array.from(indexPoints(4000, 'uniform', 300, 10), (c) => c * 0.5);
          if (round === 1) unwrap(backend.copyFromHostAsync(stream, input.data as MemoryBlock, new Uint8Array(points.buffer)));
          unwrap(build.encode(stream, spanOf(input, points)));
          const got = await boundedBytes(build);
          expect(got.report.overflowed).toBe(false);
          expectSameBytes(got.bytes, hostGridBytes(points, options));
        }
        build.dispose();
        const small = BoundedPointsToGrid.create(backend, stream, unwrap(BufferView.of(memory.data, bytes - 1)), capacity, options);
        expect(!small.ok && small.error.code).toBe(ErrorCode.InvalidArgument);
        input.dispose();
        memory.dispose();
      });

      it('readReport rejects with HsError on a destroyed stream and after a fault on its stream', async () => {
        const build = unwrap(BoundedPointsToGrid.create(backend, stream, deviceResource, { points: 8, uppers: 1, lowers: 1, leaves: 4 }, { gridType: GridType.OnIndex }));
        const points = new Int32Array([1, 2, 3]);
        const input = upload(points);
        unwrap(build.encode(stream, spanOf(input, points)));
        await expect(build.readReport(stream)).resolves.toMatchObject({ given: 1, valid: 1, overflowed: false });
        const faulty = unwrap(backend.createStream(device, { label: 'faulty report' }));
        unwrap(
          backend.launchHostFunc(faulty, () => {
            throw new Error('planted fault before the report');
          }),
        );
        await expect(build.readReport(faulty)).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.DeviceError, message: expect.stringContaining('planted fault') });
        unwrap(backend.destroyStream(faulty));
        await expect(build.readReport(faulty)).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState, message: expect.stringContaining('destroyed') });
        input.dispose();
        build.dispose();
      });

      // The device sort runs only the 8-bit passes the packed key needs, from a workspace's second build on (its
      // first sorts all 64 bits): three encodes per cloud, one cloud per branch, on both sides of the 24- and 48-bit
      // boundaries, 63 bits and the wide keys' path (64 and 96 bits); then invalid points (all-ones keys) first in input order before a valid point at the top of the
      // key range, where the sort needs one bit more than the valid keys (24 and 48 bits take the next branch).
      const widths: [readonly [number, number, number], boolean][] = [
        ...([[3, 3, 2], [6, 5, 5], [8, 8, 8], [9, 8, 8], [11, 11, 10], [14, 13, 13], [16, 16, 16], [17, 16, 16], [19, 19, 18], [19, 19, 19], [21, 21, 20], [22, 22, 19], [22, 22, 20], [32, 32, 32]] as const).map((b) => [b, false] as [readonly [number, number, number], boolean]),
        ...([[8, 8, 8], [16, 16, 16], [19, 19, 18]] as const).map((b) => [b, true] as [readonly [number, number, number], boolean]),
      ];
      for (const [i, [bits, invalid]] of widths.entries()) {
        const keyBits = bits[0] + bits[1] + bits[2];
        it(`a ${keyBits}-bit key (${bits.join(', ')} bits per axis)${invalid ? ', invalid points first' : ''}, three encodes: the host grid each time`, async () => {
          const valid = Float64Array.from(spanPoints(bits, 24, Math.min(scale, 3000), 20 + i));
          const points = invalid ? Float64Array.from([NaN, 0, 0, 1, Infinity, 1, ...valid]) : valid;
          const n = points.length / 3;
          const options: PointsToGridOptions = { gridType: GridType.OnIndex, voxelSize: 1, name: `span ${bits.join('-')}` };
          const build = unwrap(BoundedPointsToGrid.create(backend, stream, deviceResource, { points: n, ...unwrap(countGridNodes(valid, { voxelSize: 1 })) }, options));
          const input = upload(points);
          const expected = hostGridBytes(valid, options);
          for (let round = 0; round < 3; round++) {
            unwrap(build.encode(stream, spanOf(input, points)));
            const { report, bytes } = await boundedBytes(build);
            expect([report.firstInvalid, report.valid, report.overflowed]).toEqual([invalid ? 0 : undefined, valid.length / 3, false]);
            expectSameBytes(bytes, expected);
          }
          input.dispose();
          build.dispose();
        });
      }

      it('skips invalid points and reports the first; rejects bad capacities, counts and a disposed build', async () => {
        const points = new Float64Array([0, 0, 0, NaN, 0, 0, 3, 3, 3, 1, Infinity, 1]);
        const build = unwrap(BoundedPointsToGrid.create(backend, stream, deviceResource, { points: 8, uppers: 1, lowers: 1, leaves: 4 }, { gridType: GridType.OnIndex }));
        const input = upload(points);
        unwrap(build.encode(stream, spanOf(input, points)));
        const { report, bytes } = await boundedBytes(build);
        expect([report.firstInvalid, report.valid, report.overflowed]).toEqual([1, 2, false]);
        expectSameBytes(bytes, hostGridBytes(new Int32Array([0, 0, 0, 3, 3, 3]), { gridType: GridType.OnIndex }));
        const count = build.encode(stream, spanOf(input, points), 5);
        expect(!count.ok && count.error.code).toBe(ErrorCode.InvalidArgument);
        build.dispose();
        const after = build.encode(stream, spanOf(input, points));
        expect(!after.ok && after.error.code).toBe(ErrorCode.InvalidState);
        await expect(build.readReport(stream)).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState, message: expect.stringContaining('the build was disposed') });
        for (const bad of [{ points: 0, uppers: 1, lowers: 1, leaves: 1 }, { points: 1, uppers: 1.5, lowers: 1, leaves: 1 }, { points: 1, uppers: 1, lowers: 1, leaves: 2 ** 32 }]) {
          const r = BoundedPointsToGrid.create(backend, stream, deviceResource, bad, { gridType: GridType.OnIndex });
          expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
        }
        expect(() => BoundedPointsToGrid.create(backend, stream, {} as never, { points: 1, uppers: 1, lowers: 1, leaves: 1 }, { gridType: GridType.OnIndex })).toThrow(/async resource or a BufferView/);
        input.dispose();
      });
    });
  });
}
