import { ErrorCode, HsError, type KernelLaunch, type MemoryRange } from '@hs/streams';

/** Registry name of the preview kernel; the CUDA backend looks its device version up by this name. */
export const GRID_PREVIEW_KERNEL = 'hs.gridPreview';

/** Largest preview side, in pixels. */
export const MAX_PREVIEW_SIDE = 1024;
/** Preview side the camera aims for when the grid is small (cells are magnified up to this). */
export const TARGET_PREVIEW_SIDE = 512;
/** Grey level of the farthest voxel; nearer voxels are brighter, up to 255. Background pixels are 0. */
export const FAR_SHADE = 56;

// NanoVDB 32.9 layout facts the kernel reads (see @hs/nanovdb-mr's grid layout and NANOVDB-FORMAT.md).
const GRID_TYPE_OFFSET = 636;
const ON_INDEX_GRID_TYPE = 20;
const TREE_OFFSET = 672;
const LEAF_NODE_OFFSET = TREE_OFFSET; // i64: leaf array offset from the TreeData start
const LEAF_COUNT_OFFSET = TREE_OFFSET + 32; // u32
const ON_INDEX_LEAF_BYTES = 96;
const LEAF_VALUE_MASK = 16;

/** Index-space box of the voxels a preview frames: inclusive min and max per axis. */
export interface PreviewBox {
  readonly min: readonly [number, number, number];
  readonly max: readonly [number, number, number];
}

/**
 * The fixed orthographic camera of a preview: it looks along -z at the x-y plane, x to the right, y up;
 * a voxel's brightness grows with its z (nearer to the camera is brighter). Cells are voxel columns;
 * the image magnifies each cell `zoomNumerator / zoomDenominator` times (a reduced fraction: one of the
 * two is 1).
 */
export interface PreviewCamera {
  /** Image width in pixels, a multiple of 4 (1 to `MAX_PREVIEW_SIDE`). */
  readonly width: number;
  /** Image height in pixels (1 to `MAX_PREVIEW_SIDE`). */
  readonly height: number;
  /** Index x of the leftmost cell column. */
  readonly minX: number;
  /** Index y of the top cell row. */
  readonly maxY: number;
  /** Index z of the farthest voxel (shade `FAR_SHADE`). */
  readonly minZ: number;
  /** Index z extent, at least 1: the nearest voxel is at `minZ + depthSpan` or less (shade 255). */
  readonly depthSpan: number;
  readonly zoomNumerator: number;
  readonly zoomDenominator: number;
}

/**
 * The camera that frames `box` (the final volume's index bounding box, so every scan's preview uses the
 * same view): an integer magnification that brings the larger side near `TARGET_PREVIEW_SIDE` pixels, or
 * an integer reduction that keeps it within `MAX_PREVIEW_SIDE`; the width is padded up to a multiple of 4.
 * @throws HsError InvalidArgument when `box` is not integer-valued with min <= max on every axis.
 */
export function previewCamera(box: PreviewBox): PreviewCamera {
  for (let a = 0; a < 3; a++) {
    const lo = box.min[a]!;
    const hi = box.max[a]!;
    if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi) || lo > hi) {
      throw new HsError(ErrorCode.InvalidArgument, `previewCamera: the box must hold integer min <= max per axis, got [${box.min.join(', ')}] .. [${box.max.join(', ')}]`);
    }
  }
  const cellsX = box.max[0] - box.min[0] + 1;
  const cellsY = box.max[1] - box.min[1] + 1;
  const larger = Math.max(cellsX, cellsY);
  const zoomNumerator = larger > MAX_PREVIEW_SIDE ? 1 : Math.max(1, Math.floor(TARGET_PREVIEW_SIDE / larger));
  const zoomDenominator = larger > MAX_PREVIEW_SIDE ? Math.ceil(larger / MAX_PREVIEW_SIDE) : 1;
  const side = (cells: number): number => Math.ceil((cells * zoomNumerator) / zoomDenominator);
  return Object.freeze({
    width: Math.min(MAX_PREVIEW_SIDE, Math.ceil(side(cellsX) / 4) * 4),
    height: side(cellsY),
    minX: box.min[0],
    maxY: box.max[1],
    minZ: box.min[2],
    depthSpan: Math.max(1, box.max[2] - box.min[2]),
    zoomNumerator,
    zoomDenominator,
  });
}

/**
 * A launch record the builder refills in place: reads `[grid]`, writes `[image]`, params
 * `[width, height, minX, maxY, minZ, depthSpan, zoomNumerator, zoomDenominator]`. Keep one per operator.
 */
export class GridPreviewLaunch implements KernelLaunch {
  readonly name = GRID_PREVIEW_KERNEL;
  readonly reads: MemoryRange[] = [];
  readonly writes: MemoryRange[] = [];
  readonly params: number[] = [0, 0, 0, 0, 0, 0, 1, 1];
  readonly host = gridPreviewHost;
}

/**
 * Builds a launch of `hs.gridPreview`: renders the active voxels of the OnIndex NanoVDB grid in `grid`
 * (its bytes from offset 0) into `image`, `width * height` bytes of uint8 grey (`[height, width]`, row 0
 * at the top), through `camera`:
 *
 * 1. every pixel is cleared to 0;
 * 2. every active leaf voxel (x, y, z) covers the cell (x - minX, maxY - y), which covers pixels
 *    `[floor(c * num / den), max(that + 1, floor((c + 1) * num / den)))` on each image axis (clipped
 *    to the image); each covered pixel becomes the maximum of itself and
 *    `FAR_SHADE + floor((255 - FAR_SHADE) * clamp(z - minZ, 0, depthSpan) / depthSpan)`.
 *
 * A maximum is order-independent, so the CUDA version (one thread per leaf voxel, byte-lane atomic
 * maximum) and the host version give the same bytes. Only the grid's type, tree leaf offset and count
 * and its leaves (origin from the bounding-box minimum, value mask) are read; a grid that is not OnIndex,
 * or whose leaves lie outside `grid`, renders as all 0.
 *
 * Launch contract shared with the CUDA version in native/src/nanovdb/grid-preview-kernel.cu.
 * @throws HsError InvalidArgument when the camera's sizes are not positive integers, its width is not a
 *   multiple of 4, or `image` is shorter than `width * height` (programmer errors: the caller sized it).
 */
export function gridPreview(grid: MemoryRange, image: MemoryRange, camera: PreviewCamera, into = new GridPreviewLaunch()): KernelLaunch {
  const { width, height, zoomNumerator, zoomDenominator, depthSpan } = camera;
  const positive = [width, height, zoomNumerator, zoomDenominator, depthSpan].every((v) => Number.isSafeInteger(v) && v > 0);
  if (!positive || width % 4 !== 0 || ![camera.minX, camera.maxY, camera.minZ].every(Number.isSafeInteger)) {
    throw new HsError(ErrorCode.InvalidArgument, `${GRID_PREVIEW_KERNEL}: camera sizes must be positive integers with a width that is a multiple of 4, got ${JSON.stringify(camera)}`);
  }
  if (image.byteLength < width * height) {
    throw new HsError(ErrorCode.InvalidArgument, `${GRID_PREVIEW_KERNEL}: image range '${image.label}' has ${image.byteLength} bytes, ${width}x${height} needs ${width * height}`);
  }
  into.reads[0] = grid;
  into.writes[0] = image;
  const p = into.params;
  p[0] = width;
  p[1] = height;
  p[2] = camera.minX;
  p[3] = camera.maxY;
  p[4] = camera.minZ;
  p[5] = depthSpan;
  p[6] = zoomNumerator;
  p[7] = zoomDenominator;
  return into;
}

/** Host implementation of `hs.gridPreview` (see `gridPreview`); allocates nothing but a DataView. */
function gridPreviewHost(reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const grid = reads[0]!;
  const image = writes[0]!;
  const [width, height, minX, maxY, minZ, depthSpan, num, den] = params as [number, number, number, number, number, number, number, number];
  image.fill(0, 0, width * height);
  if (grid.byteLength < LEAF_COUNT_OFFSET + 4) return;
  const v = new DataView(grid.buffer, grid.byteOffset, grid.byteLength);
  if (v.getUint32(GRID_TYPE_OFFSET, true) !== ON_INDEX_GRID_TYPE) return;
  const leafStart = TREE_OFFSET + Number(v.getBigInt64(LEAF_NODE_OFFSET, true));
  const leafCount = v.getUint32(LEAF_COUNT_OFFSET, true);
  if (leafCount === 0 || leafStart < 0 || leafStart + leafCount * ON_INDEX_LEAF_BYTES > grid.byteLength) return;
  for (let l = 0; l < leafCount; l++) {
    const leaf = leafStart + l * ON_INDEX_LEAF_BYTES;
    const ox = v.getInt32(leaf, true) & ~7;
    const oy = v.getInt32(leaf + 4, true) & ~7;
    const oz = v.getInt32(leaf + 8, true) & ~7;
    // Voxel n = 64 x + 8 y + z of the leaf is bit n of the value mask, so mask byte 8 x + y holds the z
    // bits of one voxel column, which covers one cell: only its highest active voxel can win the maximum.
    for (let column = 0; column < 64; column++) {
      const bits = grid[leaf + LEAF_VALUE_MASK + column]!;
      if (bits === 0) continue;
      const z = oz + (31 - Math.clz32(bits)) - minZ;
      const depth = z < 0 ? 0 : z > depthSpan ? depthSpan : z;
      const shade = FAR_SHADE + Math.floor(((255 - FAR_SHADE) * depth) / depthSpan);
      const cx = ox + (column >> 3) - minX;
      const cy = maxY - (oy + (column & 7));
      const x0 = Math.floor((cx * num) / den);
      const x1 = Math.min(width, Math.max(x0 + 1, Math.floor(((cx + 1) * num) / den)));
      const y0 = Math.floor((cy * num) / den);
      const y1 = Math.min(height, Math.max(y0 + 1, Math.floor(((cy + 1) * num) / den)));
      for (let py = Math.max(0, y0); py < y1; py++) {
        for (let px = Math.max(0, x0), at = py * width + px; px < x1; px++, at++) {
          if (image[at]! < shade) image[at] = shade;
        }
      }
    }
  }
}
