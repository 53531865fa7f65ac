import { crc32 } from 'node:zlib';
import { ErrorCode, HsError } from '@hs/streams';
import { GRID_DATA_SIZE, Grid, ROOT_OFFSET } from './grid-layout.js';

/** Bytes per block of the tail checksum. */
export const CHECKSUM_BLOCK_BYTES = 4096;
/**
 * A checksum half that is "not computed".
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { CHECKSUM_NONE, GridType, HostResource, pointsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const handle = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords: new Int32Array([0, 0, 0]) }, { gridType: GridType.Float, checksum: 'partial' }));
 * const metadata = handle.grid();
 * if (metadata === undefined) throw new Error('no grid');
 * const { head, tail } = metadata.checksum;
 * // 'partial' stores the head CRC only: the tail half reads as "not computed"
 * console.log(`head stored: ${head !== CHECKSUM_NONE}, tail stored: ${tail !== CHECKSUM_NONE}`);
 * handle.dispose();
 * ```
 */
export const CHECKSUM_NONE = 0xffffffff;

/** How much of a grid the checksum covers. */
export type ChecksumMode = 'full' | 'partial' | 'disabled';

/** Every `ChecksumMode`, in the order of their kernel parameter (0, 1, 2). @internal */
export const CHECKSUM_MODES: readonly ChecksumMode[] = ['full', 'partial', 'disabled'];

/** The two CRC32 halves of a grid checksum. */
export interface GridChecksum {
  /** CRC32 of bytes [16, 736): GridData after magic and checksum, and TreeData. */
  readonly head: number;
  /** CRC32 of the per-4-KiB-block CRC32s of [736, gridSize); `CHECKSUM_NONE` when not computed. */
  readonly tail: number;
}

/**
 * Computes the checksum of the grid at the start of `grid` (its `gridSize` bytes) in `mode`: `full`
 * (head and tail), `partial` (head; tail all ones) or `disabled` (both all ones). CRC32 is zlib's
 * (reflected 0xEDB88320). Spec: NANOVDB-FORMAT.md "Checksum".
 * @throws HsError InvalidArgument for an unknown `mode`, `grid` that is not a Uint8Array, or a `gridSize` that is not an
 *   integer from 736 (the grid and tree headers) to `grid.length`.
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, computeChecksum, pointsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const handle = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords: new Int32Array([0, 0, 0, 5, 5, 5]) }, { gridType: GridType.Float, checksum: 'full' }));
 * const metadata = handle.grid();
 * if (metadata === undefined) throw new Error('no grid');
 * const grid = unwrap(handle.hostBytes()).subarray(metadata.byteOffset);
 * // recompute after the bytes crossed a wire, and compare with what the grid stores
 * const now = computeChecksum(grid, metadata.gridSize, 'full');
 * console.log(`head ${now.head.toString(16)}, tail ${now.tail.toString(16)}, intact: ${now.head === metadata.checksum.head && now.tail === metadata.checksum.tail}`);
 * handle.dispose();
 * ```
 */
export function computeChecksum(grid: Uint8Array, gridSize: number, mode: ChecksumMode): GridChecksum {
  if (!CHECKSUM_MODES.includes(mode)) throw new HsError(ErrorCode.InvalidArgument, `computeChecksum: mode must be 'full', 'partial' or 'disabled', got ${String(mode)}`);
  if (!(grid instanceof Uint8Array)) throw new HsError(ErrorCode.InvalidArgument, 'computeChecksum: grid must be the Uint8Array of the grid bytes');
  if (!Number.isSafeInteger(gridSize) || gridSize < ROOT_OFFSET || gridSize > grid.length) {
    throw new HsError(ErrorCode.InvalidArgument, `computeChecksum: gridSize ${String(gridSize)} must be an integer from ${ROOT_OFFSET} (the grid and tree headers) to the ${grid.length} bytes given`);
  }
  if (mode === 'disabled') return { head: CHECKSUM_NONE, tail: CHECKSUM_NONE };
  const head = crc32(grid.subarray(Grid.version, ROOT_OFFSET)) >>> 0;
  return { head, tail: mode === 'full' ? tailChecksum(grid.subarray(ROOT_OFFSET, gridSize)) : CHECKSUM_NONE };
}

/** Writes `checksum` into the grid's checksum field (head at byte 8, tail at 12). */
export function writeChecksum(grid: Uint8Array, checksum: GridChecksum): void {
  const view = new DataView(grid.buffer, grid.byteOffset, GRID_DATA_SIZE);
  view.setUint32(Grid.checksum, checksum.head, true);
  view.setUint32(Grid.checksum + 4, checksum.tail, true);
}

function tailChecksum(region: Uint8Array): number {
  if (region.length === 0) return CHECKSUM_NONE;
  const blocks = Math.floor(region.length / CHECKSUM_BLOCK_BYTES);
  const crcs = new Uint8Array(blocks * 4);
  const out = new DataView(crcs.buffer);
  for (let i = 0; i < blocks; i++) {
    const end = i + 1 === blocks ? region.length : (i + 1) * CHECKSUM_BLOCK_BYTES;
    out.setUint32(i * 4, crc32(region.subarray(i * CHECKSUM_BLOCK_BYTES, end)) >>> 0, true);
  }
  return crc32(crcs) >>> 0;
}
