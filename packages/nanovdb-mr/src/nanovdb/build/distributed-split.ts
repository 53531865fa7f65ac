/**
 * The split of `distributedPointsToGrid` by root tile, on the device: the whole cloud is uploaded once to
 * `streams[0]`'s device, `hs.nanovdb.distributed.splitCount` counts each part's points (and finds the first point
 * that maps to no voxel), those k + 1 words are the one read-back, and `hs.nanovdb.distributed.splitScatter` puts
 * the points in part order, from where each part's run is copied to its stream's device. The parts' bounds are
 * planned on the host from a strided sample of the points (`planSplitBounds`). On the CUDA backend the launches
 * run the kernels of `native/src/nanovdb/grid-distribute.cu`; on the host backend the host implementations below.
 *
 * The meta block of the two kernels (u64 words, k parts): [0] the first point that maps to no voxel (all ones:
 * none), [1, k] the parts' point counts, [k + 1, 2k] the scatter's cursors, [2k + 1, 3k - 1] the k - 1 bounds
 * (one more word, so that the bounds' range is never empty). A point's part is the number of bounds at or below its
 * root tile key: the x, y, z tile coordinates (`tileCoord`, 20 bits each) at bits 42, 21 and 0, the build's order
 * of root tiles. Spec: issue 27 item 3.
 */
import { ErrorCode, HsError, type Backend, type KernelLaunch, type MemoryRange, type Stream } from '@hs/streams';
import { ResourceBuffer } from '../../resource-buffer.js';
import type { AsyncResource, MemoryBlock } from '../../resource.js';
import { PointEncoding, voxelCoordinate } from './points-to-grid-kernels.js';
import { subRange } from './points-to-grid-workspace.js';
import { tileCoord } from './root-tile-partition.js';

/** Most parts the split kernels take (their per-block counters). */
export const MAX_SPLIT_PARTS = 256;

/**
 * Points the bounds are planned from (a strided sample; every point when the cloud has fewer): enough for part
 * shares within about 1 % (the binomial error of a quantile of 16384 draws is 0.4 % of the points), few enough that
 * the sample costs a few milliseconds even where every sampled point misses the caches (1e8 points).
 */
export const SPLIT_SAMPLE_POINTS = 16384;

/** Host points of a split: index coordinates or world positions, x, y, z triplets. */
export type SplitPoints = Int32Array | Float32Array | Float64Array;

type PointElement = Int32ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor;

/** The world-to-index map and part count of a split launch. */
export interface SplitParams {
  /** Points in the input. */
  readonly n: number;
  readonly encoding: PointEncoding;
  /** 1 / voxel size. */
  readonly inverseVoxelSize: number;
  readonly origin: readonly [number, number, number];
  /** Parts, 1 to `MAX_SPLIT_PARTS`. */
  readonly k: number;
}

/** Words of the meta block of a split into `k` parts. */
export function splitMetaWords(k: number): number {
  return 3 * k + 1;
}

/** The encoding of host points. */
export function encodingOf(data: SplitPoints): PointEncoding {
  return data instanceof Int32Array ? PointEncoding.IndexInt32 : data instanceof Float32Array ? PointEncoding.WorldFloat32 : PointEncoding.WorldFloat64;
}

/**
 * Point i's root tile key into `key` as two u32 words (`key[0]` bits 0-31, `key[1]` bits 32-63), false for a point
 * that maps to no voxel (world points as the build maps them: `voxelCoordinate`, in double).
 */
function tileKeyOf(data: ArrayLike<number>, i: number, world: boolean, inv: number, ox: number, oy: number, oz: number, key: Uint32Array): boolean {
  let x = data[3 * i] as number;
  let y = data[3 * i + 1] as number;
  let z = data[3 * i + 2] as number;
  if (world) {
    x = voxelCoordinate(x, ox, inv);
    y = voxelCoordinate(y, oy, inv);
    z = voxelCoordinate(z, oz, inv);
    if (!(x >= -2147483648 && x <= 2147483647 && y >= -2147483648 && y <= 2147483647 && z >= -2147483648 && z <= 2147483647)) return false;
  }
  const tx = tileCoord(x);
  const ty = tileCoord(y);
  key[0] = ((ty & 0x7ff) << 21) | tileCoord(z);
  key[1] = (tx << 10) | (ty >>> 11);
  return true;
}

/** The part of key (`high`, `low`): how many of the k - 1 bounds (u64 words at `at` of `v`) are at or below it. */
function partOf(high: number, low: number, v: DataView, at: number, k: number): number {
  let p = 0;
  while (p < k - 1) {
    const bh = v.getUint32(at + 8 * p + 4, true);
    if (high < bh || (high === bh && low < v.getUint32(at + 8 * p, true))) break;
    p++;
  }
  return p;
}

/**
 * Plans the k - 1 bounds of a split into `k` parts of about equal point counts from a strided sample of the host
 * points (at most `SPLIT_SAMPLE_POINTS`, one in each stride at a deterministic offset, points that map to no voxel left out: the device finds those): part p ends
 * after the root tile of the sample's (p + 1) / k quantile, so a tile is never cut and a cloud inside one tile
 * goes to part 0. Bounds are non-decreasing; all ones (after every key) where no sampled tile follows.
 */
export function planSplitBounds(data: SplitPoints, k: number, inverseVoxelSize: number, origin: readonly [number, number, number]): BigUint64Array {
  const n = data.length / 3;
  const sample = Math.min(n, SPLIT_SAMPLE_POINTS);
  const keys = new BigUint64Array(sample);
  const words = new Uint32Array(keys.buffer);
  const key = new Uint32Array(2);
  const world = !(data instanceof Int32Array);
  const [ox, oy, oz] = origin;
  let valid = 0;
  for (let s = 0; s < sample; s++) {
    // one point in each of `sample` equal strides, at a golden-ratio offset inside it (no aliasing with periodic clouds)
    if (!tileKeyOf(data, Math.floor(((s + ((s * 0.6180339887498949) % 1)) * n) / sample), world, inverseVoxelSize, ox, oy, oz, key)) continue;
    words[2 * valid] = key[0] as number;
    words[2 * valid + 1] = key[1] as number;
    valid++;
  }
  const sorted = keys.subarray(0, valid).sort();
  const bounds = new BigUint64Array(k - 1).fill(0xffffffffffffffffn);
  let next = 0;
  for (let p = 0; p < k - 1; p++) {
    const last = Math.ceil(((p + 1) * valid) / k) - 1;
    if (last < 0) continue;
    if (next <= last) next = last + 1;
    while (next < valid && (sorted[next] as bigint) === (sorted[last] as bigint)) next++;
    if (next < valid) bounds[p] = sorted[next] as bigint;
  }
  return bounds;
}

function splitParamList(p: SplitParams): number[] {
  return [p.n, p.encoding, p.inverseVoxelSize, p.origin[0], p.origin[1], p.origin[2], p.k];
}

/** The bounds' range of a meta block. */
function boundsRange(meta: MemoryRange, k: number): MemoryRange {
  return subRange(meta, 8 * (2 * k + 1), 8 * Math.max(1, k - 1), 'distributed split bounds');
}

/** Views of the points a split launch reads: typed by encoding (4-byte elements as u32 words, bit-exact). */
function pointWords(bytes: Uint8Array, encoding: PointEncoding, n: number): { readonly values: ArrayLike<number>; readonly words: Uint32Array; readonly perPoint: number } {
  const perPoint = encoding === PointEncoding.WorldFloat64 ? 6 : 3;
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, perPoint * n);
  const values =
    encoding === PointEncoding.IndexInt32
      ? new Int32Array(bytes.buffer, bytes.byteOffset, 3 * n)
      : encoding === PointEncoding.WorldFloat32
        ? new Float32Array(bytes.buffer, bytes.byteOffset, 3 * n)
        : new Float64Array(bytes.buffer, bytes.byteOffset, 3 * n);
  return { values, words, perPoint };
}

/** Host implementation of `hs.nanovdb.distributed.splitCount` (see `splitCountLaunch`): the kernel's words exactly. */
export function splitCountOnHost(reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const [n, encoding, inv, ox, oy, oz, k] = params as [number, PointEncoding, number, number, number, number, number];
  const { values } = pointWords(reads[0] as Uint8Array, encoding, n);
  const b = reads[1] as Uint8Array;
  const bounds = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const m = writes[0] as Uint8Array;
  const meta = new DataView(m.buffer, m.byteOffset, m.byteLength);
  const counts = new Float64Array(k);
  const key = new Uint32Array(2);
  const world = encoding !== PointEncoding.IndexInt32;
  let firstInvalid = -1;
  for (let i = 0; i < n; i++) {
    if (!tileKeyOf(values, i, world, inv, ox, oy, oz, key)) {
      if (firstInvalid < 0) firstInvalid = i;
      continue;
    }
    counts[partOf(key[1] as number, key[0] as number, bounds, 0, k)]!++;
  }
  if (firstInvalid >= 0 && BigInt(firstInvalid) < meta.getBigUint64(0, true)) meta.setBigUint64(0, BigInt(firstInvalid), true);
  for (let p = 0; p < k; p++) meta.setBigUint64(8 * (1 + p), meta.getBigUint64(8 * (1 + p), true) + BigInt(counts[p] as number), true);
}

/**
 * Host implementation of `hs.nanovdb.distributed.splitScatter` (see `splitScatterLaunch`): the same points in each
 * part and the same cursors; within a part it keeps the input order (the kernel's order there is its blocks').
 */
export function splitScatterOnHost(reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const [n, encoding, inv, ox, oy, oz, k] = params as [number, PointEncoding, number, number, number, number, number];
  const { values, words, perPoint } = pointWords(reads[0] as Uint8Array, encoding, n);
  const b = reads[1] as Uint8Array;
  const bounds = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const c = reads[2] as Uint8Array;
  const counts = new DataView(c.buffer, c.byteOffset, c.byteLength);
  const out = pointWords(writes[0] as Uint8Array, encoding, n).words;
  const u = writes[1] as Uint8Array;
  const cursors = new DataView(u.buffer, u.byteOffset, u.byteLength);
  const at = new Float64Array(k);
  let start = 0;
  for (let p = 0; p < k; p++) {
    at[p] = start + Number(cursors.getBigUint64(8 * p, true));
    start += Number(counts.getBigUint64(8 * p, true));
  }
  const key = new Uint32Array(2);
  const world = encoding !== PointEncoding.IndexInt32;
  for (let i = 0; i < n; i++) {
    if (!tileKeyOf(values, i, world, inv, ox, oy, oz, key)) continue;
    const p = partOf(key[1] as number, key[0] as number, bounds, 0, k);
    out.set(words.subarray(perPoint * i, perPoint * (i + 1)), perPoint * (at[p] as number));
    at[p]!++;
  }
  start = 0;
  for (let p = 0; p < k; p++) {
    cursors.setBigUint64(8 * p, BigInt((at[p] as number) - start), true);
    start += Number(counts.getBigUint64(8 * p, true));
  }
}

/**
 * The count launch: reads the points and the bounds of `meta` (a meta block of `splitMetaWords(k)` words: word 0 all
 * ones, counts zero, bounds set), adds each part's points to its count word and lowers word 0 to the first point
 * that maps to no voxel.
 */
export function splitCountLaunch(points: MemoryRange, meta: MemoryRange, p: SplitParams): KernelLaunch {
  return {
    name: 'hs.nanovdb.distributed.splitCount',
    reads: [points, boundsRange(meta, p.k)],
    writes: [subRange(meta, 0, 8 * (p.k + 1), 'distributed split counts')],
    params: splitParamList(p),
    host: splitCountOnHost,
  };
}

/**
 * The scatter launch after the count (every point valid): writes the points into `out` in part order (part p from
 * the sum of the counts before it) and advances the cursors of `meta` (zero before, the counts after).
 */
export function splitScatterLaunch(points: MemoryRange, meta: MemoryRange, out: MemoryRange, p: SplitParams): KernelLaunch {
  return {
    name: 'hs.nanovdb.distributed.splitScatter',
    reads: [points, boundsRange(meta, p.k), subRange(meta, 8, 8 * p.k, 'distributed split counts')],
    writes: [out, subRange(meta, 8 * (p.k + 1), 8 * p.k, 'distributed split cursors')],
    params: splitParamList(p),
    host: splitScatterOnHost,
  };
}

/** Each part's points on its stream's device (see `splitOnDevice`). */
export interface DeviceSplit {
  /** Points of each part. */
  readonly counts: readonly number[];
  /**
   * Part i's points, from `resources[i]` on `streams[i]` (written in that stream's order), or null for a part
   * that builds nothing (an empty part; part 0 of an empty cloud gets an empty buffer).
   */
  readonly inputs: readonly (ResourceBuffer<AsyncResource, PointElement> | null)[];
}

/** A buffer of the split and the stream it is freed on. */
interface Held {
  readonly buffer: ResourceBuffer<AsyncResource, PointElement | Uint8ArrayConstructor>;
  readonly stream: Stream;
}

/**
 * Splits host points by root tile on the device into one part per stream (see the module comment), every part's
 * points moved to its stream's device: `memcpyAsync` on one device, `backend.peerCopy` between devices, through
 * the host (a second wait, on `streams[0]`) where the devices do not reach each other. Allocations through
 * `resources[0]` on `streams[0]`: the cloud and the meta block (freed after the scatter) and the points in part
 * order (freed after the parts' copies), all freed on `streams[0]`.
 * Rejects with an `HsError`: InvalidArgument naming the first point that maps to no voxel (`invalid(i)`'s message),
 * the resources' and backend's errors; nothing is left allocated then (every stream is synchronized first when
 * work on other streams may still read the split's buffers).
 */
export async function splitOnDevice(
  backend: Backend,
  data: SplitPoints,
  streams: readonly Stream[],
  resources: readonly AsyncResource[],
  inverseVoxelSize: number,
  origin: readonly [number, number, number],
  invalid: (index: number) => HsError,
): Promise<DeviceSplit> {
  const k = streams.length;
  const n = data.length / 3;
  const Element = data.constructor as PointElement;
  const stream = streams[0] as Stream;
  const resource = resources[0] as AsyncResource;
  const counts = new Array<number>(k).fill(0);
  const inputs: (ResourceBuffer<AsyncResource, PointElement> | null)[] = new Array<null>(k).fill(null);
  if (n === 0) {
    const empty = ResourceBuffer.allocateAsync(backend, stream, resource, 0, { noInit: true, element: Element });
    if (!empty.ok) throw empty.error;
    inputs[0] = empty.value;
    return { counts, inputs };
  }
  const held: Held[] = [];
  /** Frees every buffer of the split and every part input (after all streams' work when `others`); returns `error`. */
  const release = async (error: HsError, others: boolean): Promise<HsError> => {
    if (others) await Promise.allSettled(streams.map((s) => backend.synchronizeStream(s)));
    for (const h of held) h.buffer.destroy(h.stream);
    held.length = 0;
    for (let i = 0; i < k; i++) inputs[i]?.destroy(streams[i]);
    return error;
  };
  const allocate = <E extends PointElement | Uint8ArrayConstructor>(count: number, element: E, on: Stream, from: AsyncResource): ResourceBuffer<AsyncResource, E> | HsError => {
    const made = ResourceBuffer.allocateAsync(backend, on, from, count, { noInit: true, element });
    return made.ok ? made.value : made.error;
  };
  const step = (r: { ok: true } | { ok: false; error: HsError }): HsError | null => (r.ok ? null : r.error);

  const params: SplitParams = { n, encoding: encodingOf(data), inverseVoxelSize, origin, k };
  const all = allocate(3 * n, Element, stream, resource);
  if (all instanceof HsError) throw all;
  held.push({ buffer: all, stream });
  const metaBuffer = allocate(8 * splitMetaWords(k), Uint8Array, stream, resource);
  if (metaBuffer instanceof HsError) throw await release(metaBuffer, false);
  held.push({ buffer: metaBuffer, stream });
  const meta = metaBuffer.data as MemoryBlock;
  const points = all.data as MemoryBlock;
  // the upload first: the bounds are planned while it runs
  let problem = step(backend.copyFromHostAsync(stream, points, new Uint8Array(data.buffer, data.byteOffset, data.byteLength)));
  const init = new BigUint64Array(splitMetaWords(k));
  init[0] = 0xffffffffffffffffn;
  init.set(planSplitBounds(data, k, inverseVoxelSize, origin), 2 * k + 1);
  const head = new BigUint64Array(k + 1);
  if (problem === null) problem = step(backend.copyFromHostAsync(stream, meta, new Uint8Array(init.buffer)));
  if (problem === null) problem = step(backend.launchKernel(stream, splitCountLaunch(points, meta, params)));
  if (problem === null) problem = step(backend.copyToHostAsync(stream, new Uint8Array(head.buffer), subRange(meta, 0, 8 * (k + 1), 'distributed split counts')));
  if (problem !== null) throw await release(problem, false);
  try {
    await backend.synchronizeStream(stream);
  } catch (error) {
    throw await release(error as HsError, false);
  }
  if (head[0] !== 0xffffffffffffffffn) throw await release(invalid(Number(head[0])), false);
  for (let p = 0; p < k; p++) counts[p] = Number(head[p + 1]);

  const sortedBuffer = allocate(3 * n, Element, stream, resource);
  if (sortedBuffer instanceof HsError) throw await release(sortedBuffer, false);
  held.push({ buffer: sortedBuffer, stream });
  const sorted = sortedBuffer.data as MemoryBlock;
  const bytesPer = 3 * Element.BYTES_PER_ELEMENT;
  const starts = counts.map((_, p) => counts.slice(0, p).reduce((s, c) => s + c, 0) * bytesPer);
  const partRange = (p: number): MemoryRange => subRange(sorted, starts[p] as number, (counts[p] as number) * bytesPer, 'distributed split part');
  problem = step(backend.launchKernel(stream, splitScatterLaunch(points, meta, sorted, params)));
  if (problem !== null) throw await release(problem, false);
  // the cloud and the meta block are freed after the scatter: part 0's build may reuse them on streams[0]
  for (const h of held.splice(0, 2)) h.buffer.destroy(h.stream);
  // parts on a device that does not reach streams[0]'s: through the host
  const peer = backend.peerCopy;
  const staged = counts.map((c, i) => {
    const device = (streams[i] as Stream).device;
    return c > 0 && device !== stream.device && (peer === undefined || !peer.canAccessPeer(device, stream.device)) ? new Uint8Array(c * bytesPer) : null;
  });
  for (let i = 0; i < k && problem === null; i++) {
    const bytes = staged[i];
    if (bytes !== null && bytes !== undefined) problem = step(backend.copyToHostAsync(stream, bytes, partRange(i)));
  }
  if (problem !== null) throw await release(problem, false);
  if (staged.some((s) => s !== null)) {
    try {
      await backend.synchronizeStream(stream);
    } catch (error) {
      throw await release(error as HsError, false);
    }
  }
  const scattered = backend.createEvent(stream.device);
  if (!scattered.ok) throw await release(scattered.error, false);
  problem = step(backend.recordEvent(scattered.value, stream));
  for (let i = 0; i < k && problem === null; i++) {
    if (counts[i] === 0) continue;
    const own = streams[i] as Stream;
    const input = allocate(3 * (counts[i] as number), Element, own, resources[i] as AsyncResource);
    if (input instanceof HsError) {
      problem = input;
      break;
    }
    inputs[i] = input;
    const dst = input.data as MemoryBlock;
    const bytes = staged[i];
    if (bytes !== null && bytes !== undefined) {
      problem = step(backend.copyFromHostAsync(own, dst, bytes));
      continue;
    }
    if (own !== stream) problem = step(backend.streamWaitEvent(own, scattered.value));
    if (problem !== null) break;
    if (own.device === stream.device) problem = step(backend.memcpyAsync(own, dst, partRange(i)));
    else {
      const copied = (peer as NonNullable<typeof peer>).copyAsync(own, dst, partRange(i));
      problem = copied.ok ? null : copied.error;
    }
    if (problem !== null || own === stream) continue;
    // streams[0] frees the points in part order after this copy
    const copied = backend.createEvent(own.device);
    if (!copied.ok) {
      problem = copied.error;
      break;
    }
    problem = step(backend.recordEvent(copied.value, own)) ?? step(backend.streamWaitEvent(stream, copied.value));
    backend.destroyEvent(copied.value);
  }
  backend.destroyEvent(scattered.value);
  if (problem !== null) throw await release(problem, true);
  for (const h of held) h.buffer.destroy(h.stream);
  return { counts, inputs };
}
