import { GridAccessor, validateGrids } from '@hs/nanovdb-mr';
import { unwrap } from '@hs/streams';
import { FAR_SHADE, type PreviewCamera } from '../src/grid-preview-kernel.js';

/**
 * An independent preview of a grid's bytes: every active voxel from the library's `GridAccessor`
 * (not the kernel's own leaf walk), each voxel's cell filled with the brightest shade seen.
 */
export function referencePreview(gridBytes: Uint8Array, camera: PreviewCamera): Uint8Array {
  const [metadata] = unwrap(validateGrids(gridBytes));
  const image = new Uint8Array(camera.width * camera.height);
  const num = camera.zoomNumerator;
  const den = camera.zoomDenominator;
  new GridAccessor(gridBytes, metadata!).forEachActiveVoxel((x, y, z) => {
    const depth = Math.min(camera.depthSpan, Math.max(0, z - camera.minZ));
    const shade = FAR_SHADE + Math.floor(((255 - FAR_SHADE) * depth) / camera.depthSpan);
    // A cell is num x num pixels when magnified (den 1), or shares one pixel with its den x den block (num 1).
    const cells = (c: number): number[] => (den === 1 ? Array.from({ length: num }, (_, i) => c * num + i) : [Math.floor(c / den)]);
    for (const py of cells(camera.maxY - y)) {
      for (const px of cells(x - camera.minX)) {
        if (px < 0 || py < 0 || px >= camera.width || py >= camera.height) continue;
        image[py * camera.width + px] = Math.max(image[py * camera.width + px]!, shade);
      }
    }
  });
  return image;
}

/** Distinct voxels `round(p / voxelSize)` (as `floor(v + 0.5)`) of the points, counted with a string set. */
export function distinctVoxels(positions: Float32Array | Float64Array, voxelSize: number): number {
  const keys = new Set<string>();
  for (let i = 0; i < positions.length; i += 3) {
    const v = [0, 1, 2].map((a) => Math.floor(positions[i + a]! / voxelSize + 0.5));
    keys.add(v.join(','));
  }
  return keys.size;
}
