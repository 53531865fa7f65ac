import { ErrorCode, HsError, type Backend, type Stream } from '@hs/streams';
import { ResourceBuffer } from '../../resource-buffer.js';
import { isAsyncResource, type AsyncResource, type MemoryBlock } from '../../resource.js';
import { resourceOrigin } from '../../resource-origin.js';
import { checksumScratchBytes, headBytes, planDeviceMerge, shiftLaunch } from './grid-merge-device.js';
import { isAttributeBuild } from './point-attribute-spans.js';
import { MAX_DEVICE_POINTS } from './point-spans.js';
import type { IndexPoints, WorldPoints } from './points-to-grid.js';
import { pointsToGridAsync, type StreamGrid } from './points-to-grid-async.js';
import { checksumLaunch } from './points-to-grid-kernels.js';
import { MAX_SPLIT_PARTS, splitOnDevice } from './distributed-split.js';
import { subRange } from './points-to-grid-workspace.js';
import { checkGridBytes, invalidPointMessage, resolveGridOptions, type PointsToGridOptions } from './points-to-grid-options.js';

const WHO = 'distributedPointsToGrid';

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
 * is enqueued on `streams[0]`, read it after that stream's work.
 *
 * The split runs on the device: the whole cloud is uploaded once to `streams[0]`'s device; the k - 1 part bounds
 * (root tile keys) are planned on the host from a strided sample of at most 16384 points (no pass over all the
 * points in JavaScript); `hs.nanovdb.distributed.splitCount` counts each part's points and finds the first point that
 * maps to no voxel, and those k + 1 words are the split's one read-back (awaited through `synchronizeStream`); then
 * `hs.nanovdb.distributed.splitScatter` puts the points in part order and each part's run is copied into its own
 * input on its stream (`memcpyAsync` on one device, `backend.peerCopy` between devices, through the host where the
 * devices do not reach each other: a second wait). The parts then build concurrently and stay in device memory:
 * only their heads (GridData, TreeData, RootData and root tiles) come back to the host (one small read-back per
 * part), the merged head is written from the host, each part's node levels are copied into the merged grid on
 * `streams[0]` (the same three copy paths), `hs.nanovdb.gridMerge.shift` moves the copied nodes' child offsets and
 * OnIndex value offsets and `hs.nanovdb.gridChecksum` writes the checksum; the parts are freed on their streams
 * after those copies. Host memory: the sample's keys, the heads (and a part's points where they are staged).
 *
 * The split's unit is the root tile: a cloud inside one root tile (4096 voxels per axis) builds on one device, and
 * a cloud of a few tiles of very different point counts splits only as evenly as its tiles allow (and as the
 * sample sees them: the parts' point counts are about equal, the grid is the same for any split).
 *
 * Grid types: OnIndex and Float, with every option of `pointsToGridAsync` except `attributes` (a per-point attribute
 * reduction would need the attributes split the same way and its channel merged; not supported yet: InvalidArgument).
 * `maxGridBytes` applies to every part and to the merged grid. Allocations through `resources[0]` on `streams[0]`:
 * besides part 0's, the uploaded cloud and the split's meta block (3k + 1 u64 words; freed after the scatter), the
 * points in part order (the cloud's size again; freed once the parts' copies ran), the merged grid and a small
 * checksum scratch.
 *
 * Rejects with an `HsError`: InvalidArgument before anything is allocated for an empty stream list, more than 256
 * streams, stream and resource lists of different lengths, a resource that is not async, declares another device
 * than its stream's or another backend, points that are not `{ space: 'index', coords: Int32Array }` or `{ space:
 * 'world', positions: Float32Array | Float64Array }` or not whole triplets, more than `MAX_DEVICE_POINTS` points, bad
 * options or `attributes`; InvalidArgument after the upload for a point that is NaN, infinite or maps outside the
 * 32-bit index range (the first one, named with its coordinates); InvalidArgument for a grid above `maxGridBytes`;
 * the resources' and backend's errors. Nothing is left allocated on failure.
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
  if (streams.length > MAX_SPLIT_PARTS) throw new HsError(ErrorCode.InvalidArgument, `${WHO}: ${streams.length} streams exceed the split's limit of ${MAX_SPLIT_PARTS} parts`);
  const { voxelSize, origin } = settings.value;
  const invalid = (i: number): HsError => new HsError(ErrorCode.InvalidArgument, invalidPointMessage(WHO, i, { coordinates: [data[3 * i] as number, data[3 * i + 1] as number, data[3 * i + 2] as number], voxelSize }));
  const split = await splitOnDevice(backend, data, streams, resources, 1 / voxelSize, origin, invalid);

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
  // the split gave an input to every part that builds (an empty part builds nothing, unless every part is empty:
  // then part 0 builds the empty grid); all of them start building at once
  const running: Promise<void>[] = [];
  for (let i = 0; i < streams.length; i++) {
    const input = split.inputs[i] ?? null;
    const build: PartBuild = { input, grid: null };
    builds.push(build);
    if (input === null) continue;
    const span = data instanceof Int32Array ? { space: 'index' as const, coords: input as ResourceBuffer<AsyncResource, Int32ArrayConstructor> } : { space: 'world' as const, positions: input as ResourceBuffer<AsyncResource, Float32ArrayConstructor> };
    running.push(
      pointsToGridAsync(backend, streams[i] as Stream, resources[i] as AsyncResource, span, partOptions).then((grid) => {
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
