import { ErrorCode, HsError, err, type Backend, type Result } from '@hs/streams';
import { ResourceBuffer } from '../../resource-buffer.js';
import { isResource, type SyncResource } from '../../resource.js';
import { handleOfBuiltGrid, type GridHandle } from '../grid/grid-handle.js';
import { gridBytes, gridTemplate } from './grid-writer.js';
import { countVoxelNodes } from './grid-node-count.js';
import { checkGridBytes, resolveGridOptions, invalidPointMessage, type PointsToGridOptions } from './points-to-grid-options.js';
import { PointEncoding, checksumArgs, checksumOnHost, sortArgs, sortLeafKeysOnHost, sortOnHost, writeArgs, writeLeafKeysOnHost, writeOnHost } from './points-to-grid-kernels.js';
import { TEMPLATE_OFFSET, readReport, workspaceBytes } from './points-to-grid-workspace.js';

/** Points in index space: integer voxel coordinates, x, y, z triplets. */
export interface IndexPoints {
  /** Discriminant: coordinates are voxel indices. */
  readonly space: 'index';
  /** i, j, k triplets (3 elements per point). */
  readonly coords: Int32Array;
}

/** Points in world space: positions, x, y, z triplets, mapped to voxels by the voxel size and origin. */
export interface WorldPoints {
  /** Discriminant: positions are in world units. */
  readonly space: 'world';
  /** x, y, z triplets in world units (3 elements per point). */
  readonly positions: Float32Array | Float64Array;
}

/**
 * Most points one build accepts (NanoVDB's limit).
 * @example
 * ```ts
 * import { GridType, HostResource, MAX_POINTS, pointsToGrid } from '@hs/nanovdb-mr';
 * import { HostBackend, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const positions = new Float32Array(3 * 1000).map((_, i) => (i % 97) * 0.1);
 * if (positions.length / 3 > MAX_POINTS) throw new Error('split the cloud'); // pointsToGrid refuses more with InvalidArgument
 * const grid = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'world', positions }, { gridType: GridType.OnIndex, voxelSize: 0.5 }));
 * console.log(`${positions.length / 3} of at most ${MAX_POINTS} points: ${grid.grid()?.voxelCount} voxels`);
 * grid.dispose();
 * ```
 */
export const MAX_POINTS = 2 ** 32;

/**
 * Builds a NanoVDB grid on the host from points: every voxel that holds at least one point becomes
 * active. World points map to voxel `round((p - origin) / voxelSize)` (each axis; `floor(x + 0.5)`).
 * The grid is laid out exactly as NanoVDB's GPU builder lays it out (root tiles sorted by key biased by
 * 2^31, nodes and leaves in key order, HasBBox | IsBreadthFirst, tight bounding boxes, OnIndex offsets
 * and prefix sums), so the same points give the same bytes on both, and the same bytes as
 * `pointsToGridAsync` on every backend (this function runs the host implementation of its kernels).
 *
 * Two allocations through `resource` (its synchronous pair): the workspace (40 bytes per point plus
 * 257 KiB: coordinates, sort keys and order, digit histogram), returned before the call ends on success
 * and failure alike, and the grid itself. The resource must be host-accessible.
 *
 * The handle describes the grid from the headers the build wrote and does not validate it again (NanoVDB's
 * `createNanoGrid` does not either); `validateGrids` checks it when wanted.
 *
 * With `maxGridBytes` the grid's node counts are taken from the points first (`countGridNodes`, host memory
 * only) and a grid above the cap is refused before anything is allocated through `resource`.
 *
 * Errors: InvalidArgument for more than 2^32 points, a coordinate array whose length is not a multiple
 * of 3, a NaN or infinite world coordinate or a voxel outside the 32-bit index range (naming the first
 * such point), a bad voxel size, origin, name or `maxGridBytes`, a grid above `maxGridBytes` (naming its
 * bytes, node counts and the cap); NotSupported for a resource the host cannot read; the
 * resource's `OutOfMemory`. Nothing is left allocated on failure.
 * @throws HsError InvalidArgument when `resource` is not a resource or `points` is malformed.
 * Spec: PointsToGrid (OnIndex and Float, index- or world-space points) with scratch and output through
 * the injected resource (nanovdb-memory-resources: Step 1 seam, B3, B4).
 * @example
 * ```ts
 * import { GridType, HostResource, StatisticsResource, pointsToGrid } from '@hs/nanovdb-mr';
 * import { HostBackend } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const resource = new StatisticsResource(new HostResource(backend)); // the workspace and the grid come from here
 * const positions = new Float32Array([0.1, 0.2, 0.3, 1.5, 0, 0, 1.6, 0.1, 0]); // x, y, z in metres
 * const built = pointsToGrid(backend, resource, { space: 'world', positions }, { gridType: GridType.OnIndex, voxelSize: 0.5, name: 'occupancy' });
 * if (!built.ok) throw built.error; // InvalidArgument names a NaN point, a bad voxel size, a grid over maxGridBytes
 * const grid = built.value;
 * console.log(`${grid.grid()?.name}: ${grid.grid()?.voxelCount} active voxels, ${grid.grid()?.gridSize} B; voxel (3,0,0) active: ${grid.accessor().ok && unwrap2(grid)}`);
 * function unwrap2(g: typeof grid): boolean {
 *   const acc = g.accessor();
 *   return acc.ok && acc.value.isActive(3, 0, 0);
 * }
 * grid.dispose();
 * console.log(`peak ${resource.statistics.bytes.peak} B through the resource, ${resource.statistics.bytes.current} B left`);
 * ```
 */
export function pointsToGrid(
  backend: Backend,
  resource: SyncResource,
  points: IndexPoints | WorldPoints,
  options: PointsToGridOptions,
): Result<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>> {
  if (!isResource(resource)) throw new HsError(ErrorCode.InvalidArgument, 'pointsToGrid: resource must be a resource (allocate and deallocate)');
  const data = points?.space === 'index' ? points.coords : points?.space === 'world' ? points.positions : undefined;
  if (data === undefined || typeof data.length !== 'number') {
    throw new HsError(ErrorCode.InvalidArgument, "pointsToGrid: points must be { space: 'index', coords: Int32Array } or { space: 'world', positions: Float32Array | Float64Array }");
  }
  if (data.length / 3 > MAX_POINTS) return err(ErrorCode.InvalidArgument, `pointsToGrid: ${data.length / 3} points exceed the limit of 2^32 per build; split the cloud`);
  if (points.space === 'index' ? !(data instanceof Int32Array) : !(data instanceof Float32Array || data instanceof Float64Array)) {
    throw new HsError(ErrorCode.InvalidArgument, 'pointsToGrid: coordinates must be an Int32Array (index space) or a Float32Array/Float64Array (world space)');
  }
  if (data.length % 3 !== 0) return err(ErrorCode.InvalidArgument, `pointsToGrid: ${data.length} coordinates is not a whole number of x, y, z triplets`);
  const settings = resolveGridOptions('pointsToGrid', options);
  if (!settings.ok) return settings;
  const n = data.length / 3;
  const { layout, checksum, maxGridBytes } = settings.value;
  if (maxGridBytes !== Number.POSITIVE_INFINITY) {
    // the cap is checked before anything is allocated: the node counts straight from the points
    const counts = countVoxelNodes('pointsToGrid', data, settings.value.voxelSize, settings.value.origin);
    if (!counts.ok) return counts;
    const capped = checkGridBytes('pointsToGrid', gridBytes(layout, counts.value.uppers, counts.value.lowers, counts.value.leaves), counts.value, settings.value);
    if (!capped.ok) return capped;
  }
  const encoding = data instanceof Int32Array ? PointEncoding.IndexInt32 : data instanceof Float32Array ? PointEncoding.WorldFloat32 : PointEncoding.WorldFloat64;

  const made = ResourceBuffer.allocate(backend, resource, workspaceBytes(n, 'host'));
  if (!made.ok) return made;
  const workspace = made.value;
  try {
    const view = workspace.hostView();
    if (!view.ok) return err(ErrorCode.NotSupported, 'pointsToGrid: the host builder needs a host-accessible resource (host, pinned or managed memory)', view.error);
    const ws = view.value;
    const input = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const sort = sortArgs({ given: n, used: n, encoding, inverseVoxelSize: 1 / settings.value.voxelSize, origin: settings.value.origin });
    // keys sorted into leaf order and the grid written from them; a box past 64 key bits (or memory the flat
    // writer cannot use) takes the stages of pointsToGridAsync
    const sorted = sortLeafKeysOnHost([input], [ws], sort);
    const firstInvalid = readReport(ws).firstInvalid;
    if (firstInvalid !== undefined) return err(ErrorCode.InvalidArgument, invalidPointMessage('pointsToGrid', firstInvalid));
    // the trailing 1: no reduce stage follows, so the sort keeps no input indices
    const sortAll = (): void => sortOnHost([input], [ws], [...sort, 1]);
    if (sorted === null) sortAll();
    const report = readReport(ws);
    const size = gridBytes(layout, report.total.uppers, report.total.lowers, report.total.leaves);
    const grid = ResourceBuffer.allocate(backend, resource, size, { alignment: 32 });
    if (!grid.ok) return grid;
    const gridView = grid.value.hostView();
    if (!gridView.ok) {
      grid.value.dispose();
      return err(ErrorCode.NotSupported, 'pointsToGrid: the host builder needs a host-accessible resource (host, pinned or managed memory)', gridView.error);
    }
    ws.set(gridTemplate(settings.value), TEMPLATE_OFFSET);
    const write = writeArgs(n, layout, report.total, settings.value.background);
    if (sorted === null) writeOnHost([], [ws, gridView.value], write);
    else if (!writeLeafKeysOnHost([ws, gridView.value], write, sorted)) {
      sortAll();
      writeOnHost([], [ws, gridView.value], write);
    }
    checksumOnHost([], [gridView.value], checksumArgs(checksum));
    // the trusted path: the grid this build just wrote is described from its headers, not validated again
    const handle = handleOfBuiltGrid(backend, grid.value);
    if (!handle.ok) grid.value.dispose();
    return handle;
  } finally {
    workspace.dispose();
  }
}

