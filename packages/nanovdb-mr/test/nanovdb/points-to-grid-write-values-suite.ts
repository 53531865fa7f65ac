// The write stage of a PointsToGrid build with per-voxel values (issue 24 item 1), on one backend: the sort and
// write launches run directly (no reduce kernel), the values range filled from the host with one value per voxel
// in build order, and the grid must be the bytes voxelsToGrid writes for the same voxels, values, background,
// map, name and class. On a backend other than the host's the same launches also run on a HostBackend, and the
// two grids must be equal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostBackend, unwrap, type Backend, type MemoryRange, type Stream } from '@hs/streams';
import { DeviceResource, GridClass, GridType, HostResource, ResourceBuffer, validateGrids, voxelsToGrid, type MemoryBlock } from '../../src/index.js';
import { valueLayoutOf, type ValueLayout } from '../../src/nanovdb/grid/grid-layout.js';
import { gridBytes, gridTemplate, type NodeCapacity } from '../../src/nanovdb/build/grid-writer.js';
import { PointEncoding, checksumLaunch, sortLaunch, writeLaunch } from '../../src/nanovdb/build/points-to-grid-kernels.js';
import { REPORT_BYTES, TEMPLATE_OFFSET, readReport, subRange, workspaceBytes } from '../../src/nanovdb/build/points-to-grid-workspace.js';
import { buildKey, expectSameBytes, indexPoints, random } from './stream-points-to-grid-suite.js';

type ValueGrid = GridType.Float | GridType.Double | GridType.Int32 | GridType.Vec3f | GridType.RGBA8 | GridType.Mask;
type Values = Float32Array | Float64Array | Int32Array | Uint8Array;

/** One case: a grid type, its background option and how its random values are drawn. */
interface ValueCase {
  readonly gridType: ValueGrid;
  readonly background: number | readonly number[];
  readonly label: string;
}

const CASES: readonly ValueCase[] = [
  { gridType: GridType.Float, background: 0.25, label: 'Float' },
  { gridType: GridType.Float, background: -0, label: 'Float over a -0 background' },
  { gridType: GridType.Double, background: 0.1, label: 'Double' },
  { gridType: GridType.Int32, background: -7, label: 'Int32' },
  { gridType: GridType.Vec3f, background: [1.5, -2, 0.125], label: 'Vec3f' },
  { gridType: GridType.RGBA8, background: [10, 20, 30, 255], label: 'RGBA8' },
  { gridType: GridType.Mask, background: 1, label: 'Mask' },
];

const VOXEL_SIZE = 0.5;
const ORIGIN = [1, -2, 3] as const;
const NAME = 'values';
const NAME_BYTES = new TextEncoder().encode(NAME);

/**
 * f32 bit patterns: quiet and signalling NaNs with payloads and signs (both writers store every NaN as the canonical
 * quiet NaN), -0, infinities, a subnormal.
 */
const F32_SPECIALS = [0x7fc00001, 0xffc12345, 0x7f800001, 0xff812345, 0xffc00000, 0x80000000, 0x7f800000, 0xff800000, 0x00000001, 0x807fffff];
/** f64 bit patterns: NaNs with payloads (a signalling one too: no conversion touches an f64), -0, an infinity, a subnormal. */
const F64_SPECIALS = [0x7ff0000000000001n, 0xfff8000000000123n, 0x8000000000000000n, 0x7ff0000000000000n, 0x0000000000000001n];

/** A copy of `values` with every f32 or f64 NaN rewritten as the canonical quiet NaN (0x7fc00000, 0x7ff8000000000000), by bits. */
function withCanonicalNaNs(values: Values): Values {
  const out = values.slice();
  if (out instanceof Float32Array) {
    const bits = new Uint32Array(out.buffer);
    bits.forEach((b, i) => {
      if ((b & 0x7f800000) === 0x7f800000 && (b & 0x7fffff) !== 0) bits[i] = 0x7fc00000;
    });
  } else if (out instanceof Float64Array) {
    const bits = new BigUint64Array(out.buffer);
    bits.forEach((b, i) => {
      if ((b & 0x7ff0000000000000n) === 0x7ff0000000000000n && (b & 0xfffffffffffffn) !== 0n) bits[i] = 0x7ff8000000000000n;
    });
  }
  return out;
}

/** `count` random values of `layout` (components each), special bit patterns first for the float types. */
function randomValues(layout: ValueLayout, count: number, seed: number): Values {
  const next = random(seed);
  const n = layout.components * count;
  switch (layout.gridType) {
    case GridType.Float:
    case GridType.Vec3f: {
      const out = new Float32Array(n).map(() => (next() - 0.5) * 1e3);
      new Uint32Array(out.buffer).set(F32_SPECIALS.slice(0, n));
      return out;
    }
    case GridType.Double: {
      const out = new Float64Array(n).map(() => (next() - 0.5) * 1e9);
      new BigUint64Array(out.buffer).set(F64_SPECIALS.slice(0, n));
      return out;
    }
    case GridType.Int32:
      return new Int32Array(n).map((_, i) => (i === 0 ? -2147483648 : Math.floor(next() * 4294967296) - 2147483648));
    case GridType.RGBA8:
      return new Uint8Array(n).map(() => Math.floor(next() * 256));
    default:
      return new Uint8Array(0); // Mask: the active state is the value
  }
}

/**
 * `n` index points with duplicates: clustered shells around the origin (dense leaves) and 24 far points spread
 * over several root tiles, then a tenth of them repeated.
 */
function cloud(n: number, range: number, seed: number): Int32Array {
  const coords = indexPoints(n, 'clustered', range, seed);
  const next = random(seed + 1);
  for (let f = 0; f < 24; f++) for (let a = 0; a < 3; a++) coords[3 * Math.floor((f * n) / 24) + a] = Math.floor((2 * next() - 1) * 20000);
  for (let i = 0; i < n; i += 10) coords.copyWithin(3 * i, 3 * Math.floor(next() * n), 3 * Math.floor(next() * n) + 3);
  return coords;
}

/** The distinct voxels of `coords` in build order (an independent model: sorted 99-bit build keys) and their node counts. */
function buildOrder(coords: Int32Array): { voxels: Int32Array; counts: NodeCapacity; keys: bigint[] } {
  const seen = new Map<bigint, number>();
  for (let i = 0; i < coords.length / 3; i++) {
    const key = buildKey(coords[3 * i] as number, coords[3 * i + 1] as number, coords[3 * i + 2] as number);
    if (!seen.has(key)) seen.set(key, i);
  }
  const keys = [...seen.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const voxels = new Int32Array(3 * keys.length);
  keys.forEach((k, v) => voxels.set(coords.subarray(3 * (seen.get(k) as number), 3 * (seen.get(k) as number) + 3), 3 * v));
  const distinct = (shift: bigint): number => new Set(keys.map((k) => k >> shift)).size;
  return { voxels, keys, counts: { uppers: distinct(36n), lowers: distinct(21n), leaves: distinct(9n) } };
}

/** Voxels of the longest build-order prefix whose node counts fit `capacity`. */
function keptPrefix(keys: readonly bigint[], capacity: NodeCapacity): number {
  const tiles = new Set<bigint>();
  const lowers = new Set<bigint>();
  const leaves = new Set<bigint>();
  for (const [v, k] of keys.entries()) {
    tiles.add(k >> 36n);
    lowers.add(k >> 21n);
    leaves.add(k >> 9n);
    if (tiles.size > capacity.uppers || lowers.size > capacity.lowers || leaves.size > capacity.leaves) return v;
  }
  return keys.length;
}

function gridClassOf(gridType: ValueGrid): GridClass {
  return gridType === GridType.Mask ? GridClass.Topology : GridClass.Unknown;
}

/** The reference: voxelsToGrid's bytes for the first `kept` voxels of the build order and their values. */
function voxelsToGridBytes(c: ValueCase, voxels: Int32Array, values: Values, kept: number): Uint8Array {
  const backend = new HostBackend();
  const layout = valueLayoutOf(c.gridType) as ValueLayout;
  const options = { gridType: c.gridType, background: c.background, voxelSize: VOXEL_SIZE, origin: ORIGIN, name: NAME, gridClass: gridClassOf(c.gridType), checksum: 'full' } as const;
  const given = { coords: voxels.subarray(0, 3 * kept), ...(c.gridType === GridType.Mask ? {} : { values: values.subarray(0, layout.components * kept) }) };
  const handle = unwrap(voxelsToGrid(backend, new HostResource(backend), given, options));
  const bytes = unwrap(handle.hostBytes()).slice();
  handle.dispose();
  backend.dispose();
  return bytes;
}

/** Runs sort, write (with `values` unless Mask) and checksum on `backend`; resolves with the grid's bytes. */
async function writeOn(backend: Backend, stream: Stream, c: ValueCase, coords: Int32Array, values: Values, capacity: NodeCapacity): Promise<Uint8Array> {
  const layout = valueLayoutOf(c.gridType) as ValueLayout;
  const resource = new DeviceResource(backend, backend.devices[0]!);
  const n = coords.length / 3;
  const upload = (bytes: Uint8Array, size: number, label: string): ResourceBuffer<DeviceResource, Uint8ArrayConstructor> => {
    const buffer = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, Math.max(size, 4), { noInit: true }));
    if (bytes.length > 0) unwrap(backend.copyFromHostAsync(stream, subRange(buffer.data as MemoryBlock, 0, bytes.length, label), bytes));
    return buffer;
  };
  const points = upload(new Uint8Array(coords.buffer, coords.byteOffset, coords.byteLength), coords.byteLength, 'points');
  // the write stage takes a values range of one value per point read (a grid has at most that many voxels)
  const valueBytes = upload(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), n * layout.valueSize, 'values');
  const workspace = upload(new Uint8Array(0), workspaceBytes(n, backend.name), 'workspace');
  const grid = upload(new Uint8Array(0), gridBytes(layout, capacity.uppers, capacity.lowers, capacity.leaves), 'grid');
  const ws = workspace.data as MemoryBlock;
  const template = gridTemplate({ layout, gridClass: gridClassOf(c.gridType), voxelSize: VOXEL_SIZE, origin: ORIGIN, nameBytes: NAME_BYTES });
  unwrap(backend.copyFromHostAsync(stream, subRange(ws, TEMPLATE_OFFSET, template.length, 'template'), template));
  const pointRange: MemoryRange = subRange(points.data as MemoryBlock, 0, coords.byteLength, 'points');
  unwrap(backend.launchKernel(stream, sortLaunch(pointRange, ws, { given: n, used: n, encoding: PointEncoding.IndexInt32, inverseVoxelSize: 1, origin: [0, 0, 0] })));
  const valueRange = c.gridType === GridType.Mask ? undefined : subRange(valueBytes.data as MemoryBlock, 0, n * layout.valueSize, 'values');
  unwrap(backend.launchKernel(stream, writeLaunch(ws, grid.data as MemoryBlock, n, layout, capacity, c.background, valueRange)));
  unwrap(backend.launchKernel(stream, checksumLaunch(grid.data as MemoryBlock, ws, 'full')));
  const report = new Uint8Array(REPORT_BYTES);
  unwrap(backend.copyToHostAsync(stream, report, subRange(ws, 0, REPORT_BYTES, 'report')));
  await backend.synchronizeStream(stream);
  const size = readReport(report).gridSize;
  const bytes = new Uint8Array(size);
  unwrap(backend.copyToHostAsync(stream, bytes, subRange(grid.data as MemoryBlock, 0, size, 'grid')));
  await backend.synchronizeStream(stream);
  for (const b of [points, valueBytes, workspace, grid]) unwrap(b.destroy(stream));
  await backend.synchronizeStream(stream);
  return bytes;
}

/**
 * The value write on `make()`'s backend for every grid type the write stage takes values for (and Mask): whole
 * grids, and a capacity cut that keeps a prefix of the voxels and of their values. `sizes.points` points with
 * duplicates, clustered within `sizes.range` voxels of the origin, plus a few far ones over several root tiles.
 */
export function describeValueWrite(label: string, make: () => Backend, sizes: { readonly points: number; readonly range: number }): void {
  describe(`PointsToGrid write stage with voxel values on ${label}`, () => {
    let backend: Backend;
    let stream: Stream;
    let host: HostBackend;
    let hostStream: Stream;
    beforeAll(() => {
      backend = make();
      stream = unwrap(backend.createStream(backend.devices[0]!, { label: 'value write' }));
      host = new HostBackend();
      hostStream = unwrap(host.createStream(host.devices[0]!, { label: 'value write on the host' }));
    });
    afterAll(() => {
      expect(backend.orderingChecker?.violations ?? []).toEqual([]);
      backend.dispose();
      host.dispose();
    });

    async function expectWrite(c: ValueCase, coords: Int32Array, values: Values, capacity: NodeCapacity, kept: number, voxels: Int32Array): Promise<Uint8Array> {
      const got = await writeOn(backend, stream, c, coords, values, capacity);
      expectSameBytes(got, voxelsToGridBytes(c, voxels, values, kept));
      if (backend.name !== 'host') expectSameBytes(got, await writeOn(host, hostStream, c, coords, values, capacity));
      return got;
    }

    for (const [index, c] of CASES.entries()) {
      it(`${c.label}: the grid voxelsToGrid writes for the same voxels, values and background`, async () => {
        const coords = cloud(sizes.points, sizes.range, 100 + index);
        const { voxels, counts } = buildOrder(coords);
        const values = randomValues(valueLayoutOf(c.gridType) as ValueLayout, voxels.length / 3, 200 + index);
        const got = await expectWrite(c, coords, values, counts, voxels.length / 3, voxels);
        expect(unwrap(validateGrids(got))[0]?.voxelCount).toBe(voxels.length / 3);
        // every NaN (payloads, signs, signalling) is stored as the one canonical quiet NaN
        expectSameBytes(got, voxelsToGridBytes(c, voxels, withCanonicalNaNs(values), voxels.length / 3));
      });

      it(`${c.label}: a capacity cut keeps the prefix of the voxels and of their values`, async () => {
        const coords = cloud(sizes.points, sizes.range, 300 + index);
        const { voxels, counts, keys } = buildOrder(coords);
        const capacity = { uppers: counts.uppers, lowers: counts.lowers, leaves: Math.max(1, Math.floor(counts.leaves / 2)) };
        const kept = keptPrefix(keys, capacity);
        expect(kept).toBeLessThan(voxels.length / 3);
        const values = randomValues(valueLayoutOf(c.gridType) as ValueLayout, voxels.length / 3, 400 + index);
        await expectWrite(c, coords, values, capacity, kept, voxels);
      });
    }
  });
}
