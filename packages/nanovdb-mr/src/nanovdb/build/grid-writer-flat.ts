/**
 * The flat grid writer of the host PointsToGrid write stage: the bytes `writeGrid` writes for a grid without a
 * per-voxel value source (OnIndex, and Float grids whose active voxels hold 1.0), written straight from the sorted
 * voxels into u32, i32 and f32 views of the output with the bounding boxes and the open leaf's per-word voxel counts
 * in local variables: no per-node objects and no DataView calls per voxel. `test/nanovdb/grid-bytes-identity.test.ts`
 * holds both writers to the same bytes.
 */
import { GridFlags, Internal, Leaf, ROOT_OFFSET, Tile, rootKey, type ValueLayout } from '../grid/grid-layout.js';
import { BBox, writeDynamicHeader, writeGrid, type GridPlan } from './grid-writer.js';

/**
 * Writes the grid of the first `plan.cut` sorted coordinates into `bytes[0, plan.gridSize)`, byte for byte as
 * `writeGrid(bytes, sorted, plan, layout, template, undefined, background)` does (and through it when `bytes` is not
 * 4-byte aligned or the layout has no u32-aligned leaf fields). `layout` is an index layout, or Float (active voxels 1.0,
 * `background` everywhere else).
 */
export function writeGridFlat(bytes: Uint8Array, sorted: Int32Array, plan: GridPlan, layout: ValueLayout, template: Uint8Array, background = 0): void {
  const aligned = (bytes.byteOffset & 3) === 0 && ((layout.leafSize | layout.upper.size | layout.lower.size | plan.upperStart) & 3) === 0 && (layout.leafValues & 3) === 0 && (layout.upper.table & 3) === 0 && (layout.lower.table & 3) === 0;
  if (!aligned || !(layout.isIndex || layout.scalar === 'f32') || layout.components !== 1) {
    writeGrid(bytes, sorted, plan, layout, template, undefined, background);
    return;
  }
  const size = plan.gridSize;
  // the header, root and tiles now; each node is zeroed when it opens (nodes open in buffer order and cover the rest), so the grid's memory is written in one pass
  bytes.fill(0, 0, plan.upperStart);
  const v = new DataView(bytes.buffer, bytes.byteOffset, size);
  const u32 = new Uint32Array(bytes.buffer, bytes.byteOffset, size >>> 2);
  const i32 = new Int32Array(bytes.buffer, bytes.byteOffset, size >>> 2);
  const f32 = new Float32Array(bytes.buffer, bytes.byteOffset, size >>> 2);
  const { upper: U, lower: L } = layout;
  const isIndex = layout.isIndex;
  const fill = !isIndex && background !== 0; // Float: the background in every table entry that is not a child and every inactive voxel
  const leafSize = layout.leafSize;
  const leafValues = layout.leafValues;
  const uTable = U.table;
  const uStride = U.tableStride;
  const lTable = L.table;
  const lStride = L.tableStride;
  const uEntries = 1 << (3 * U.log2Dim);
  const lEntries = 1 << (3 * L.log2Dim);
  const tilesAt = ROOT_OFFSET + layout.rootDataSize;
  const fillTable = (node: number, table: number, stride: number, entries: number): void => {
    for (let e = 0; e < entries; e++) f32[(node + table + stride * e) >>> 2] = background;
  };
  // open nodes and their boxes (min and max corners); -1: none open yet
  let tile = -1;
  let lower = -1;
  let leaf = -1;
  let upperAt = 0;
  let lowerAt = 0;
  let leafAt = 0;
  let activeBefore = 0;
  let rx0 = 2147483647, ry0 = 2147483647, rz0 = 2147483647, rx1 = -2147483648, ry1 = -2147483648, rz1 = -2147483648;
  let ux0 = 2147483647, uy0 = 2147483647, uz0 = 2147483647, ux1 = -2147483648, uy1 = -2147483648, uz1 = -2147483648;
  let lx0 = 2147483647, ly0 = 2147483647, lz0 = 2147483647, lx1 = -2147483648, ly1 = -2147483648, lz1 = -2147483648;
  let vx0 = 2147483647, vy0 = 2147483647, vz0 = 2147483647, vx1 = -2147483648, vy1 = -2147483648, vz1 = -2147483648;
  // active voxels of the open leaf in each 64-bit word of its value mask (its voxels come in mask order)
  let c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0, c6 = 0, c7 = 0;
  let px = 0;
  let py = 0;
  let pz = 0;
  const cut = plan.cut;
  for (let i = 0; i <= cut; i++) {
    const end = i === cut;
    const x = end ? 0 : (sorted[3 * i] as number);
    const y = end ? 0 : (sorted[3 * i + 1] as number);
    const z = end ? 0 : (sorted[3 * i + 2] as number);
    const first = i === 0;
    const diff = (x ^ px) | (y ^ py) | (z ^ pz);
    if (!first && !end && diff === 0) continue;
    const newLeaf = first || end || diff >>> 3 !== 0;
    const newLower = newLeaf && (first || end || diff >>> 7 !== 0);
    const newTile = newLower && (first || end || diff >>> 12 !== 0);
    if (newLeaf && leaf >= 0) {
      // close the leaf: its bbox, flags and (index grids) value offset and per-word prefix counts
      const w = leafAt >>> 2;
      i32[w] = vx0;
      i32[w + 1] = vy0;
      i32[w + 2] = vz0;
      bytes[leafAt + Leaf.bboxDif] = vx1 - vx0;
      bytes[leafAt + Leaf.bboxDif + 1] = vy1 - vy0;
      bytes[leafAt + Leaf.bboxDif + 2] = vz1 - vz0;
      bytes[leafAt + Leaf.flags] = GridFlags.HasBBox;
      if (isIndex) {
        const o = (leafAt + leafValues) >>> 2;
        const offset = activeBefore + 1;
        u32[o] = offset >>> 0;
        u32[o + 1] = Math.floor(offset / 4294967296);
        // seven cumulative 9-bit counts (after words 0..6) at bits 9w of a u64
        const s1 = c0 + c1;
        const s2 = s1 + c2;
        const s3 = s2 + c3;
        const s4 = s3 + c4;
        const s5 = s4 + c5;
        const s6 = s5 + c6;
        u32[o + 2] = (c0 | (s1 << 9) | (s2 << 18) | (s3 << 27)) >>> 0;
        u32[o + 3] = ((s3 >>> 5) | (s4 << 4) | (s5 << 13) | (s6 << 22)) >>> 0;
        activeBefore += s6 + c7;
      }
      c0 = c1 = c2 = c3 = c4 = c5 = c6 = c7 = 0;
      if (vx0 < lx0) lx0 = vx0;
      if (vy0 < ly0) ly0 = vy0;
      if (vz0 < lz0) lz0 = vz0;
      if (vx1 > lx1) lx1 = vx1;
      if (vy1 > ly1) ly1 = vy1;
      if (vz1 > lz1) lz1 = vz1;
      vx0 = vy0 = vz0 = 2147483647;
      vx1 = vy1 = vz1 = -2147483648;
    }
    if (newLower && lower >= 0) {
      const w = (lowerAt + Internal.bbox) >>> 2;
      i32[w] = lx0;
      i32[w + 1] = ly0;
      i32[w + 2] = lz0;
      i32[w + 3] = lx1;
      i32[w + 4] = ly1;
      i32[w + 5] = lz1;
      if (lx0 < ux0) ux0 = lx0;
      if (ly0 < uy0) uy0 = ly0;
      if (lz0 < uz0) uz0 = lz0;
      if (lx1 > ux1) ux1 = lx1;
      if (ly1 > uy1) uy1 = ly1;
      if (lz1 > uz1) uz1 = lz1;
      lx0 = ly0 = lz0 = 2147483647;
      lx1 = ly1 = lz1 = -2147483648;
    }
    if (newTile && tile >= 0) {
      const w = (upperAt + Internal.bbox) >>> 2;
      i32[w] = ux0;
      i32[w + 1] = uy0;
      i32[w + 2] = uz0;
      i32[w + 3] = ux1;
      i32[w + 4] = uy1;
      i32[w + 5] = uz1;
      if (ux0 < rx0) rx0 = ux0;
      if (uy0 < ry0) ry0 = uy0;
      if (uz0 < rz0) rz0 = uz0;
      if (ux1 > rx1) rx1 = ux1;
      if (uy1 > ry1) ry1 = uy1;
      if (uz1 > rz1) rz1 = uz1;
      ux0 = uy0 = uz0 = 2147483647;
      ux1 = uy1 = uz1 = -2147483648;
    }
    if (end) break;
    if (newTile) {
      tile++;
      upperAt = plan.upperStart + tile * U.size;
      const tileAt = tilesAt + tile * layout.tileSize;
      v.setBigUint64(tileAt + Tile.key, rootKey(x, y, z), true);
      const child = upperAt - ROOT_OFFSET;
      v.setUint32(tileAt + Tile.child, child >>> 0, true);
      v.setInt32(tileAt + Tile.child + 4, Math.floor(child / 4294967296), true);
      u32.fill(0, upperAt >>> 2, (upperAt + U.size) >>> 2);
      bytes[upperAt + Internal.flags] = GridFlags.HasBBox;
      if (fill) fillTable(upperAt, uTable, uStride, uEntries);
    }
    if (newLower) {
      lower++;
      lowerAt = plan.lowerStart + lower * L.size;
      u32.fill(0, lowerAt >>> 2, (lowerAt + L.size) >>> 2);
      // upper table entry: x, y, z bits 7..11 (32^3 entries)
      const entry = (((x >> 7) & 31) << 10) | (((y >> 7) & 31) << 5) | ((z >> 7) & 31);
      const m = ((upperAt + U.childMask) >>> 2) + (entry >>> 5);
      u32[m] = ((u32[m] as number) | (1 << (entry & 31))) >>> 0;
      const t = (upperAt + uTable + uStride * entry) >>> 2;
      const rel = lowerAt - upperAt;
      u32[t] = rel >>> 0;
      i32[t + 1] = Math.floor(rel / 4294967296);
      bytes[lowerAt + Internal.flags] = GridFlags.HasBBox;
      if (fill) fillTable(lowerAt, lTable, lStride, lEntries);
    }
    if (newLeaf) {
      leaf++;
      leafAt = plan.leafStart + leaf * leafSize;
      for (let w = leafAt >>> 2, e = (leafAt + leafSize) >>> 2; w < e; w++) u32[w] = 0;
      // lower table entry: x, y, z bits 3..6 (16^3 entries)
      const entry = (((x >> 3) & 15) << 8) | (((y >> 3) & 15) << 4) | ((z >> 3) & 15);
      const m = ((lowerAt + L.childMask) >>> 2) + (entry >>> 5);
      u32[m] = ((u32[m] as number) | (1 << (entry & 31))) >>> 0;
      const t = (lowerAt + lTable + lStride * entry) >>> 2;
      const rel = leafAt - lowerAt;
      u32[t] = rel >>> 0;
      i32[t + 1] = Math.floor(rel / 4294967296);
      if (fill) f32.fill(background, (leafAt + leafValues) >>> 2, ((leafAt + leafValues) >>> 2) + 512);
    }
    const n = ((x & 7) << 6) | ((y & 7) << 3) | (z & 7);
    const m = ((leafAt + Leaf.valueMask) >>> 2) + (n >>> 5);
    u32[m] = ((u32[m] as number) | (1 << (n & 31))) >>> 0;
    switch (n >>> 6) {
      case 0:
        c0++;
        break;
      case 1:
        c1++;
        break;
      case 2:
        c2++;
        break;
      case 3:
        c3++;
        break;
      case 4:
        c4++;
        break;
      case 5:
        c5++;
        break;
      case 6:
        c6++;
        break;
      default:
        c7++;
    }
    if (!isIndex) f32[(leafAt + leafValues + 4 * n) >>> 2] = 1;
    if (x < vx0) vx0 = x;
    if (y < vy0) vy0 = y;
    if (z < vz0) vz0 = z;
    if (x > vx1) vx1 = x;
    if (y > vy1) vy1 = y;
    if (z > vz1) vz1 = z;
    px = x;
    py = y;
    pz = z;
  }
  const rootBox = new BBox();
  rootBox.x0 = rx0;
  rootBox.y0 = ry0;
  rootBox.z0 = rz0;
  rootBox.x1 = rx1;
  rootBox.y1 = ry1;
  rootBox.z1 = rz1;
  writeDynamicHeader(v, bytes, plan, layout, template, rootBox);
  if (fill) f32[(ROOT_OFFSET + layout.rootBackground) >>> 2] = background;
}
