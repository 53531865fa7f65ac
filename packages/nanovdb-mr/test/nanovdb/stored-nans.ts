// The NaNs a grid stores, read as bits (numbers would let V8 change them): the test-side check that every builder
// stores the one canonical quiet NaN (f16 0x7e00, f32 0x7fc00000, f64 0x7ff8000000000000).
import { unwrap } from '@hs/streams';
import { GridType, gridBlindMetadata, validateGrids } from '../../src/index.js';
import { GRID_DATA_SIZE, Tree, valueLayoutOf, type ValueLayout } from '../../src/nanovdb/grid/grid-layout.js';

/** A NaN's bits at `at`, `width` bytes wide: 'canonical', 'other', or undefined when the value is no NaN. */
function nanAt(v: DataView, at: number, width: 2 | 4 | 8): 'canonical' | 'other' | undefined {
  if (width === 2) {
    const h = v.getUint16(at, true);
    return (h & 0x7fff) > 0x7c00 ? (h === 0x7e00 ? 'canonical' : 'other') : undefined;
  }
  const high = v.getUint32(width === 8 ? at + 4 : at, true);
  const low = width === 8 ? v.getUint32(at, true) : 0;
  const nan = width === 8 ? (high & 0x7fffffff) > 0x7ff00000 || ((high & 0x7fffffff) === 0x7ff00000 && low !== 0) : (high & 0x7fffffff) > 0x7f800000;
  if (!nan) return undefined;
  return high === (width === 8 ? 0x7ff80000 : 0x7fc00000) && low === 0 ? 'canonical' : 'other';
}

/**
 * How many of the NaNs the first grid of `bytes` stores are canonical and how many are not: every leaf value of a
 * floating-point valued grid (Float, Double, Half, Vec3f/d, Vec4f/d), or the first channel of an index grid.
 */
export function storedNaNs(bytes: Uint8Array): { canonical: number; other: number } {
  const [grid] = unwrap(validateGrids(bytes));
  if (grid === undefined) throw new Error('no grid in the bytes');
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ranges: [number, number][] = [];
  let width: 2 | 4 | 8;
  if (grid.gridType === GridType.OnIndex || grid.gridType === GridType.Index) {
    const [record] = gridBlindMetadata(bytes, grid);
    if (record === undefined) throw new Error('the index grid has no channel');
    ranges.push([record.dataOffset, record.valueCount * record.valueSize]);
    width = record.dataType === GridType.Double || record.dataType === GridType.Vec3d || record.dataType === GridType.Vec4d ? 8 : 4;
  } else {
    const layout = valueLayoutOf(grid.gridType) as ValueLayout;
    width = layout.scalar === 'f16' ? 2 : layout.scalar === 'f64' ? 8 : 4;
    const leaves = GRID_DATA_SIZE + Number(v.getBigInt64(GRID_DATA_SIZE + Tree.nodeOffset, true));
    const count = v.getUint32(GRID_DATA_SIZE + Tree.nodeCount, true);
    for (let l = 0; l < count; l++) ranges.push([leaves + l * layout.leafSize + layout.leafValues, 512 * layout.valueSize]);
  }
  const counts = { canonical: 0, other: 0 };
  for (const [start, length] of ranges) {
    for (let at = start; at < start + length; at += width) {
      const kind = nanAt(v, at, width);
      if (kind !== undefined) counts[kind]++;
    }
  }
  return counts;
}
