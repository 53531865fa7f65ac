import type { PointCloud } from '@hs/example-point-cloud-input';
import { DEFAULT_CLI_MAX_GRID_BYTES, GridType, HostResource, countGridNodes, gridByteSize, pointsToGrid } from '@hs/nanovdb-mr';
import { ErrorCode, HostBackend, err, errWithContext, ok, type Result } from '@hs/streams';
import type { PreviewBox } from './grid-preview-kernel.js';

/** Default cap on the bytes of the volume's grid (`--max-grid-bytes`): 256 MiB, the default of every hs command line. */
export const DEFAULT_MAX_GRID_BYTES = DEFAULT_CLI_MAX_GRID_BYTES;

/** The final volume of a whole cloud: what sizes the grid pool and frames the preview camera. */
export interface VolumeSizing {
  /** Bytes of the grid built from every point; no accumulated grid is larger (node sets only grow). */
  readonly gridBytes: number;
  /** Active voxels of that grid. */
  readonly voxelCount: number;
  /** Its index-space bounding box (inclusive). */
  readonly indexBox: PreviewBox;
  /**
   * Its root tiles (one upper node each), lower nodes and leaves: the node capacities of the stream
   * builder's `BoundedPointsToGrid` (no accumulated grid needs more), each at least 1.
   */
  readonly nodes: { readonly uppers: number; readonly lowers: number; readonly leaves: number };
}

/**
 * Counts the grid's nodes from the points' voxel keys (`countGridNodes`, no grid built) and refuses a grid
 * larger than `maxGridBytes`; then builds the OnIndex grid of the whole cloud once on a host backend (host
 * memory only, released before returning) to learn the largest grid the run will produce, its node counts
 * and its bounding box.
 * @param cloud - the whole cloud; its `pointLocation` (XYZ files: `file:line`) names where a rejected point was read.
 * @param maxGridBytes - the most bytes the grid may take (`--max-grid-bytes`; default 256 MiB).
 * @returns the sizing; InvalidArgument `<source>: voxel size <v> gives a <n>-byte grid (<MiB> MiB: <u>
 *   upper, <l> lower nodes, <f> leaves), above --max-grid-bytes <max>; use a larger --voxel-size or raise
 *   --max-grid-bytes` before anything is allocated; or the counting's error (InvalidArgument naming the
 *   first point with a non-finite coordinate or a voxel index outside the 32-bit range) prefixed with
 *   `<where>: sizing the volume`, `<where>` the point's location (`file:line`) where the cloud knows it,
 *   else its source; or `pointsToGrid`'s error prefixed with `<source>: sizing the volume`.
 */
export function sizeVolume(cloud: PointCloud, voxelSize: number, name: string, maxGridBytes = DEFAULT_MAX_GRID_BYTES): Result<VolumeSizing> {
  const { positions, source } = cloud;
  const counts = countGridNodes(positions, { voxelSize });
  if (!counts.ok) {
    const bad = cloud.pointLocation === undefined ? undefined : firstRejectedPoint(positions, voxelSize);
    return errWithContext(counts.error, `${bad === undefined ? source : cloud.pointLocation!(bad)}: sizing the volume`);
  }
  const bytes = gridByteSize(GridType.OnIndex, counts.value);
  if (bytes > maxGridBytes) {
    const { uppers, lowers, leaves } = counts.value;
    return err(
      ErrorCode.InvalidArgument,
      `${source}: voxel size ${voxelSize} gives a ${bytes}-byte grid (${(bytes / 2 ** 20).toFixed(1)} MiB: ${uppers} upper, ${lowers} lower nodes, ${leaves} leaves), above --max-grid-bytes ${maxGridBytes}; use a larger --voxel-size or raise --max-grid-bytes`,
    );
  }
  const backend = new HostBackend();
  try {
    const built = pointsToGrid(backend, new HostResource(backend), { space: 'world', positions }, { gridType: GridType.OnIndex, voxelSize, name, checksum: 'disabled' });
    if (!built.ok) return errWithContext(built.error, `${source}: sizing the volume`);
    const grid = built.value.grid(0)!;
    const [leaves, lowers, uppers] = grid.nodeCount;
    const sizing = {
      gridBytes: grid.gridSize,
      voxelCount: grid.voxelCount,
      indexBox: { min: grid.indexBBox.min, max: grid.indexBBox.max },
      nodes: { uppers: Math.max(1, uppers), lowers: Math.max(1, lowers), leaves: Math.max(1, leaves) },
    };
    built.value.dispose();
    return ok(sizing);
  } finally {
    backend.dispose();
  }
}

/**
 * The index of the first point `countGridNodes` rejects on its own (a non-finite coordinate or a voxel
 * outside the 32-bit range), found with the same mapping point by point; only called after the whole
 * cloud was rejected, so the cost (a small count per point up to the bad one) is on the error path only.
 */
function firstRejectedPoint(positions: Float32Array | Float64Array, voxelSize: number): number | undefined {
  for (let i = 0; 3 * i < positions.length; i++) {
    if (!countGridNodes(positions.subarray(3 * i, 3 * i + 3), { voxelSize }).ok) return i;
  }
  return undefined;
}
