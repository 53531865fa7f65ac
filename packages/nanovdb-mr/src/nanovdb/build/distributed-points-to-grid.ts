import { ErrorCode, HsError, type Backend, type Stream } from '@hs/streams';
import { ResourceBuffer } from '../../resource-buffer.js';
import { isAsyncResource, type AsyncResource, type MemoryBlock } from '../../resource.js';
import { resourceOrigin } from '../../resource-origin.js';
import { checksumScratchBytes, headBytes, planDeviceMerge, shiftLaunch } from './grid-merge-device.js';
import { isAttributeBuild } from './point-attribute-spans.js';
import { MAX_DEVICE_POINTS } from './point-spans.js';
import type { IndexPoints, WorldPoints } from './points-to-grid.js';
import { pointsToGridAsync, type StreamGrid } from './points-to-grid-async.js';
import { checksumLaunch, voxelCoordinate } from './points-to-grid-kernels.js';
import { subRange } from './points-to-grid-workspace.js';
import { checkGridBytes, invalidPointMessage, resolveGridOptions, type PointsToGridOptions } from './points-to-grid-options.js';

const WHO = 'distributedPointsToGrid';

/**
 * Point i's root tile into `tile`: x, y in `tile[0]`, z in `tile[1]` (exact numbers, together 60 bits; each axis
 * `(c + 2^31) >> 12`, the 21-bit tile coordinate whose order is the build key's high bits). False for a point that
 * maps to no voxel. The split's one quantization (world points as each part's build maps them).
 */
function tileOfPoint(data: Int32Array | Float32Array | Float64Array, i: number, world: boolean, origin: readonly [number, number, number], inv: number, tile: Float64Array): boolean {
  let x = data[3 * i] as number;
  let y = data[3 * i + 1] as number;
  let z = data[3 * i + 2] as number;
  if (world) {
    x = voxelCoordinate(x, origin[0], inv);
    y = voxelCoordinate(y, origin[1], inv);
    z = voxelCoordinate(z, origin[2], inv);
    if (!(x >= -2147483648 && x <= 2147483647 && y >= -2147483648 && y <= 2147483647 && z >= -2147483648 && z <= 2147483647)) return false;
  }
  tile[0] = (((x ^ 0x80000000) >>> 12) & 0x1fffff) * 2097152 + (((y ^ 0x80000000) >>> 12) & 0x1fffff);
  tile[1] = ((z ^ 0x80000000) >>> 12) & 0x1fffff;
  return true;
}

/** A root tile seen in the points: its key split in two exact numbers (x, y high; z low), its points and its part. */
interface TileEntry {
  readonly high: number;
  readonly low: number;
  count: number;
  part: number;
  /** Creation order (index into the entries). */
  readonly id: number;
}

/** The points of each part, raw (world points are quantized by each part's build, the same function as one build). */
interface Split {
  readonly parts: (Int32Array | Float32Array | Float64Array)[];
}

/** The counting pass's result: runs of same-tile points, the tiles with their parts, each part's points. */
export interface TileCount {
  /** (first point, tile id) pairs of the first `min(runCount, maxRuns)` runs. */
  readonly runs: Uint32Array;
  readonly runCount: number;
  /** True when `runs` holds every run. */
  readonly complete: boolean;
  readonly entries: readonly { readonly part: number }[];
  /** Points of each part. */
  readonly counts: readonly number[];
  /** The part of the tile (x, y high; z low). */
  partOf(high: number, low: number): number;
}

/** Most runs of same-tile points uploaded one copy each, straight from the input (more: gathered on the host first). */
const DIRECT_RUNS = 256;

/** Most runs of same-tile points the counting pass records (then the scatter pass maps every point again). */
const MAX_RUNS = 1 << 20;

/**
 * The counting pass of the split by root tile: each tile's points (recording runs of consecutive points in one
 * tile, at most `maxRuns` of them) and its part, `k` parts of contiguous tile runs in build order with about equal
 * point counts. Returns the first point that maps to no voxel instead, when there is one.
 */
export function countRootTiles(data: Int32Array | Float32Array | Float64Array, k: number, voxelSize: number, origin: readonly [number, number, number], maxRuns = MAX_RUNS): TileCount | { readonly invalid: number } {
  const n = data.length / 3;
  const world = !(data instanceof Int32Array);
  const inv = 1 / voxelSize;
  const tiles = new Map<number, Map<number, TileEntry>>();
  const entries: TileEntry[] = [];
  const tile = new Float64Array(2);
  // the tile `entryOf` looks up: x, y in `high`, z in `low`
  let high = 0;
  let low = 0;
  const entryOf = (create: boolean): TileEntry => {
    let inner = tiles.get(high);
    if (inner === undefined) {
      inner = new Map();
      tiles.set(high, inner);
    }
    let entry = inner.get(low);
    if (entry === undefined && create) {
      entry = { high, low, count: 0, part: 0, id: entries.length };
      entries.push(entry);
      inner.set(low, entry);
    }
    return entry as TileEntry;
  };
  // runs: (first point, tile id) pairs of consecutive points in one tile
  let runs = new Uint32Array(256);
  let runCount = 0;
  let last: TileEntry | undefined;
  let lastHigh = -1;
  let lastLow = -1;
  let runStart = 0;
  /** Closes the run of `last` that ends before point `end`. */
  const closeRun = (end: number): void => {
    const entry = last as TileEntry;
    entry.count += end - runStart;
    if (runCount < maxRuns) {
      if (2 * runCount + 2 > runs.length) {
        const grown = new Uint32Array(2 * runs.length);
        grown.set(runs);
        runs = grown;
      }
      runs[2 * runCount] = runStart;
      runs[2 * runCount + 1] = entry.id;
    }
    runCount++;
  };
  // the counting pass (`entryOf` on a tile change only)
  for (let i = 0; i < n; i++) {
    if (!tileOfPoint(data, i, world, origin, inv, tile)) return { invalid: i };
    const h = tile[0] as number;
    const l = tile[1] as number;
    if (h !== lastHigh || l !== lastLow) {
      if (last !== undefined) closeRun(i);
      high = h;
      low = l;
      last = entryOf(true);
      lastHigh = h;
      lastLow = l;
      runStart = i;
    }
  }
  if (last !== undefined) closeRun(n);
  const ordered = entries.slice().sort((a, b) => a.high - b.high || a.low - b.low);
  // contiguous runs of tiles: part p takes tiles until the running count reaches (p + 1) / k of the points
  const counts = new Array<number>(k).fill(0);
  let running = 0;
  let part = 0;
  for (const entry of ordered) {
    while (part < k - 1 && running >= ((part + 1) * n) / k) part++;
    entry.part = part;
    counts[part]! += entry.count;
    running += entry.count;
  }
  return { runs, runCount, complete: runCount <= maxRuns, entries, counts, partOf: (h: number, l: number): number => {
    high = h;
    low = l;
    return entryOf(false).part;
  } };
}

/**
 * Splits host points by root tile into `k` parts of contiguous tile runs in build order with about equal point
 * counts: `countRootTiles`, then `scatterByRootTile` (copying whole runs, or mapping every point again when the
 * cloud has more than `maxRuns` runs). Returns the first point that maps to no voxel instead, when there is one.
 */
export function splitByRootTile(data: Int32Array | Float32Array | Float64Array, k: number, voxelSize: number, origin: readonly [number, number, number], maxRuns = MAX_RUNS): Split | { readonly invalid: number } {
  const count = countRootTiles(data, k, voxelSize, origin, maxRuns);
  return 'invalid' in count ? count : scatterByRootTile(data, count, voxelSize, origin);
}

/** The scatter pass of `splitByRootTile` after `countRootTiles` counted `data`: each part's points, copied. */
export function scatterByRootTile(data: Int32Array | Float32Array | Float64Array, count: TileCount, voxelSize: number, origin: readonly [number, number, number]): Split {
  const { runs, runCount, entries, counts } = count;
  const k = counts.length;
  const n = data.length / 3;
  const world = !(data instanceof Int32Array);
  const inv = 1 / voxelSize;
  const tile = new Float64Array(2);
  const Element = data.constructor as Int32ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor;
  const parts = counts.map((c) => new Element(3 * c));
  const cursor = new Array<number>(k).fill(0);
  if (count.complete) {
    for (let r = 0; r < runCount; r++) {
      const from = runs[2 * r] as number;
      const to = r + 1 < runCount ? (runs[2 * r + 2] as number) : n;
      const p = (entries[runs[2 * r + 1] as number] as TileEntry).part;
      (parts[p] as Int32Array).set((data as Int32Array).subarray(3 * from, 3 * to), 3 * (cursor[p] as number));
      cursor[p]! += to - from;
    }
    return { parts };
  }
  let lastHigh = -1;
  let lastLow = -1;
  let p = 0;
  for (let i = 0; i < n; i++) {
    tileOfPoint(data, i, world, origin, inv, tile);
    if (tile[0] !== lastHigh || tile[1] !== lastLow) {
      lastHigh = tile[0] as number;
      lastLow = tile[1] as number;
      p = count.partOf(lastHigh, lastLow);
    }
    const out = parts[p] as Int32Array | Float32Array | Float64Array;
    const at = 3 * cursor[p]!++;
    out[at] = data[3 * i] as number;
    out[at + 1] = data[3 * i + 1] as number;
    out[at + 2] = data[3 * i + 2] as number;
  }
  return { parts };
}

/** What one part's build holds until the merge: its input copy and its grid. */
interface PartBuild {
  input: ResourceBuffer<AsyncResource, Int32ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor> | null;
  grid: StreamGrid | null;
}

/**
 * Builds one NanoVDB grid from host points on several devices: the points are split by space (by root tile, the
 * 4096-voxel span of an upper node, in build-key order, into one contiguous run of tiles per device with about equal
 * point counts), each part is built with `pointsToGridAsync` on its stream through its own resource, all parts
 * concurrently, and the parts are merged into one grid, byte for byte the grid `pointsToGrid` or `pointsToGridAsync`
 * builds from all the points with the same options (checksum included).
 *
 * `streams[i]` names device i (`streams[i].device`; two streams of one device are fine, for testing on one GPU) and
 * `resources[i]` is an async resource of that device: part i's input copy, workspace and grid come from it. The
 * merged grid is allocated through `resources[0]` on `streams[0]` and resolves like `pointsToGridAsync`'s: its work
 * is enqueued on `streams[0]`, read it after that stream's work. The parts stay in device memory: only their heads
 * (GridData, TreeData, RootData and root tiles) come back to the host (one small read-back per part, awaited through
 * `synchronizeStream`), the merged head is written from the host, each part's node levels are copied into the merged
 * grid on `streams[0]` (`memcpyAsync` on one device, `backend.peerCopy` between devices, through the host when
 * neither reaches), `hs.nanovdb.gridMerge.shift` moves the copied nodes' child offsets and OnIndex value offsets
 * and `hs.nanovdb.gridChecksum` writes the checksum; the parts are freed on their streams after those copies.
 * Host memory: the heads, and the split points (the input's size) unless the cloud comes in at most 256 runs of
 * same-tile points (then each run is uploaded straight from `points` into its part).
 *
 * The split's unit is the root tile: a cloud inside one root tile (4096 voxels per axis) builds on one device, and
 * a cloud of a few tiles of very different point counts splits only as evenly as its tiles allow.
 *
 * Grid types: OnIndex and Float, with every option of `pointsToGridAsync` except `attributes` (a per-point attribute
 * reduction would need the attributes split the same way and its channel merged; not supported yet: InvalidArgument).
 * `maxGridBytes` applies to every part and to the merged grid. Allocations through `resources[0]`: besides part 0's, the merged
 * grid and a small checksum scratch (freed on `streams[0]`).
 *
 * Rejects with an `HsError`: InvalidArgument before anything is allocated for an empty stream list, stream and
 * resource lists of different lengths, a resource that is not async, declares another device than its stream's or
 * another backend, points that are not `{ space: 'index', coords: Int32Array }` or `{ space: 'world', positions:
 * Float32Array | Float64Array }` or not whole triplets, more than `MAX_DEVICE_POINTS` points, bad options or `attributes`, and a point
 * that is NaN, infinite or maps outside the 32-bit index range (named, with its coordinates); InvalidArgument for a
 * grid above `maxGridBytes`; the resources' and backend's errors. Nothing is left allocated on failure.
 * Spec: issue 27 item 3 (points split by space across GPUs, merged byte-identical to the one-GPU build).
 * @example
 * ```ts
 * import { DeviceResource, GridType, distributedPointsToGrid, pointsToGrid, HostResource } from '@hs/nanovdb-mr';
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend({ deviceCount: 2 }); // CudaBackend on two GPUs runs the same code as kernels
 * const devices = [Device.cuda(0), Device.cuda(1)];
 * const streams = devices.map((d) => unwrap(backend.createStream(d)));
 * const resources = devices.map((d) => new DeviceResource(backend, d));
 * const coords = new Int32Array([0, 0, 0, 5000, 1, 2, -9000, 3, 3, 5001, 1, 2]); // three root tiles
 * const built = await distributedPointsToGrid(backend, { space: 'index', coords }, streams, resources, { gridType: GridType.OnIndex });
 * const bytes = new Uint8Array(built.gridSize);
 * unwrap(backend.copyToHostAsync(streams[0]!, bytes, built.buffer.data!));
 * await backend.synchronizeStream(streams[0]!);
 * const one = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, { gridType: GridType.OnIndex }));
 * const same = unwrap(one.hostBytes()).every((b, i) => b === bytes[i]);
 * console.log(`${built.counts.voxels} voxels in ${built.counts.uppers} root tiles, the one-device bytes: ${same}`);
 * built.buffer.dispose();
 * one.dispose();
 * ```
 */
export async function distributedPointsToGrid(
  backend: Backend,
  points: IndexPoints | WorldPoints,
  streams: readonly Stream[],
  resources: readonly AsyncResource[],
  options: PointsToGridOptions,
): Promise<StreamGrid> {
  const data = points?.space === 'index' ? points.coords : points?.space === 'world' ? points.positions : undefined;
  if (data === undefined || (points.space === 'index' ? !(data instanceof Int32Array) : !(data instanceof Float32Array || data instanceof Float64Array))) {
    throw new HsError(ErrorCode.InvalidArgument, `${WHO}: points must be { space: 'index', coords: Int32Array } or { space: 'world', positions: Float32Array | Float64Array }`);
  }
  if (!Array.isArray(streams) || streams.length === 0) throw new HsError(ErrorCode.InvalidArgument, `${WHO}: streams must be a non-empty array (one stream per device)`);
  if (!Array.isArray(resources) || resources.length !== streams.length) {
    throw new HsError(ErrorCode.InvalidArgument, `${WHO}: ${Array.isArray(resources) ? resources.length : 'no'} resources for ${streams.length} streams; pass one resource per stream`);
  }
  for (let i = 0; i < streams.length; i++) {
    const stream = streams[i] as Stream;
    const resource = resources[i] as AsyncResource;
    if (typeof stream !== 'object' || stream === null || stream.device === undefined) throw new HsError(ErrorCode.InvalidArgument, `${WHO}: streams[${i}] is not a stream`);
    if (!isAsyncResource(resource)) throw new HsError(ErrorCode.InvalidArgument, `${WHO}: resources[${i}] is not an async resource (allocateAsync and deallocateAsync); lift a synchronous one with AsyncFromSync`);
    const origin = resourceOrigin(resource);
    if (origin !== null && origin.device !== stream.device) {
      throw new HsError(ErrorCode.InvalidArgument, `${WHO}: resources[${i}] allocates on ${origin.device.toString()}, but streams[${i}] submits to ${stream.device.toString()}; pass each device's own resource`);
    }
    if (origin !== null && origin.backend !== null && origin.backend !== backend) throw new HsError(ErrorCode.InvalidArgument, `${WHO}: resources[${i}] allocates from another backend`);
  }
  if (data.length % 3 !== 0) throw new HsError(ErrorCode.InvalidArgument, `${WHO}: ${data.length} coordinates is not a whole number of x, y, z triplets`);
  if (data.length / 3 > MAX_DEVICE_POINTS) throw new HsError(ErrorCode.InvalidArgument, `${WHO}: ${data.length / 3} points exceed the limit of 2^32 - 1 per stream-ordered build; split the cloud`);
  if (isAttributeBuild(options as never)) throw new HsError(ErrorCode.InvalidArgument, `${WHO}: attributes are not supported; build attribute grids with pointsToGridAsync on one device`);
  const settings = resolveGridOptions(WHO, options);
  if (!settings.ok) throw settings.error;
  const count = countRootTiles(data, streams.length, settings.value.voxelSize, settings.value.origin);
  if ('invalid' in count) {
    const i = count.invalid;
    throw new HsError(ErrorCode.InvalidArgument, invalidPointMessage(WHO, i, { coordinates: [data[3 * i] as number, data[3 * i + 1] as number, data[3 * i + 2] as number], voxelSize: settings.value.voxelSize }));
  }

  // few runs of same-tile points (a cloud in space order) go straight from the input to their parts; else the
  // parts are gathered on the host first
  const direct = count.complete && count.runCount <= DIRECT_RUNS;
  const split = direct ? null : scatterByRootTile(data, count, settings.value.voxelSize, settings.value.origin);
  const Element = data.constructor as Int32ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor;
  /** Enqueues the upload of part i's points into `into` on `stream`. */
  const upload = (i: number, stream: Stream, into: MemoryBlock): { ok: true } | { ok: false; error: HsError } => {
    const bytesPer = 3 * Element.BYTES_PER_ELEMENT;
    if (split !== null) {
      const part = split.parts[i] as Int32Array | Float32Array | Float64Array;
      return backend.copyFromHostAsync(stream, into, new Uint8Array(part.buffer, part.byteOffset, part.byteLength));
    }
    const n = data.length / 3;
    let at = 0;
    for (let r = 0; r < count.runCount; r++) {
      if ((count.entries[count.runs[2 * r + 1] as number] as { part: number }).part !== i) continue;
      const from = count.runs[2 * r] as number;
      const to = r + 1 < count.runCount ? (count.runs[2 * r + 2] as number) : n;
      const copied = backend.copyFromHostAsync(stream, subRange(into, at * bytesPer, (to - from) * bytesPer, 'distributed part points'), new Uint8Array(data.buffer, data.byteOffset + from * bytesPer, (to - from) * bytesPer));
      if (!copied.ok) return copied;
      at += to - from;
    }
    return { ok: true };
  };

  // the parts skip their checksums: the merge computes the one the options ask for
  const partOptions: PointsToGridOptions = { ...options, checksum: 'disabled' };
  const builds: PartBuild[] = [];
  /** Frees every part's input and grid on its stream; returns `error` for the caller to throw. */
  const release = (error?: HsError): HsError | undefined => {
    for (let i = 0; i < builds.length; i++) {
      const stream = streams[i] as Stream;
      builds[i]?.input?.destroy(stream);
      builds[i]?.grid?.buffer.destroy(stream);
    }
    builds.length = 0;
    return error;
  };
  // empty parts build nothing, unless every part is empty (then part 0 builds the empty grid)
  const anyPoints = count.counts.some((c) => c > 0);
  const running: Promise<void>[] = [];
  for (let i = 0; i < streams.length; i++) {
    const build: PartBuild = { input: null, grid: null };
    builds.push(build);
    const points = count.counts[i] as number;
    if (points === 0 && (anyPoints || i > 0)) continue;
    const stream = streams[i] as Stream;
    const resource = resources[i] as AsyncResource;
    const made = ResourceBuffer.allocateAsync(backend, stream, resource, 3 * points, { noInit: true, element: Element });
    if (!made.ok) {
      await Promise.allSettled(running);
      throw release(made.error);
    }
    build.input = made.value;
    if (points > 0) {
      const copied = upload(i, stream, build.input.data as MemoryBlock);
      if (!copied.ok) {
        await Promise.allSettled(running);
        throw release(copied.error);
      }
    }
    const span = data instanceof Int32Array ? { space: 'index' as const, coords: build.input as ResourceBuffer<AsyncResource, Int32ArrayConstructor> } : { space: 'world' as const, positions: build.input as ResourceBuffer<AsyncResource, Float32ArrayConstructor> };
    running.push(
      pointsToGridAsync(backend, stream, resource, span, partOptions).then((grid) => {
        build.grid = grid;
      }),
    );
  }
  const settled = await Promise.allSettled(running);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) throw release(failed.reason as HsError);

  // only the parts' heads come back to the host; their nodes are copied into the merged grid on streams[0]'s device
  const layout = settings.value.layout;
  const built: number[] = [];
  const heads: Uint8Array[] = [];
  for (let i = 0; i < builds.length; i++) {
    const grid = builds[i]?.grid;
    if (grid === null || grid === undefined) continue;
    const bytes = new Uint8Array(headBytes(layout, grid.counts.uppers));
    const copied = backend.copyToHostAsync(streams[i] as Stream, bytes, subRange(grid.buffer.data as MemoryBlock, 0, bytes.byteLength, 'distributed part head'));
    if (!copied.ok) throw release(copied.error);
    built.push(i);
    heads.push(bytes);
  }
  try {
    await Promise.all([...new Set(built.map((i) => streams[i] as Stream))].map((s) => backend.synchronizeStream(s)));
  } catch (error) {
    throw release(error as HsError);
  }
  let counts = { voxels: 0, leaves: 0, lowers: 0, uppers: 0 };
  for (const b of builds) {
    if (b.grid !== null) counts = { voxels: counts.voxels + b.grid.counts.voxels, leaves: counts.leaves + b.grid.counts.leaves, lowers: counts.lowers + b.grid.counts.lowers, uppers: counts.uppers + b.grid.counts.uppers };
  }
  const merge = planDeviceMerge(heads, layout);
  const gridSize = merge.plan.gridSize;
  const capped = checkGridBytes(WHO, gridSize, counts, settings.value);
  if (!capped.ok) throw release(capped.error);
  const stream = streams[0] as Stream;
  const out = ResourceBuffer.allocateAsync(backend, stream, resources[0] as AsyncResource, gridSize, { noInit: true });
  if (!out.ok) throw release(out.error);
  const scratch = ResourceBuffer.allocateAsync(backend, stream, resources[0] as AsyncResource, checksumScratchBytes(gridSize), { noInit: true });
  if (!scratch.ok) {
    out.value.destroy(stream);
    throw release(scratch.error);
  }
  const merged = out.value.data as MemoryBlock;
  const fail = async (error: HsError): Promise<HsError> => {
    await Promise.allSettled(streams.map((s) => backend.synchronizeStream(s)));
    out.value.destroy(stream);
    scratch.value.destroy(stream);
    return release(error) as HsError;
  };
  const step = (r: { ok: true } | { ok: false; error: HsError }): HsError | null => (r.ok ? null : r.error);
  let problem = step(backend.copyFromHostAsync(stream, subRange(merged, 0, merge.head.byteLength, 'distributed merged head'), merge.head));
  const peer = backend.peerCopy;
  for (const part of merge.parts) {
    if (problem !== null) break;
    const i = built[part.part] as number;
    const grid = (builds[i] as PartBuild).grid as StreamGrid;
    const source = grid.buffer.data as MemoryBlock;
    const from = streams[i] as Stream;
    let staged: Uint8Array | null = null;
    if (from.device !== stream.device && (peer === undefined || !peer.canAccessPeer(stream.device, from.device))) {
      // no peer path: through the host (the part's work is complete, its head was read after it)
      staged = new Uint8Array(grid.gridSize);
      problem = step(backend.copyToHostAsync(from, staged, source));
      if (problem === null) {
        try {
          await backend.synchronizeStream(from);
        } catch (error) {
          problem = error as HsError;
        }
      }
    }
    for (const c of part.copies) {
      if (problem !== null) break;
      const dst = subRange(merged, c.at, c.bytes, 'distributed merged nodes');
      if (staged !== null) problem = step(backend.copyFromHostAsync(stream, dst, staged.subarray(c.from, c.from + c.bytes)));
      else if (from.device === stream.device) problem = step(backend.memcpyAsync(stream, dst, subRange(source, c.from, c.bytes, 'distributed part nodes')));
      else {
        const copied = (peer as NonNullable<typeof peer>).copyAsync(stream, dst, subRange(source, c.from, c.bytes, 'distributed part nodes'));
        problem = copied.ok ? null : copied.error;
      }
    }
    for (const s of part.shifts) {
      if (problem !== null) break;
      problem = step(backend.launchKernel(stream, shiftLaunch(subRange(merged, s.at, s.bytes, 'distributed shifted nodes'), s.params)));
    }
  }
  if (problem === null) problem = step(backend.launchKernel(stream, checksumLaunch(merged, scratch.value.data as MemoryBlock, settings.value.checksum)));
  if (problem !== null) throw await fail(problem);
  // the parts are freed on their streams after the merge's copies on `stream`
  const merging = backend.createEvent(stream.device);
  if (!merging.ok) throw await fail(merging.error);
  problem = step(backend.recordEvent(merging.value, stream));
  for (const i of built) {
    const own = streams[i] as Stream;
    if (problem === null && own !== stream) problem = step(backend.streamWaitEvent(own, merging.value));
  }
  if (problem !== null) {
    backend.destroyEvent(merging.value);
    throw await fail(problem);
  }
  release();
  backend.destroyEvent(merging.value);
  scratch.value.destroy(stream);
  return { buffer: out.value, counts: { ...counts }, gridSize };
}
