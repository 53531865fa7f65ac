import { GridType, HostResource, pointsToGrid } from '@hs/nanovdb-mr';
import { HostBackend, errWithContext, ok, type Result } from '@hs/streams';
import type { PreviewBox } from './grid-preview-kernel.js';

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
 * Builds the OnIndex grid of the whole cloud once on a host backend (host memory only, released before
 * returning) to learn the largest grid the run will produce, its node counts and its bounding box.
 * @returns the sizing, or `pointsToGrid`'s error (InvalidArgument naming the first non-finite point or an
 *   out-of-range voxel) prefixed with `sizing the volume`.
 */
export function sizeVolume(positions: Float32Array | Float64Array, voxelSize: number, name: string): Result<VolumeSizing> {
  const backend = new HostBackend();
  try {
    const built = pointsToGrid(backend, new HostResource(backend), { space: 'world', positions }, { gridType: GridType.OnIndex, voxelSize, name, checksum: 'disabled' });
    if (!built.ok) return errWithContext(built.error, 'sizing the volume');
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
