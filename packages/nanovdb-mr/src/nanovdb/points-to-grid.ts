import { ErrorCode, HsError, err, ok, type Backend, type Result } from '@hs/streams';
import { Buffer } from '../buffer.js';
import { isResource, type SyncResource } from '../resource.js';
import type { ElementType } from '../element-type.js';
import { popcount8, setBit } from './bit-mask.js';
import { computeChecksum, writeChecksum, type ChecksumMode } from './grid-checksum.js';
import { GridHandle } from './grid-handle.js';
import {
  FLOAT_LAYOUT,
  FORMAT_VERSION,
  GRID_DATA_SIZE,
  GRID_MAGIC,
  GRID_NAME_SIZE,
  Grid,
  GridClass,
  GridFlags,
  GridType,
  Internal,
  LOWER,
  Leaf,
  ON_INDEX_LAYOUT,
  ROOT_OFFSET,
  ROOT_TILE_SIZE,
  Tree,
  UPPER,
  internalIndex,
  leafIndex,
  rootKey,
  type ValueLayout,
} from './grid-layout.js';
import { KEY_WORDS, sortByBuildKey } from './voxel-order.js';

/** Points in index space: integer voxel coordinates, x, y, z triplets. */
export interface IndexPoints {
  readonly space: 'index';
  readonly coords: Int32Array;
}

/** Points in world space: positions, x, y, z triplets, mapped to voxels by the voxel size and origin. */
export interface WorldPoints {
  readonly space: 'world';
  readonly positions: Float32Array | Float64Array;
}

/** Options of `pointsToGrid`. */
export interface PointsToGridOptions {
  /** `GridType.OnIndex` (value indices of active voxels) or `GridType.Float` (1.0 at active voxels, background 0). */
  readonly gridType: GridType.Float | GridType.OnIndex;
  /** World units per voxel, a positive finite number; default 1. */
  readonly voxelSize?: number;
  /** World position of voxel (0, 0, 0); default the origin. */
  readonly origin?: readonly [number, number, number];
  /** Grid name, at most 255 UTF-8 bytes; default empty. */
  readonly name?: string;
  /** Checksum to store: `full` (default), `partial` (head only) or `disabled`. */
  readonly checksum?: ChecksumMode;
}

/** Most points one build accepts (NanoVDB's limit). */
export const MAX_POINTS = 2 ** 32;

/**
 * Builds a NanoVDB grid on the host from points: every voxel that holds at least one point becomes
 * active. World points map to voxel `round((p - origin) / voxelSize)` (each axis; `floor(x + 0.5)`).
 * The grid is laid out exactly as NanoVDB's GPU builder lays it out (root tiles sorted by key biased by
 * 2^31, nodes and leaves in key order, HasBBox | IsBreadthFirst, tight bounding boxes, OnIndex offsets
 * and prefix sums), so the same points give the same bytes on both.
 *
 * All scratch (voxel coordinates for world points, sort keys and indices, digit histogram: 28 bytes per
 * point, 40 for world points, plus 256 KiB)
 * and the grid itself are allocated through `resource` with its synchronous pair, and the scratch is
 * returned before the call ends, on success and on failure alike. The resource must be host-accessible.
 *
 * Errors: InvalidArgument for more than 2^32 points, a coordinate array whose length is not a multiple
 * of 3, a NaN or infinite world coordinate (naming the first such point), a voxel outside the 32-bit
 * index range, a bad voxel size, origin or name; NotSupported for a resource the host cannot read; the
 * resource's `OutOfMemory`. Nothing is left allocated on failure.
 * @throws HsError InvalidArgument when `resource` is not a resource or `points` is malformed.
 * Spec: PointsToGrid (OnIndex and Float, index- or world-space points) with scratch and output through
 * the injected resource (nanovdb-memory-resources: Step 1 seam, B3, B4).
 */
export function pointsToGrid(
  backend: Backend,
  resource: SyncResource,
  points: IndexPoints | WorldPoints,
  options: PointsToGridOptions,
): Result<GridHandle<Buffer<SyncResource, Uint8ArrayConstructor>>> {
  if (!isResource(resource)) throw new HsError(ErrorCode.InvalidArgument, 'pointsToGrid: resource must be a resource (allocate and deallocate)');
  const data = points?.space === 'index' ? points.coords : points?.space === 'world' ? points.positions : undefined;
  if (data === undefined || typeof data.length !== 'number') {
    throw new HsError(ErrorCode.InvalidArgument, "pointsToGrid: points must be { space: 'index', coords: Int32Array } or { space: 'world', positions: Float32Array | Float64Array }");
  }
  if (data.length / 3 > MAX_POINTS) return err(ErrorCode.InvalidArgument, `pointsToGrid: ${data.length / 3} points exceed the limit of 2^32 per build; split the cloud`);
  if (!(data instanceof Int32Array || data instanceof Float32Array || data instanceof Float64Array)) {
    throw new HsError(ErrorCode.InvalidArgument, 'pointsToGrid: coordinates must be an Int32Array (index space) or a Float32Array/Float64Array (world space)');
  }
  if (data.length % 3 !== 0) return err(ErrorCode.InvalidArgument, `pointsToGrid: ${data.length} coordinates is not a whole number of x, y, z triplets`);
  const settings = resolveOptions(options);
  if (!settings.ok) return settings;
  const { layout, voxelSize, origin, nameBytes, checksum } = settings.value;

  const scratch = new ScratchSet(backend, resource);
  try {
    const n = data.length / 3;
    let coords: Int32Array;
    if (points.space === 'index') {
      coords = points.coords;
    } else {
      const c = scratch.take(3 * n, Int32Array);
      if (!c.ok) return c;
      coords = c.value;
      const mapped = worldToIndex(points.positions, voxelSize, origin, coords);
      if (!mapped.ok) return mapped;
    }
    const keys = scratch.take(KEY_WORDS * n, Uint32Array);
    if (!keys.ok) return keys;
    const order = scratch.take(n, Uint32Array);
    if (!order.ok) return order;
    const pingPong = scratch.take(n, Uint32Array);
    if (!pingPong.ok) return pingPong;
    const counts = scratch.take(65536, Uint32Array);
    if (!counts.ok) return counts;
    const sorted = sortByBuildKey(coords, keys.value, order.value, pingPong.value, counts.value);
    return writeGrid(backend, resource, coords, sorted, { layout, voxelSize, origin, nameBytes, checksum });
  } finally {
    scratch.release();
  }
}

interface Settings {
  readonly layout: ValueLayout;
  readonly voxelSize: number;
  readonly origin: readonly [number, number, number];
  readonly nameBytes: Uint8Array;
  readonly checksum: ChecksumMode;
}

function resolveOptions(options: PointsToGridOptions): Result<Settings> {
  const layout = options?.gridType === GridType.Float ? FLOAT_LAYOUT : options?.gridType === GridType.OnIndex ? ON_INDEX_LAYOUT : undefined;
  if (layout === undefined) return err(ErrorCode.InvalidArgument, `pointsToGrid: gridType must be GridType.Float or GridType.OnIndex, got ${String(options?.gridType)}`);
  const voxelSize = options.voxelSize ?? 1;
  if (!Number.isFinite(voxelSize) || voxelSize <= 0) return err(ErrorCode.InvalidArgument, `pointsToGrid: voxelSize must be a positive finite number, got ${String(voxelSize)}`);
  const origin = options.origin ?? [0, 0, 0];
  if (origin.length !== 3 || !origin.every(Number.isFinite)) return err(ErrorCode.InvalidArgument, 'pointsToGrid: origin must be three finite numbers');
  const nameBytes = new TextEncoder().encode(options.name ?? '');
  if (nameBytes.length >= GRID_NAME_SIZE) return err(ErrorCode.InvalidArgument, `pointsToGrid: the name has ${nameBytes.length} UTF-8 bytes; at most ${GRID_NAME_SIZE - 1} fit`);
  const checksum = options.checksum ?? 'full';
  if (checksum !== 'full' && checksum !== 'partial' && checksum !== 'disabled') return err(ErrorCode.InvalidArgument, `pointsToGrid: checksum must be 'full', 'partial' or 'disabled'`);
  return ok({ layout, voxelSize, origin, nameBytes, checksum });
}

/** Maps world positions to voxel coordinates; InvalidArgument for the first non-finite or out-of-range point. */
function worldToIndex(positions: Float32Array | Float64Array, voxelSize: number, origin: readonly [number, number, number], out: Int32Array): Result<void> {
  const inv = 1 / voxelSize;
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i] as number;
    if (!Number.isFinite(p)) {
      return err(ErrorCode.InvalidArgument, `pointsToGrid: point ${Math.floor(i / 3)} has a non-finite coordinate (${p}); remove NaN and infinite points first`);
    }
    const c = Math.floor((p - (origin[i % 3] as number)) * inv + 0.5);
    if (c < -2147483648 || c > 2147483647) {
      return err(ErrorCode.InvalidArgument, `pointsToGrid: point ${Math.floor(i / 3)} maps to voxel ${c}, outside the 32-bit index range; use a larger voxel size or another origin`);
    }
    out[i] = c;
  }
  return { ok: true, value: undefined };
}

/** Scratch buffers taken from the resource and all returned by `release()`. */
class ScratchSet {
  readonly #buffers: Buffer<SyncResource, ElementType>[] = [];
  constructor(
    private readonly backend: Backend,
    private readonly resource: SyncResource,
  ) {}

  take<E extends Int32ArrayConstructor | Uint32ArrayConstructor>(count: number, element: E): Result<InstanceType<E>> {
    const made = Buffer.allocate(this.backend, this.resource, count, { element });
    if (!made.ok) return made;
    this.#buffers.push(made.value as unknown as Buffer<SyncResource, ElementType>);
    const view = made.value.hostView();
    if (!view.ok) return err(ErrorCode.NotSupported, 'pointsToGrid: the host builder needs a host-accessible resource (host, pinned or managed memory)', view.error);
    return view as Result<InstanceType<E>>;
  }

  release(): void {
    for (const b of this.#buffers.splice(0)) b.dispose();
  }
}

/** Node counts and the byte offset of each level, from the sorted voxels. */
interface GridPlan {
  readonly tiles: number;
  readonly lowers: number;
  readonly leaves: number;
  readonly voxels: number;
  readonly upperStart: number;
  readonly lowerStart: number;
  readonly leafStart: number;
  readonly gridSize: number;
}

function planGrid(coords: Int32Array, sorted: Uint32Array, layout: ValueLayout): GridPlan {
  let tiles = 0;
  let lowers = 0;
  let leaves = 0;
  let voxels = 0;
  let px = 0;
  let py = 0;
  let pz = 0;
  for (let i = 0; i < sorted.length; i++) {
    const p = sorted[i] as number;
    const x = coords[3 * p] as number;
    const y = coords[3 * p + 1] as number;
    const z = coords[3 * p + 2] as number;
    if (i === 0 || x !== px || y !== py || z !== pz) {
      voxels++;
      if (i === 0 || x >> 3 !== px >> 3 || y >> 3 !== py >> 3 || z >> 3 !== pz >> 3) {
        leaves++;
        if (i === 0 || x >> 7 !== px >> 7 || y >> 7 !== py >> 7 || z >> 7 !== pz >> 7) {
          lowers++;
          if (i === 0 || x >> 12 !== px >> 12 || y >> 12 !== py >> 12 || z >> 12 !== pz >> 12) tiles++;
        }
      }
    }
    px = x;
    py = y;
    pz = z;
  }
  const upperStart = ROOT_OFFSET + layout.rootDataSize + tiles * ROOT_TILE_SIZE;
  const lowerStart = upperStart + tiles * UPPER.size;
  const leafStart = lowerStart + lowers * LOWER.size;
  return { tiles, lowers, leaves, voxels, upperStart, lowerStart, leafStart, gridSize: leafStart + leaves * layout.leafSize };
}

/** A running index bounding box (plain fields: it is updated once per voxel). */
class BBox {
  x0 = 2147483647;
  y0 = 2147483647;
  z0 = 2147483647;
  x1 = -2147483648;
  y1 = -2147483648;
  z1 = -2147483648;
  add(x: number, y: number, z: number): void {
    if (x < this.x0) this.x0 = x;
    if (y < this.y0) this.y0 = y;
    if (z < this.z0) this.z0 = z;
    if (x > this.x1) this.x1 = x;
    if (y > this.y1) this.y1 = y;
    if (z > this.z1) this.z1 = z;
  }
  merge(o: BBox): void {
    this.add(o.x0, o.y0, o.z0);
    this.add(o.x1, o.y1, o.z1);
  }
  reset(): void {
    this.x0 = this.y0 = this.z0 = 2147483647;
    this.x1 = this.y1 = this.z1 = -2147483648;
  }
  min(axis: number): number {
    return axis === 0 ? this.x0 : axis === 1 ? this.y0 : this.z0;
  }
  max(axis: number): number {
    return axis === 0 ? this.x1 : axis === 1 ? this.y1 : this.z1;
  }
  /** Writes min then max as i32x3 each. */
  write(v: DataView, at: number): void {
    v.setInt32(at, this.x0, true);
    v.setInt32(at + 4, this.y0, true);
    v.setInt32(at + 8, this.z0, true);
    v.setInt32(at + 12, this.x1, true);
    v.setInt32(at + 16, this.y1, true);
    v.setInt32(at + 20, this.z1, true);
  }
}

/** Writes a non-negative integer below 2^53 as a little-endian u64 without a BigInt. */
function setU64(v: DataView, at: number, value: number): void {
  v.setUint32(at, value >>> 0, true);
  v.setUint32(at + 4, Math.floor(value / 4294967296), true);
}

/** Writes a signed integer of magnitude below 2^53 as a little-endian i64 without a BigInt. */
function setI64(v: DataView, at: number, value: number): void {
  v.setUint32(at, value >>> 0, true);
  v.setInt32(at + 4, Math.floor(value / 4294967296), true);
}

function writeGrid(
  backend: Backend,
  resource: SyncResource,
  coords: Int32Array,
  sorted: Uint32Array,
  s: Settings,
): Result<GridHandle<Buffer<SyncResource, Uint8ArrayConstructor>>> {
  const { layout } = s;
  const plan = planGrid(coords, sorted, layout);
  const made = Buffer.allocate(backend, resource, plan.gridSize, { alignment: 32 });
  if (!made.ok) return made;
  const buffer = made.value;
  const view = buffer.hostView();
  if (!view.ok) {
    buffer.dispose();
    return err(ErrorCode.NotSupported, 'pointsToGrid: the host builder needs a host-accessible resource (host, pinned or managed memory)', view.error);
  }
  const bytes = view.value;
  bytes.fill(0);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);

  const rootBox = new BBox();
  const upperBox = new BBox();
  const lowerBox = new BBox();
  const leafBox = new BBox();
  let tile = -1;
  let lower = -1;
  let leaf = -1;
  let upperAt = 0;
  let lowerAt = 0;
  let leafAt = 0;
  let activeBefore = 0;
  let px = 0;
  let py = 0;
  let pz = 0;
  const closeLeaf = (): void => {
    if (leaf < 0) return;
    v.setInt32(leafAt + Leaf.bboxMin, leafBox.x0, true);
    v.setInt32(leafAt + Leaf.bboxMin + 4, leafBox.y0, true);
    v.setInt32(leafAt + Leaf.bboxMin + 8, leafBox.z0, true);
    bytes[leafAt + Leaf.bboxDif] = leafBox.x1 - leafBox.x0;
    bytes[leafAt + Leaf.bboxDif + 1] = leafBox.y1 - leafBox.y0;
    bytes[leafAt + Leaf.bboxDif + 2] = leafBox.z1 - leafBox.z0;
    bytes[leafAt + Leaf.flags] = GridFlags.HasBBox;
    if (layout.isIndex) {
      setU64(v, leafAt + layout.leafValues, activeBefore + 1);
      // seven cumulative 9-bit counts (after words 0..6) packed at bits 9w of a u64: two u32 halves
      let lo = 0;
      let hi = 0;
      let running = 0;
      const mask = leafAt + Leaf.valueMask;
      for (let w = 0; w < 8; w++) {
        for (let b = 0; b < 8; b++) running += popcount8(bytes[mask + 8 * w + b] as number);
        if (w === 7) break;
        const at = 9 * w;
        if (at + 9 <= 32) lo |= running << at;
        else if (at >= 32) hi |= running << (at - 32);
        else {
          lo |= running << at;
          hi |= running >>> (32 - at);
        }
      }
      v.setUint32(leafAt + layout.leafValues + 8, lo >>> 0, true);
      v.setUint32(leafAt + layout.leafValues + 12, hi >>> 0, true);
      activeBefore += running;
    }
    lowerBox.merge(leafBox);
    leafBox.reset();
  };
  const closeLower = (): void => {
    if (lower < 0) return;
    lowerBox.write(v, lowerAt + Internal.bbox);
    upperBox.merge(lowerBox);
    lowerBox.reset();
  };
  const closeUpper = (): void => {
    if (tile < 0) return;
    upperBox.write(v, upperAt + Internal.bbox);
    rootBox.merge(upperBox);
    upperBox.reset();
  };

  for (let i = 0; i < sorted.length; i++) {
    const p = sorted[i] as number;
    const x = coords[3 * p] as number;
    const y = coords[3 * p + 1] as number;
    const z = coords[3 * p + 2] as number;
    const first = i === 0;
    if (!first && x === px && y === py && z === pz) continue;
    const newLeaf = first || x >> 3 !== px >> 3 || y >> 3 !== py >> 3 || z >> 3 !== pz >> 3;
    const newLower = newLeaf && (first || x >> 7 !== px >> 7 || y >> 7 !== py >> 7 || z >> 7 !== pz >> 7);
    const newTile = newLower && (first || x >> 12 !== px >> 12 || y >> 12 !== py >> 12 || z >> 12 !== pz >> 12);
    if (newLeaf) closeLeaf();
    if (newLower) closeLower();
    if (newTile) {
      closeUpper();
      tile++;
      upperAt = plan.upperStart + tile * UPPER.size;
      const tileAt = ROOT_OFFSET + layout.rootDataSize + tile * ROOT_TILE_SIZE;
      v.setBigUint64(tileAt, rootKey(x, y, z), true);
      setI64(v, tileAt + 8, upperAt - ROOT_OFFSET);
      bytes[upperAt + Internal.flags] = GridFlags.HasBBox;
    }
    if (newLower) {
      lower++;
      lowerAt = plan.lowerStart + lower * LOWER.size;
      const entry = internalIndex(UPPER, x, y, z);
      setBit(bytes, upperAt + UPPER.childMask, entry);
      setI64(v, upperAt + UPPER.table + 8 * entry, lowerAt - upperAt);
      bytes[lowerAt + Internal.flags] = GridFlags.HasBBox;
    }
    if (newLeaf) {
      leaf++;
      leafAt = plan.leafStart + leaf * layout.leafSize;
      const entry = internalIndex(LOWER, x, y, z);
      setBit(bytes, lowerAt + LOWER.childMask, entry);
      setI64(v, lowerAt + LOWER.table + 8 * entry, leafAt - lowerAt);
    }
    const n = leafIndex(x, y, z);
    setBit(bytes, leafAt + Leaf.valueMask, n);
    if (!layout.isIndex) v.setFloat32(leafAt + layout.leafValues + 4 * n, 1, true);
    leafBox.add(x, y, z);
    px = x;
    py = y;
    pz = z;
  }
  closeLeaf();
  closeLower();
  closeUpper();

  writeHeaders(v, bytes, plan, s, rootBox);
  writeChecksum(bytes, computeChecksum(bytes, plan.gridSize, s.checksum));
  const handle = GridHandle.fromHostBytes(backend, buffer, { checksum: false });
  if (!handle.ok) buffer.dispose();
  return handle;
}

function writeHeaders(v: DataView, bytes: Uint8Array, plan: GridPlan, s: Settings, rootBox: BBox): void {
  const { layout, voxelSize, origin } = s;
  v.setBigUint64(Grid.magic, GRID_MAGIC, true);
  v.setUint32(Grid.version, FORMAT_VERSION, true);
  v.setUint32(Grid.flags, GridFlags.HasBBox | GridFlags.IsBreadthFirst, true);
  v.setUint32(Grid.gridIndex, 0, true);
  v.setUint32(Grid.gridCount, 1, true);
  v.setBigUint64(Grid.gridSize, BigInt(plan.gridSize), true);
  bytes.set(s.nameBytes, Grid.gridName);
  for (let a = 0; a < 3; a++) {
    const diag = 4 * a; // row-major 3x3: element (a, a)
    v.setFloat32(Grid.matF + 4 * diag, voxelSize, true);
    v.setFloat32(Grid.invMatF + 4 * diag, 1 / voxelSize, true);
    v.setFloat32(Grid.vecF + 4 * a, origin[a] as number, true);
    v.setFloat64(Grid.matD + 8 * diag, voxelSize, true);
    v.setFloat64(Grid.invMatD + 8 * diag, 1 / voxelSize, true);
    v.setFloat64(Grid.vecD + 8 * a, origin[a] as number, true);
    v.setFloat64(Grid.voxelSize + 8 * a, voxelSize, true);
    if (plan.voxels > 0) {
      v.setFloat64(Grid.worldBBox + 8 * a, (origin[a] as number) + voxelSize * rootBox.min(a), true);
      v.setFloat64(Grid.worldBBox + 24 + 8 * a, (origin[a] as number) + voxelSize * (rootBox.max(a) + 1), true);
    }
  }
  v.setFloat32(Grid.taperF, 1, true);
  v.setFloat64(Grid.taperD, 1, true);
  v.setUint32(Grid.gridClass, layout.isIndex ? GridClass.IndexGrid : GridClass.Unknown, true);
  v.setUint32(Grid.gridType, layout.gridType, true);
  v.setBigInt64(Grid.blindMetadataOffset, BigInt(plan.gridSize), true);
  v.setBigUint64(Grid.data1, layout.isIndex ? BigInt(plan.voxels + 1) : 0n, true);

  const tree = GRID_DATA_SIZE;
  const rel = (start: number, count: number): bigint => (count === 0 ? 0n : BigInt(start - tree));
  v.setBigInt64(tree + Tree.nodeOffset, rel(plan.leafStart, plan.leaves), true);
  v.setBigInt64(tree + Tree.nodeOffset + 8, rel(plan.lowerStart, plan.lowers), true);
  v.setBigInt64(tree + Tree.nodeOffset + 16, rel(plan.upperStart, plan.tiles), true);
  v.setBigInt64(tree + Tree.nodeOffset + 24, BigInt(ROOT_OFFSET - tree), true);
  v.setUint32(tree + Tree.nodeCount, plan.leaves, true);
  v.setUint32(tree + Tree.nodeCount + 4, plan.lowers, true);
  v.setUint32(tree + Tree.nodeCount + 8, plan.tiles, true);
  v.setBigUint64(tree + Tree.voxelCount, BigInt(plan.voxels), true);

  rootBox.write(v, ROOT_OFFSET);
  v.setUint32(ROOT_OFFSET + 24, plan.tiles, true);
}

