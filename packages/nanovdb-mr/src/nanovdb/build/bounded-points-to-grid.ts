import { ErrorCode, HsError, OK_VOID, err, ok, unwrap, type Backend, type Err, type MemoryRange, type Result, type Stream } from '@hs/streams';
import { ResourceBuffer } from '../../resource-buffer.js';
import { BufferView } from '../../buffer-view.js';
import { isAsyncResource, type AsyncResource, type MemoryBlock } from '../../resource.js';
import { BLIND_METADATA_SIZE, GRID_DATA_SIZE, GridType, valueLayoutOf, type ValueLayout } from '../grid/grid-layout.js';
import { gridBytes, gridTemplate, type NodeCapacity } from './grid-writer.js';
import { channelBytes, channelLaunch, checksumLaunch, sortLaunch, writeLaunch, type SortParams } from './points-to-grid-kernels.js';
import { checkGridBytes, resolveGridOptions, type PointsToGridOptions, type ResolvedGridOptions } from './points-to-grid-options.js';
import { Overflow, REPORT_BYTES, TEMPLATE_OFFSET, readReport, subRange, workspaceBytes, type LevelCounts } from './points-to-grid-workspace.js';
import { MAX_DEVICE_POINTS, pointAlignmentProblem, pointSource, type IndexPointSpan, type WorldPointSpan } from './point-spans.js';
import type { ElementSpan } from '../../element-span.js';
import { attributeRange, channelHead, resolveAttributeLayout, type AttributeBuild, type PointAttributeGridOptions, type PointAttributeLayout } from './point-attribute-spans.js';
import { reduceLaunch, type PointAttributeElement } from './point-reduce.js';
import type { AttributeGridType } from './point-attributes.js';

/**
 * Options of a bounded build of an attribute grid: those of `pointsToGridAsync`'s attribute builds, `attributes` the
 * layout each `encode` brings a span of. An OnIndex build takes `channel` (its sidecar channel, appended on the
 * device after the nodes: see `BoundedPointsToGrid`).
 */
export interface BoundedAttributeGridOptions extends Omit<PointAttributeGridOptions, 'attributes'> {
  /** Float, Double, Int32, Vec3f, RGBA8, Mask, or OnIndex with `channel`. */
  readonly gridType: AttributeGridType;
  /** The attribute's element type, channels and reduction. */
  readonly attributes: PointAttributeLayout;
}

/** Capacity bounds of a `BoundedPointsToGrid`: the most points read and nodes written per build. */
export interface PointsToGridCapacity {
  /** Points read per build (more are ignored and reported); 1 .. 2^32 - 1. */
  readonly points: number;
  /** Root tiles, one upper node each (270 400 bytes per upper node). */
  readonly uppers: number;
  /** Lower nodes (33 856 bytes each). */
  readonly lowers: number;
  /** Leaves (96 bytes each for OnIndex, 2 144 for Float). */
  readonly leaves: number;
}

/** What a bounded build did, read from its device-side report. */
export interface BoundedBuildReport {
  /** Points handed to the build. */
  readonly given: number;
  /** Points read: `given` clamped to the point capacity. */
  readonly used: number;
  /** Points read that map to a voxel. */
  readonly valid: number;
  /** Index of the first point that was NaN, infinite or outside the 32-bit index range (skipped); `undefined` when none. */
  readonly firstInvalid: number | undefined;
  /** Voxels and nodes all valid points need. */
  readonly needed: LevelCounts;
  /** Voxels and nodes in the grid written (a prefix of the build order when a capacity overflowed). */
  readonly counts: LevelCounts;
  /** Bytes of the grid written at the start of `grid`. */
  readonly gridSize: number;
  /** True when any capacity cut the build short. */
  readonly overflowed: boolean;
  /** Which capacities were exceeded. */
  readonly overflow: {
    /** More points than `capacity.points`; points past it were not read. */
    readonly points: boolean;
    /** More root tiles (upper nodes) than `capacity.uppers`. */
    readonly uppers: boolean;
    /** More lower nodes than `capacity.lowers`. */
    readonly lowers: boolean;
    /** More leaf nodes than `capacity.leaves`. */
    readonly leaves: boolean;
  };
}

const WHO = 'BoundedPointsToGrid';

function roundUp(bytes: number, to: number): number {
  return Math.ceil(bytes / to) * to;
}

function checkCapacity(capacity: PointsToGridCapacity): Err | null {
  for (const key of ['points', 'uppers', 'lowers', 'leaves'] as const) {
    const value = capacity?.[key];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_DEVICE_POINTS) {
      return err(ErrorCode.InvalidArgument, `${WHO}: capacity.${key} must be an integer in [1, 2^32 - 1], got ${String(value)}`);
    }
  }
  return null;
}

/**
 * PointsToGrid with caller-supplied capacity bounds and no host synchronization: one block holds the
 * grid (sized for the capacities) and the workspace, allocated once up front through the resource (or
 * supplied by the caller as a `BufferView`); `encode` enqueues the whole build (sort, write and checksum launches, a reduce launch for attribute builds, a channel launch for OnIndex channel builds;
 * launch sizes from the capacities, counts kept on the device), so it can be captured into a CUDA
 * graph and relaunched with new points in the same input memory. A build whose voxels need more
 * nodes than the capacities allow keeps the longest prefix of its build order that fits (whole root
 * tiles, nodes and leaves in key order): the grid stays valid and traversable from the root, and the
 * overflow is recorded on the device for `readReport`. The grid equals the host `pointsToGrid` grid of
 * the kept voxels, byte for byte. With `options.attributes` (a `PointAttributeLayout`) the build also reduces a
 * per-point attribute span given to each `encode` into the voxels of a Float, Double, Int32, Vec3f, RGBA8 or Mask
 * grid (a values region of `capacity.points` values after the workspace; the reduce launch before the write), the
 * grid `pointAttributesToGrid` builds from the kept points, byte for byte. An OnIndex attribute build (`options.channel`)
 * reduces into the values region too; its grid region is sized for the worst case, the nodes of the capacities plus
 * the channel of `min(capacity.points, 512 * capacity.leaves)` voxels (record, slot 0, values, 32-byte padding), and
 * after the write stage `hs.nanovdb.pointsToGrid.channel` appends the channel right after the nodes actually written
 * (their size is known only on the device) from a record template uploaded at `create`: the record, slot 0
 * (`background`), the kept voxels' values, GridData's gridSize and blind-metadata fields, the bytes `attachChannels`
 * writes for `pointsToGridAsync`. Still no host read-back; the checksum launch follows.
 * Spec: beyond NanoVDB's roadmap, its "capacity-bounded, sync-free build path" candidate (issue #4 item 7).
 *
 * @example
 * ```ts
 * import { BoundedPointsToGrid, BufferView, DeviceResource, GridType, ResourceBuffer, type MemoryBlock } from '@hs/nanovdb-mr';
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const device = Device.cuda(0);
 * const stream = unwrap(backend.createStream(device, { label: 'scans' }));
 * const resource = new DeviceResource(backend, device);
 * // sized once for the largest scan: capacities fix every byte, so encode() allocates nothing and never waits
 * const build = unwrap(BoundedPointsToGrid.create(backend, stream, resource, { points: 1024, uppers: 1, lowers: 4, leaves: 64 }, { gridType: GridType.OnIndex }));
 * const coords = new Int32Array([0, 0, 0, 1, 2, 3, 100, 0, 0]);
 * const input = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, coords.length, { noInit: true, element: Int32Array }));
 * unwrap(backend.copyFromHostAsync(stream, input.data as MemoryBlock, new Uint8Array(coords.buffer)));
 * unwrap(build.encode(stream, { space: 'index', coords: unwrap(BufferView.of(input.data, coords.length, Int32Array)) })); // capturable in a CUDA graph
 * const report = await build.readReport(stream); // the only host read, when you want it
 * console.log(`${report.counts.voxels} voxels, ${report.gridSize} B of a ${build.gridCapacityBytes} B region; overflowed: ${report.overflowed}`);
 * input.dispose();
 * build.dispose();
 * ```
 */
export class BoundedPointsToGrid implements Disposable {
  readonly #backend: Backend;
  readonly #owned: ResourceBuffer<AsyncResource, Uint8ArrayConstructor> | null;
  readonly #block: MemoryBlock;
  readonly #capacity: PointsToGridCapacity;
  readonly #settings: ResolvedGridOptions;
  readonly #gridCapacity: number;
  readonly #attributes: Omit<AttributeBuild, 'range'> | null;
  #disposed = false;

  private constructor(
    backend: Backend,
    owned: ResourceBuffer<AsyncResource, Uint8ArrayConstructor> | null,
    block: MemoryBlock,
    capacity: PointsToGridCapacity,
    settings: ResolvedGridOptions,
    attributes: Omit<AttributeBuild, 'range'> | null,
  ) {
    this.#attributes = attributes;
    this.#backend = backend;
    this.#owned = owned;
    this.#block = block;
    this.#capacity = { ...capacity };
    this.#settings = settings;
    this.#gridCapacity = gridCapacityOf(capacity, settings.layout, attributes);
  }

  /**
   * Bytes of the one block a bounded build needs on `backend` (grid capacity rounded to 256 bytes, then
   * the workspace for `capacity.points`, then for an attribute build the values region: `capacity.points`
   * values of the grid type's size, or of the channel type's for OnIndex, whose grid capacity also holds the channel
   * and whose block ends with the channel's record template), for callers who supply their own memory. `gridType`:
   * the grid type, or the options `create` gets (needed for an OnIndex channel build, whose channel type sets the
   * size); `attributes`: the build reduces point attributes (implied for Double, Int32, Vec3f and RGBA8, and by
   * options with `attributes`). InvalidArgument for bad capacities, grid type or options.
   */
  static requiredBytes(
    backend: Backend,
    capacity: PointsToGridCapacity,
    gridType: PointsToGridOptions['gridType'] | BoundedAttributeGridOptions['gridType'] | PointsToGridOptions | BoundedAttributeGridOptions,
    attributes = false,
  ): Result<number> {
    const bad = checkCapacity(capacity);
    if (bad !== null) return bad;
    if (typeof gridType === 'object' && gridType !== null) {
      const options = gridType;
      if ('attributes' in options && options.attributes !== undefined) {
        const resolved = resolveAttributeLayout(WHO, options);
        if (!resolved.ok) return resolved;
        return ok(blockBytes(backend, capacity, resolved.value.settings.layout, resolved.value));
      }
      return BoundedPointsToGrid.requiredBytes(backend, capacity, options.gridType, attributes);
    }
    const layout = gridType === GridType.Float || gridType === GridType.OnIndex ? resolveGridOptions(WHO, { gridType }) : null;
    if (layout !== null && !layout.ok) return layout;
    const valueLayout = valueLayoutOf(gridType);
    if (valueLayout === undefined || ![GridType.Float, GridType.OnIndex, GridType.Double, GridType.Int32, GridType.Vec3f, GridType.RGBA8, GridType.Mask].includes(gridType)) {
      return err(ErrorCode.InvalidArgument, `${WHO}: gridType must be Float, OnIndex, Double, Int32, Vec3f, RGBA8 or Mask, got ${String(gridType)}`);
    }
    if (gridType === GridType.OnIndex && attributes) {
      return err(ErrorCode.InvalidArgument, `${WHO}: an OnIndex attribute build's size depends on its channel type; pass the create options`);
    }
    const withValues = gridType !== GridType.Mask && gridType !== GridType.OnIndex && (attributes || gridType !== GridType.Float);
    return ok(blockBytes(backend, capacity, valueLayout, withValues ? { valueSize: valueLayout.valueSize } : null));
  }

  /**
   * Prepares a bounded build: allocates its one block from `target` on `stream` (an async resource), or
   * uses `target` (a `BufferView` of at least `requiredBytes`, its address a multiple of 256, owned by
   * the caller), and enqueues the upload of the 672-byte GridData template on `stream`.
   * With `options.attributes` (a `BoundedAttributeGridOptions`) the block also holds the values region and each
   * `encode` takes an attribute span; the attribute layout (element type, channels 1-4 matching the grid type unless
   * `count` or Mask, reduction), the grid type and an OnIndex build's `channel` (name of 1-255 UTF-8 bytes; Float,
   * Double, Int32, Vec3f or RGBA8) are checked before anything is allocated; an OnIndex channel build also enqueues the
   * upload of the channel's record template (288 bytes plus slot 0) on `stream`.
   * Errors: InvalidArgument for bad capacities, options, attribute layouts, or a view that is too small or misaligned, and
   * for a grid capacity (`gridCapacityBytes` of these node capacities) above `maxGridBytes`, refused before
   * anything is allocated (naming the bytes, the node capacities and the cap);
   * the resource's (`OutOfMemory`, …) and the backend's. Nothing is left allocated on failure.
   * @throws HsError InvalidArgument when `target` is neither an async resource nor a BufferView.
   */
  static create(
    backend: Backend,
    stream: Stream,
    target: AsyncResource | BufferView<Uint8ArrayConstructor>,
    capacity: PointsToGridCapacity,
    options: PointsToGridOptions | BoundedAttributeGridOptions,
  ): Result<BoundedPointsToGrid> {
    const isView = target instanceof BufferView;
    if (!isView && !isAsyncResource(target)) throw new HsError(ErrorCode.InvalidArgument, `${WHO}.create: target must be an async resource or a BufferView of bytes`);
    const bad = checkCapacity(capacity);
    if (bad !== null) return bad;
    let attributes: Omit<AttributeBuild, 'range'> | null = null;
    if ('attributes' in options && options.attributes !== undefined) {
      const resolved = resolveAttributeLayout(WHO, options);
      if (!resolved.ok) return resolved;
      attributes = resolved.value;
    }
    const settings = attributes !== null ? ok(attributes.settings) : resolveGridOptions(WHO, options as PointsToGridOptions);
    if (!settings.ok) return settings;
    const { layout } = settings.value;
    const capped = checkGridBytes(WHO, gridCapacityOf(capacity, layout, attributes), capacity, settings.value);
    if (!capped.ok) return capped;
    const bytes = blockBytes(backend, capacity, layout, attributes);
    let owned: ResourceBuffer<AsyncResource, Uint8ArrayConstructor> | null = null;
    let block: MemoryBlock;
    if (isView) {
      if (target.element !== Uint8Array || target.data === null || target.sizeBytes < bytes) {
        return err(ErrorCode.InvalidArgument, `${WHO}.create: the view holds ${target.sizeBytes} bytes; these capacities need a byte view of ${bytes} (see requiredBytes)`);
      }
      block = target.data;
      const address = block.memory.address + BigInt(block.byteOffset);
      if (address % 256n !== 0n) return err(ErrorCode.InvalidArgument, `${WHO}.create: the view starts at address ${address}, not a multiple of 256`);
    } else {
      const made = ResourceBuffer.allocateAsync(backend, stream, target, bytes, { noInit: true });
      if (!made.ok) return made;
      owned = made.value;
      block = owned.data as MemoryBlock;
    }
    const build = new BoundedPointsToGrid(backend, owned, block, capacity, settings.value, attributes);
    const uploaded = backend.copyFromHostAsync(stream, subRange(block, build.#workspaceOffset + TEMPLATE_OFFSET, GRID_DATA_SIZE, 'bounded pointsToGrid template'), gridTemplate(settings.value));
    const head = attributes?.channel !== undefined ? build.#headRange : null;
    const headed = head === null ? uploaded : uploaded.ok ? backend.copyFromHostAsync(stream, head, channelHead(attributes as Omit<AttributeBuild, 'range'>, 0)) : uploaded;
    if (!headed.ok) {
      owned?.destroy(stream);
      return headed;
    }
    return ok(build);
  }

  get #workspaceOffset(): number {
    return roundUp(this.#gridCapacity, 256);
  }

  /** The values region (after the workspace): `capacity.points` reduced values. */
  get #valuesRange(): MemoryRange {
    const at = this.#workspaceOffset + workspaceBytes(this.#capacity.points, this.#backend.name);
    return subRange(this.#block, at, this.#capacity.points * (this.#attributes?.valueSize ?? 0), 'bounded pointsToGrid values');
  }

  /** An OnIndex channel build's record template and slot 0 (after the values region). */
  get #headRange(): MemoryRange {
    const values = this.#valuesRange;
    return subRange(this.#block, values.byteOffset - this.#block.byteOffset + values.byteLength, BLIND_METADATA_SIZE + (this.#attributes?.valueSize ?? 0), 'bounded pointsToGrid channel record');
  }

  /** The capacities this build was made with. */
  get capacity(): PointsToGridCapacity {
    return this.#capacity;
  }

  /**
   * The grid region: `gridCapacityBytes` bytes at the start of the block. After a build's work ran, its
   * first `gridSize` bytes (see `readReport`) hold the grid (for an OnIndex channel build, its channel included).
   */
  get grid(): BufferView<Uint8ArrayConstructor> {
    return unwrap(BufferView.of(subRange(this.#block, 0, this.#gridCapacity, 'bounded pointsToGrid grid'), this.#gridCapacity));
  }

  /**
   * Bytes of the largest grid the capacities allow: the nodes of the capacities, and for an OnIndex channel build the
   * channel of `min(capacity.points, 512 * capacity.leaves)` voxels.
   */
  get gridCapacityBytes(): number {
    return this.#gridCapacity;
  }

  /**
   * Enqueues a build of the first `count` points (default all of them) of `points` on `stream`: no
   * allocation, no host function, no read-back, so the call can be captured into a CUDA graph; a
   * captured graph reads the same input memory at each launch. At most `capacity.points` points are read.
   * An attribute build (`options.attributes` at `create`) takes `attributes`: a span of the layout's element type
   * holding `channels` numbers for each of the `count` points (more are ignored), element-aligned; the reduce
   * stage writes each voxel's value into the block's values region before the write stage reads it (for an OnIndex
   * channel build, before the channel stage appends them to the grid after its nodes).
   * Errors: InvalidState after `dispose`; InvalidArgument for a bad span, misaligned points or a `count`
   * beyond the span, an attribute span missing, of another element type, too short or misaligned (or given to a
   * build without attributes); the backend's launch errors.
   * @throws HsError InvalidArgument when `points` is malformed.
   */
  encode(stream: Stream, points: IndexPointSpan | WorldPointSpan, count?: number, attributes?: ElementSpan<PointAttributeElement>): Result<void> {
    if (this.#disposed) return err(ErrorCode.InvalidState, `${WHO}.encode: the build was disposed`);
    const source = pointSource(`${WHO}.encode`, points);
    if (!source.ok) return source;
    const misaligned = pointAlignmentProblem(`${WHO}.encode`, source.value);
    if (misaligned !== null) return misaligned;
    const given = count ?? source.value.count;
    if (!Number.isSafeInteger(given) || given < 0 || given > source.value.count) {
      return err(ErrorCode.InvalidArgument, `${WHO}.encode: count must be an integer in [0, ${source.value.count}] (the points the span holds), got ${String(count)}`);
    }
    const layout = this.#attributes;
    if ((layout === null) !== (attributes === undefined)) {
      return err(ErrorCode.InvalidArgument, `${WHO}.encode: ${layout === null ? 'this build was created without options.attributes; pass no attribute span' : 'this attribute build needs the attribute span'}`);
    }
    const attributeInput = layout === null ? ok(null) : attributeRange(`${WHO}.encode`, attributes as ElementSpan<PointAttributeElement>, layout, given, false);
    if (!attributeInput.ok) return attributeInput;
    const used = Math.min(given, this.#capacity.points);
    const elementBytes = source.value.range === null ? 0 : source.value.range.byteLength / (3 * source.value.count);
    const wsBytes = workspaceBytes(this.#capacity.points, this.#backend.name);
    const ws = subRange(this.#block, this.#workspaceOffset, wsBytes, 'bounded pointsToGrid workspace');
    const input = source.value.range === null ? subRange(this.#block, 0, 0, 'no points') : { ...source.value.range, byteLength: 3 * used * elementBytes };
    const s = this.#settings;
    const params: SortParams = { given, used, encoding: source.value.encoding, inverseVoxelSize: 1 / s.voxelSize, origin: s.origin };
    const grid = subRange(this.#block, 0, this.#gridCapacity, 'bounded pointsToGrid grid');
    const capacity: NodeCapacity = this.#capacity;
    const sorted = this.#backend.launchKernel(stream, sortLaunch(input, ws, params));
    if (!sorted.ok) return sorted;
    let values: MemoryRange | undefined;
    if (layout !== null && layout.valueType !== null) {
      values = this.#valuesRange;
      const range = attributeInput.value ?? subRange(this.#block, 0, 0, 'no attributes');
      const input2 = { ...range, byteLength: Math.min(range.byteLength, layout.channels * used * layout.element.BYTES_PER_ELEMENT) };
      const reduced = this.#backend.launchKernel(stream, reduceLaunch(input2, ws, values, { used, element: layout.element, channels: layout.channels, reduction: layout.reduction, valueType: layout.valueType }));
      if (!reduced.ok) return reduced;
    }
    const channel = layout?.channel !== undefined;
    const nodes = channel ? subRange(this.#block, 0, gridBytes(s.layout, capacity.uppers, capacity.lowers, capacity.leaves), 'bounded pointsToGrid nodes') : grid;
    const written = this.#backend.launchKernel(stream, writeLaunch(ws, nodes, used, s.layout, capacity, layout?.background ?? s.background, channel ? undefined : values));
    if (!written.ok) return written;
    if (channel) {
      const placed = this.#backend.launchKernel(stream, channelLaunch(ws, grid, values as MemoryRange, this.#headRange, (layout as Omit<AttributeBuild, 'range'>).valueSize, voxelCapacity(this.#capacity)));
      if (!placed.ok) return placed;
    }
    const summed = this.#backend.launchKernel(stream, checksumLaunch(grid, ws, s.checksum));
    return summed.ok ? OK_VOID : summed;
  }

  /**
   * Reads the device-side report of the last build enqueued before this call: enqueues a copy of its
   * 64 bytes on `stream`, waits (without blocking the JS thread) for `stream`'s work, and resolves with
   * the report. Rejects with an `HsError`: InvalidState after `dispose`; the backend's errors (the copy's,
   * such as InvalidState for a destroyed stream, and the wait's: `DeviceError` when work on `stream`
   * faulted, `InvalidState` when the backend was disposed meanwhile).
   * @example
   * ```ts
   * const report = await build.readReport(stream); // rejects with an HsError (InvalidState after dispose, DeviceError, …)
   * if (report.overflowed) console.warn(`kept ${report.counts.voxels} voxels; the build needs`, report.needed);
   * ```
   */
  async readReport(stream: Stream): Promise<BoundedBuildReport> {
    if (this.#disposed) throw new HsError(ErrorCode.InvalidState, `${WHO}.readReport: the build was disposed`);
    const bytes = new Uint8Array(REPORT_BYTES);
    const copied = this.#backend.copyToHostAsync(stream, bytes, subRange(this.#block, this.#workspaceOffset, REPORT_BYTES, 'bounded pointsToGrid report'));
    if (!copied.ok) throw copied.error;
    await this.#backend.synchronizeStream(stream);
    const r = readReport(bytes);
    const overflow = {
      points: (r.overflow & Overflow.Points) !== 0,
      uppers: (r.overflow & Overflow.Uppers) !== 0,
      lowers: (r.overflow & Overflow.Lowers) !== 0,
      leaves: (r.overflow & Overflow.Leaves) !== 0,
    };
    return { given: r.given, used: r.used, valid: r.valid, firstInvalid: r.firstInvalid, needed: r.total, counts: r.kept, gridSize: r.gridSize, overflowed: r.overflow !== 0, overflow };
  }

  /**
   * Frees the block (when this build allocated it) on the stream it was allocated on; a caller's view is
   * left alone. Idempotent.
   * @throws HsError the buffer's dispose error (its retained stream was destroyed).
   */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#owned?.dispose();
  }

  /** Same as `dispose()`. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** The most voxels a bounded build keeps: one per point, 512 per leaf. */
function voxelCapacity(capacity: PointsToGridCapacity): number {
  return Math.min(capacity.points, 512 * capacity.leaves);
}

/** The grid region's bytes: the nodes of the capacities, and an OnIndex channel build's channel for `voxelCapacity` voxels. */
function gridCapacityOf(capacity: PointsToGridCapacity, layout: ValueLayout, attributes: { readonly valueSize: number; readonly channel?: unknown } | null): number {
  const nodes = gridBytes(layout, capacity.uppers, capacity.lowers, capacity.leaves);
  return attributes?.channel !== undefined ? nodes + channelBytes(attributes.valueSize, voxelCapacity(capacity)) : nodes;
}

/**
 * The block: the grid region rounded to 256 bytes, the workspace, the values region (`capacity.points` values) and
 * for an OnIndex channel build the channel's record template (288 bytes plus slot 0).
 */
function blockBytes(backend: Backend, capacity: PointsToGridCapacity, layout: ValueLayout, attributes: { readonly valueSize: number; readonly channel?: unknown } | null): number {
  const valueSize = attributes?.valueSize ?? 0;
  const head = attributes?.channel !== undefined ? BLIND_METADATA_SIZE + valueSize : 0;
  return roundUp(gridCapacityOf(capacity, layout, attributes), 256) + workspaceBytes(capacity.points, backend.name) + capacity.points * valueSize + head;
}

