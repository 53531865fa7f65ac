import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, HsError, unwrap, type Stream } from '@hs/streams';
import { DeviceResource, StatisticsResource, type AsyncResource } from '../../src/index.js';
import { SPLIT_SAMPLE_POINTS, planSplitBounds, splitCountOnHost, splitMetaWords, splitOnDevice, splitScatterOnHost, type SplitPoints } from '../../src/nanovdb/build/distributed-split.js';
import { PointEncoding, voxelCoordinate } from '../../src/nanovdb/build/points-to-grid-kernels.js';
import { indexPoints } from './stream-points-to-grid-suite.js';
import { tiledPoints } from './distributed-points-to-grid-suite.js';

const ALL_ONES = 0xffffffffffffffffn;

/** The root tile key of index point i, as the split kernels compute it (x, y, z tiles at bits 42, 21, 0). */
const keyOf = (c: ArrayLike<number>, i: number): bigint => {
  const t = (v: number): bigint => BigInt(((v ^ 0x80000000) >>> 12) & 0x1fffff);
  return (t(c[3 * i] as number) << 42n) | (t(c[3 * i + 1] as number) << 21n) | t(c[3 * i + 2] as number);
};

/** Points in `tiles` root tiles along x, `per` points each. */
const evenTiles = (tiles: number, per: number): Int32Array => {
  const out = new Int32Array(3 * tiles * per);
  for (let i = 0; i < tiles * per; i++) {
    out[3 * i] = (i % tiles) * 4096 + (i % 97);
    out[3 * i + 1] = i % 13;
    out[3 * i + 2] = i % 7;
  }
  return out;
};

describe('planSplitBounds', () => {
  it('cuts between root tiles at the sample quantiles, never inside a tile', () => {
    const coords = evenTiles(40, 50);
    for (const k of [2, 3, 4, 7]) {
      const bounds = planSplitBounds(coords, k, 1, [0, 0, 0]);
      expect(bounds.length).toBe(k - 1);
      const tiles = [...new Set(Array.from({ length: 40 }, (_, t) => keyOf(coords, t)))].sort((a, b) => (a < b ? -1 : 1));
      for (let p = 0; p < k - 1; p++) {
        expect(tiles).toContain(bounds[p]);
        if (p > 0) expect((bounds[p] as bigint) >= (bounds[p - 1] as bigint)).toBe(true);
        // part p ends after about (p + 1) / k of the tiles (all tiles hold as many points)
        const before = tiles.filter((t) => t < (bounds[p] as bigint)).length;
        expect(Math.abs(before - ((p + 1) * 40) / k)).toBeLessThanOrEqual(1);
      }
    }
  });

  it('keeps a cloud inside one tile, an empty cloud and one of invalid points in part 0', () => {
    const inside = indexPoints(500, 'uniform', 1000, 3).map((c) => Math.abs(c));
    expect(Array.from(planSplitBounds(inside, 3, 1, [0, 0, 0]))).toEqual([ALL_ONES, ALL_ONES]);
    expect(Array.from(planSplitBounds(new Int32Array(0), 3, 1, [0, 0, 0]))).toEqual([ALL_ONES, ALL_ONES]);
    expect(Array.from(planSplitBounds(new Float32Array([Number.NaN, 0, 0, 1e12, 0, 0]), 2, 1, [0, 0, 0]))).toEqual([ALL_ONES]);
    expect(planSplitBounds(inside, 1, 1, [0, 0, 0]).length).toBe(0);
  });

  it('maps world points as the build does (voxel size and origin)', () => {
    // x = 4096 voxels at voxel size 0.5 and origin -1: world 2047 is voxel 4096, the second tile
    const positions = new Float64Array([-1, 0, 0, 2047, 0, 0]);
    expect(Array.from(planSplitBounds(positions, 2, 2, [-1, 0, 0]))).toEqual([keyOf(new Int32Array([4096, 0, 0]), 0)]);
  });
});

describe('the split kernels on the host', () => {
  const launch = (coords: Int32Array, bounds: readonly bigint[], meta: BigUint64Array): void => {
    const k = bounds.length + 1;
    const params = [coords.length / 3, PointEncoding.IndexInt32, 1, 0, 0, 0, k];
    const points = new Uint8Array(coords.buffer);
    const b = new BigUint64Array(Math.max(1, k - 1));
    b.set(bounds);
    splitCountOnHost([points, new Uint8Array(b.buffer)], [new Uint8Array(meta.buffer, 0, 8 * (k + 1))], params);
  };
  it('adds each part\u2019s points to its count word and lowers word 0 to the first invalid point', () => {
    const coords = evenTiles(4, 5);
    const meta = new BigUint64Array(splitMetaWords(2));
    meta[0] = ALL_ONES;
    launch(coords, [keyOf(coords, 2)], meta);
    expect(Array.from(meta.subarray(0, 3))).toEqual([ALL_ONES, 10n, 10n]);
    launch(coords, [keyOf(coords, 2)], meta);
    expect(Array.from(meta.subarray(0, 3))).toEqual([ALL_ONES, 20n, 20n]);
    const world = new Float32Array([0, 0, 0, 1, Number.NaN, 0, 2, 0, 0, Number.POSITIVE_INFINITY, 0, 0]);
    const w = new BigUint64Array(splitMetaWords(1));
    w[0] = ALL_ONES;
    splitCountOnHost([new Uint8Array(world.buffer), new Uint8Array(8)], [new Uint8Array(w.buffer, 0, 16)], [4, PointEncoding.WorldFloat32, 1, 0, 0, 0, 1]);
    expect(Array.from(w.subarray(0, 2))).toEqual([1n, 2n]);
    // a lower word 0 stays (another block found an earlier point)
    w[0] = 0n;
    splitCountOnHost([new Uint8Array(world.buffer), new Uint8Array(8)], [new Uint8Array(w.buffer, 0, 16)], [4, PointEncoding.WorldFloat32, 1, 0, 0, 0, 1]);
    expect(w[0]).toBe(0n);
  });

  it('scatters the points in part order and leaves the cursors at the counts', () => {
    const coords = tiledPoints(400, 5);
    const bounds = [keyOf(new Int32Array([-4096, -4096, 0]), 0), keyOf(new Int32Array([4096, 0, 0]), 0)];
    const meta = new BigUint64Array(splitMetaWords(3));
    meta[0] = ALL_ONES;
    launch(coords, bounds, meta);
    const counts = meta.subarray(1, 4);
    const out = new Int32Array(coords.length);
    const params = [400, PointEncoding.IndexInt32, 1, 0, 0, 0, 3];
    splitScatterOnHost([new Uint8Array(coords.buffer), new Uint8Array(new BigUint64Array(bounds).buffer), new Uint8Array(counts.slice().buffer)], [new Uint8Array(out.buffer), new Uint8Array(meta.buffer, 8 * 4, 8 * 3)], params);
    expect(Array.from(meta.subarray(4, 7))).toEqual(Array.from(counts));
    const partOf = (key: bigint): number => bounds.filter((b) => key >= b).length;
    const expected: number[] = [];
    for (let p = 0; p < 3; p++) for (let i = 0; i < 400; i++) if (partOf(keyOf(coords, i)) === p) expected.push(coords[3 * i] as number, coords[3 * i + 1] as number, coords[3 * i + 2] as number);
    expect(Array.from(out)).toEqual(expected);
  });
});

describe('splitOnDevice on the host backend', () => {
  const backend = new HostBackend({ deviceCount: 3, orderingChecker: true });
  const readParts = async (inputs: readonly ({ data: unknown; size: number } | null)[], streams: readonly Stream[], Element: Int32ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor): Promise<(Int32Array | Float32Array | Float64Array)[]> => {
    const parts: (Int32Array | Float32Array | Float64Array)[] = [];
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i];
      const part = new Element(input?.size ?? 0);
      if (input !== null && input !== undefined && input.size > 0) unwrap(backend.copyToHostAsync(streams[i] as Stream, new Uint8Array(part.buffer), input.data as never));
      await backend.synchronizeStream(streams[i] as Stream);
      parts.push(part);
    }
    return parts;
  };
  const clouds: [string, SplitPoints, number, [number, number, number]][] = [
    ['uneven tiles', tiledPoints(3000, 41), 1, [0, 0, 0]],
    ['more points than the sample, strided', evenTiles(24, Math.ceil((2 * SPLIT_SAMPLE_POINTS) / 24) + 7), 1, [0, 0, 0]],
    ['world f32', new Float32Array(tiledPoints(2000, 42)).map((c) => c * 0.25), 0.25, [0.5, 0, -1]],
    ['world f64', new Float64Array(tiledPoints(2000, 43)).map((c) => c * 0.1), 0.1, [0, 0, 0]],
  ];
  for (const [name, data, voxelSize, origin] of clouds) {
    for (const devices of [[0, 1], [0, 1, 2], [0, 1, 2, 0]]) {
      it(`gives each part whole root tiles in build order, every point once: ${name}, ${devices.length} parts`, async () => {
        const streams = devices.map((d) => unwrap(backend.createStream(Device.cuda(d))));
        const resources = devices.map((d) => new StatisticsResource<AsyncResource>(new DeviceResource(backend, Device.cuda(d))));
        const split = await splitOnDevice(backend, data, streams, resources, 1 / voxelSize, origin, (i) => new HsError(ErrorCode.InvalidArgument, `point ${i}`));
        const Element = data.constructor as Int32ArrayConstructor;
        const parts = await readParts(split.inputs as never, streams, Element);
        expect(parts.map((p) => p.length / 3)).toEqual(split.counts);
        expect(split.counts.reduce((s, c) => s + c, 0)).toBe(data.length / 3);
        // the keys of the points as the build maps them
        const voxels = (p: SplitPoints): Int32Array => (p instanceof Int32Array ? p : new Int32Array(p.length).map((_, j) => voxelCoordinate(p[j] as number, origin[j % 3] as number, 1 / voxelSize)));
        let last = -1n;
        const owner = new Map<bigint, number>();
        parts.forEach((part, p) => {
          const v = voxels(part);
          let most = -1n;
          for (let i = 0; i < part.length / 3; i++) {
            const key = keyOf(v, i);
            expect(key > last).toBe(true);
            if (key > most) most = key;
            owner.set(key, p);
          }
          if (most >= 0n) last = most;
        });
        // the host twin keeps the input order within a part: each part is the input filtered by its tiles
        const all = voxels(data);
        const expected = parts.map(() => [] as number[]);
        for (let i = 0; i < data.length / 3; i++) expected[owner.get(keyOf(all, i)) as number]!.push(data[3 * i] as number, data[3 * i + 1] as number, data[3 * i + 2] as number);
        expect(parts.map((p) => Array.from(p))).toEqual(expected);
        if (name.startsWith('more points')) {
          // 24 equal tiles: every part within one tile of its share
          for (const c of split.counts) expect(Math.abs(c - data.length / 3 / devices.length)).toBeLessThanOrEqual(data.length / 3 / 24 + 1);
        }
        split.inputs.forEach((input, i) => input?.destroy(streams[i]));
        for (const s of streams) await backend.synchronizeStream(s);
        // the split's own buffers are freed: only the part inputs were left, and they are gone now
        for (const r of resources) expect(r.statistics.bytes.current).toBe(0);
        for (const s of streams) unwrap(backend.destroyStream(s));
      });
    }
  }

  it('gives part 0 an empty input for an empty cloud and allocates nothing else', async () => {
    const streams = [0, 1].map((d) => unwrap(backend.createStream(Device.cuda(d))));
    const resources = [0, 1].map((d) => new StatisticsResource<AsyncResource>(new DeviceResource(backend, Device.cuda(d))));
    const split = await splitOnDevice(backend, new Float32Array(0), streams, resources, 1, [0, 0, 0], (i) => new HsError(ErrorCode.InvalidArgument, `point ${i}`));
    expect(split.counts).toEqual([0, 0]);
    expect(split.inputs[0]?.size).toBe(0);
    expect(split.inputs[1]).toBeNull();
    split.inputs[0]?.destroy(streams[0]);
    for (const s of streams) unwrap(backend.destroyStream(s));
  });
});
