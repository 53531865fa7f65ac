/**
 * The flat grid writer of the host PointsToGrid write stage: the bytes `writeGrid` writes for a grid without a
 * per-voxel value source (OnIndex, and Float grids whose active voxels hold 1.0), written straight from the sorted
 * voxels into u32, i32 and f32 views of the output with the bounding boxes and the open leaf's per-word voxel counts
 * in local variables: no per-node objects and no DataView calls per voxel. `test/nanovdb/grid-bytes-identity.test.ts`
 * holds both writers to the same bytes.
 */
import { popcount32 } from '../grid/bit-mask.js';
import { GridFlags, Internal, Leaf, ROOT_OFFSET, Tile, rootKey, type InternalLevel, type ValueLayout } from '../grid/grid-layout.js';
import { BBox, writeDynamicHeader, writeGrid, type GridPlan } from './grid-writer.js';
import { LEAF_VOXEL_TABLE, UNPACK_TABLE, leafVoxelTable, levelMasks, type SortedKeys } from './packed-voxel-keys.js';

/** Where `writeGridFlat`'s open boxes sit in its `boxes` array (six i32 each: min corner, max corner). */
const ROOT_BOX = 0;
const UPPER_BOX = 6;
const LOWER_BOX = 12;

/** Makes the box at `at` empty: min corner at i32 max, max corner at i32 min. */
function emptyBox(boxes: Int32Array, at: number): void {
  boxes.fill(2147483647, at, at + 3);
  boxes.fill(-2147483648, at + 3, at + 6);
}

/** Grows the box at `at` to hold the box (x0, y0, z0)-(x1, y1, z1). */
function growBox(boxes: Int32Array, at: number, x0: number, y0: number, z0: number, x1: number, y1: number, z1: number): void {
  if (x0 < (boxes[at] as number)) boxes[at] = x0;
  if (y0 < (boxes[at + 1] as number)) boxes[at + 1] = y0;
  if (z0 < (boxes[at + 2] as number)) boxes[at + 2] = z0;
  if (x1 > (boxes[at + 3] as number)) boxes[at + 3] = x1;
  if (y1 > (boxes[at + 4] as number)) boxes[at + 4] = y1;
  if (z1 > (boxes[at + 5] as number)) boxes[at + 5] = z1;
}

/** Closes a node's box: stores it at word `w` of `i32` (the node's bbox), grows the parent's box `into` by it, empties it. */
function closeBox(boxes: Int32Array, from: number, into: number, i32: Int32Array, w: number): void {
  i32.set(boxes.subarray(from, from + 6), w);
  growBox(boxes, into, boxes[from] as number, boxes[from + 1] as number, boxes[from + 2] as number, boxes[from + 3] as number, boxes[from + 4] as number, boxes[from + 5] as number);
  emptyBox(boxes, from);
}

/**
 * What both flat writers share: u32, i32 and f32 views of the grid's bytes, and the opening of each node in buffer
 * order (a root tile with its upper node, a lower node, a leaf linked into its lower node), each internal node zeroed
 * as it opens (nodes open in buffer order and cover everything after the tiles, so the grid's memory is written in
 * one pass); the header goes last.
 */
class FlatNodes {
  readonly v: DataView;
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
  readonly f32: Float32Array;
  /** Float grids with a non-zero background: it goes in every table entry that is not a child and every inactive voxel. */
  readonly fill: boolean;
  readonly #bytes: Uint8Array;
  readonly #plan: GridPlan;
  readonly #layout: ValueLayout;
  readonly #background: number;

  /** Views of `bytes[0, plan.gridSize)` (`flatWritable` holds); zeroes the header, root and tiles. */
  constructor(bytes: Uint8Array, plan: GridPlan, layout: ValueLayout, background: number) {
    const size = plan.gridSize;
    bytes.fill(0, 0, plan.upperStart);
    this.v = new DataView(bytes.buffer, bytes.byteOffset, size);
    this.u32 = new Uint32Array(bytes.buffer, bytes.byteOffset, size >>> 2);
    this.i32 = new Int32Array(bytes.buffer, bytes.byteOffset, size >>> 2);
    this.f32 = new Float32Array(bytes.buffer, bytes.byteOffset, size >>> 2);
    this.fill = !layout.isIndex && background !== 0;
    this.#bytes = bytes;
    this.#plan = plan;
    this.#layout = layout;
    this.#background = background;
  }

  /** Opens root tile `tile` (the tile of voxel x, y, z) and its upper node; returns the upper node's offset. */
  openTile(tile: number, x: number, y: number, z: number): number {
    const { upper: U } = this.#layout;
    const upperAt = this.#plan.upperStart + tile * U.size;
    const tileAt = ROOT_OFFSET + this.#layout.rootDataSize + tile * this.#layout.tileSize;
    this.v.setBigUint64(tileAt + Tile.key, rootKey(x, y, z), true);
    const child = upperAt - ROOT_OFFSET;
    this.v.setUint32(tileAt + Tile.child, child >>> 0, true);
    this.v.setInt32(tileAt + Tile.child + 4, Math.floor(child / 4294967296), true);
    this.u32.fill(0, upperAt >>> 2, (upperAt + U.size) >>> 2);
    this.#bytes[upperAt + Internal.flags] = GridFlags.HasBBox;
    if (this.fill) this.#fillTable(upperAt, U);
    return upperAt;
  }

  /** Opens lower node `lower` (that of voxel x, y, z) as a child of the upper node at `upperAt`; returns its offset. */
  openLower(lower: number, upperAt: number, x: number, y: number, z: number): number {
    const { upper: U, lower: L } = this.#layout;
    const lowerAt = this.#plan.lowerStart + lower * L.size;
    this.u32.fill(0, lowerAt >>> 2, (lowerAt + L.size) >>> 2);
    // upper table entry: x, y, z bits 7..11 (32^3 entries)
    this.#link(upperAt, U, (((x >> 7) & 31) << 10) | (((y >> 7) & 31) << 5) | ((z >> 7) & 31), lowerAt);
    this.#bytes[lowerAt + Internal.flags] = GridFlags.HasBBox;
    if (this.fill) this.#fillTable(lowerAt, L);
    return lowerAt;
  }

  /** Links leaf `leaf` (that of voxel x, y, z) into the lower node at `lowerAt`; returns its offset (its bytes are the caller's). */
  linkLeaf(leaf: number, lowerAt: number, x: number, y: number, z: number): number {
    const leafAt = this.#plan.leafStart + leaf * this.#layout.leafSize;
    // lower table entry: x, y, z bits 3..6 (16^3 entries)
    this.#link(lowerAt, this.#layout.lower, (((x >> 3) & 15) << 8) | (((y >> 3) & 15) << 4) | ((z >> 3) & 15), leafAt);
    return leafAt;
  }

  /** Writes the header of `plan` with the root box at `ROOT_BOX` of `boxes`, and the root's background. */
  finish(boxes: Int32Array, template: Uint8Array, plan: GridPlan): void {
    const rootBox = new BBox();
    rootBox.x0 = boxes[ROOT_BOX] as number;
    rootBox.y0 = boxes[ROOT_BOX + 1] as number;
    rootBox.z0 = boxes[ROOT_BOX + 2] as number;
    rootBox.x1 = boxes[ROOT_BOX + 3] as number;
    rootBox.y1 = boxes[ROOT_BOX + 4] as number;
    rootBox.z1 = boxes[ROOT_BOX + 5] as number;
    writeDynamicHeader(this.v, this.#bytes, plan, this.#layout, template, rootBox);
    if (this.fill) this.f32[(ROOT_OFFSET + this.#layout.rootBackground) >>> 2] = this.#background;
  }

  /** Sets `entry`'s child bit in the node at `nodeAt` of `level` and its table entry to the child at `childAt`. */
  #link(nodeAt: number, level: InternalLevel, entry: number, childAt: number): void {
    const u32 = this.u32;
    const m = ((nodeAt + level.childMask) >>> 2) + (entry >>> 5);
    u32[m] = ((u32[m] as number) | (1 << (entry & 31))) >>> 0;
    const t = (nodeAt + level.table + level.tableStride * entry) >>> 2;
    const rel = childAt - nodeAt;
    u32[t] = rel >>> 0;
    this.i32[t + 1] = Math.floor(rel / 4294967296);
  }

  /** The background in every table entry of the node at `node` of `level`. */
  #fillTable(node: number, level: InternalLevel): void {
    const f32 = this.f32;
    const entries = 1 << (3 * level.log2Dim);
    for (let e = 0; e < entries; e++) f32[(node + level.table + level.tableStride * e) >>> 2] = this.#background;
  }
}

/**
 * Whether the flat writers (`writeGridFlat`, `writeGridOfKeys`) write this grid through u32 views: `bytes` 4-byte
 * aligned, every node and field offset a multiple of 4, and an index layout or a one-component f32 one.
 */
export function flatWritable(bytes: Uint8Array, plan: GridPlan, layout: ValueLayout): boolean {
  const aligned = (bytes.byteOffset & 3) === 0 && ((layout.leafSize | layout.upper.size | layout.lower.size | plan.upperStart) & 3) === 0 && (layout.leafValues & 3) === 0 && (layout.upper.table & 3) === 0 && (layout.lower.table & 3) === 0;
  return aligned && (layout.isIndex || layout.scalar === 'f32') && layout.components === 1;
}

/**
 * Writes the grid of the first `plan.cut` sorted coordinates into `bytes[0, plan.gridSize)`, byte for byte as
 * `writeGrid(bytes, sorted, plan, layout, template, undefined, background)` does (and through it when `bytes` is not
 * 4-byte aligned or the layout has no u32-aligned leaf fields). `layout` is an index layout, or Float (active voxels 1.0,
 * `background` everywhere else).
 */
export function writeGridFlat(bytes: Uint8Array, sorted: Int32Array, plan: GridPlan, layout: ValueLayout, template: Uint8Array, background = 0): void {
  if (!flatWritable(bytes, plan, layout)) {
    writeGrid(bytes, sorted, plan, layout, template, undefined, background);
    return;
  }
  const nodes = new FlatNodes(bytes, plan, layout, background);
  const { u32, i32, f32, fill } = nodes;
  const isIndex = layout.isIndex;
  const leafSize = layout.leafSize;
  const leafValues = layout.leafValues;
  // open nodes and their boxes (min and max corners); -1: none open yet
  let tile = -1;
  let lower = -1;
  let leaf = -1;
  let upperAt = 0;
  let lowerAt = 0;
  let leafAt = 0;
  let activeBefore = 0;
  // the root's, open upper's and open lower's boxes (min then max corner, at ROOT_BOX, UPPER_BOX, LOWER_BOX)
  const boxes = new Int32Array(18);
  for (const at of [ROOT_BOX, UPPER_BOX, LOWER_BOX]) emptyBox(boxes, at);
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
      growBox(boxes, LOWER_BOX, vx0, vy0, vz0, vx1, vy1, vz1);
      vx0 = vy0 = vz0 = 2147483647;
      vx1 = vy1 = vz1 = -2147483648;
    }
    if (newLower && lower >= 0) {
      closeBox(boxes, LOWER_BOX, UPPER_BOX, i32, (lowerAt + Internal.bbox) >>> 2);
    }
    if (newTile && tile >= 0) {
      closeBox(boxes, UPPER_BOX, ROOT_BOX, i32, (upperAt + Internal.bbox) >>> 2);
    }
    if (end) break;
    if (newTile) upperAt = nodes.openTile(++tile, x, y, z);
    if (newLower) lowerAt = nodes.openLower(++lower, upperAt, x, y, z);
    if (newLeaf) {
      leafAt = nodes.linkLeaf(++leaf, lowerAt, x, y, z);
      for (let w = leafAt >>> 2, e = (leafAt + leafSize) >>> 2; w < e; w++) u32[w] = 0;
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
  nodes.finish(boxes, template, plan);
}

/**
 * Writes the grid of `n` voxels whose packed keys `sorted` holds in leaf order (`sortPackedKeys(..., 'leaf')`: the
 * voxels of one leaf in any order, repeats allowed) into `bytes[0, plan.gridSize)`, the bytes `writeGridFlat` writes
 * for the same voxels in build order: the keys are read as they are, a leaf's first key decoded to open its nodes,
 * each voxel a bit of its leaf's mask; the leaf's bbox, voxel counts and (index grids) prefix sums from its mask words
 * when it closes. `plan` is `planOfCounts` of `countKeyLevels`' node counts (its voxel count is not read: the distinct
 * voxels are counted here). The caller checks `flatWritable`. Returns the distinct voxels.
 */
export function writeGridOfKeys(bytes: Uint8Array, sorted: SortedKeys, n: number, plan: GridPlan, layout: ValueLayout, template: Uint8Array, background = 0): number {
  const nodes = new FlatNodes(bytes, plan, layout, background);
  const { u32, i32, f32, fill } = nodes;
  const isIndex = layout.isIndex;
  const leafSize = layout.leafSize;
  const leafValues = layout.leafValues;
  const { keys, two, base, tables } = sorted;
  leafVoxelTable(sorted);
  const {
    leaf: [leafLo, leafHi],
    lower: [lowerLo, lowerHi],
    tile: [tileLo, tileHi],
    voxelShift,
    voxelBits,
  } = levelMasks(sorted);
  // the leaf voxel bits of a key (k, h) from bit voxelShift: in the low word, across both words, or in the high one
  const voxelMask = (1 << voxelBits) - 1;
  const lowMask = voxelShift >= 32 ? 0 : 0xffffffff;
  const lowShift = voxelShift & 31;
  const highMask = voxelShift === 0 ? 0 : 0xffffffff;
  const highLeft = voxelShift === 0 || voxelShift >= 32 ? 0 : 32 - voxelShift;
  const highRight = voxelShift >= 32 ? voxelShift - 32 : 0;
  const bx = base[0] as number;
  const by = base[1] as number;
  const bz = base[2] as number;
  const T = UNPACK_TABLE;
  let tile = -1;
  let lower = -1;
  let leaf = -1;
  let upperAt = 0;
  let lowerAt = 0;
  let leafAt = 0;
  let activeBefore = 0;
  const boxes = new Int32Array(18);
  for (const at of [ROOT_BOX, UPPER_BOX]) emptyBox(boxes, at);
  // the open lower node's box, in locals (it grows once per leaf)
  let lx0 = 2147483647, ly0 = 2147483647, lz0 = 2147483647, lx1 = -2147483648, ly1 = -2147483648, lz1 = -2147483648;
  // the open leaf's value mask (16 u32 words), its origin and the in-leaf x, y, z of its voxels as bit sets
  const mask = new Uint32Array(16);
  let ox = 0;
  let oy = 0;
  let oz = 0;
  let xs = 0;
  let ys = 0;
  let zs = 0;
  let pk = 0;
  let ph = 0;
  const step = two ? 2 : 1;
  for (let i = 0; i <= n; i++) {
    const end = i === n;
    const k = end ? 0 : (keys[step * i] as number);
    const h = end || !two ? 0 : (keys[step * i + 1] as number);
    const dl = (k ^ pk) >>> 0;
    const dh = (h ^ ph) >>> 0;
    const first = i === 0;
    const newLeaf = first || end || ((dl & leafLo) | (dh & leafHi)) !== 0;
    if (newLeaf) {
      const newLower = first || end || ((dl & lowerLo) | (dh & lowerHi)) !== 0;
      const newTile = newLower && (first || end || ((dl & tileLo) | (dh & tileHi)) !== 0);
      if (leaf >= 0) {
        // close the leaf: bbox from the in-leaf coordinate sets, flags, and (index grids) its value offset and the
        // per-word prefix counts from its mask words
        const x0 = ox + 31 - Math.clz32(xs & -xs);
        const y0 = oy + 31 - Math.clz32(ys & -ys);
        const z0 = oz + 31 - Math.clz32(zs & -zs);
        const x1 = ox + 31 - Math.clz32(xs);
        const y1 = oy + 31 - Math.clz32(ys);
        const z1 = oz + 31 - Math.clz32(zs);
        // every word of the leaf is written here (its memory may hold an earlier build's bytes): bbox, its extent
        // and flags, the mask from the open leaf's mask words (cleared for the next leaf), then the value fields
        const w = leafAt >>> 2;
        i32[w] = x0;
        i32[w + 1] = y0;
        i32[w + 2] = z0;
        u32[w + 3] = ((x1 - x0) | ((y1 - y0) << 8) | ((z1 - z0) << 16) | (GridFlags.HasBBox << 24)) >>> 0;
        const m = w + (Leaf.valueMask >>> 2);
        // the mask words (the open leaf's cleared for the next; a 64-bit word whose bit in xs is clear holds no voxel)
        // and the active voxels up to each 64-bit word (word x holds the voxels of in-leaf x): for index grids seven
        // cumulative 9-bit counts (after words 0..6) at bits 9w of a u64 (lo, hi)
        let count = 0;
        let lo = 0;
        let hi = 0;
        for (let word = 0; word < 8; word++) {
          const at = m + 2 * word;
          if ((xs & (1 << word)) === 0) {
            u32[at] = 0;
            u32[at + 1] = 0;
          } else {
            const a = mask[2 * word] as number;
            const b = mask[2 * word + 1] as number;
            u32[at] = a;
            u32[at + 1] = b;
            mask[2 * word] = 0;
            mask[2 * word + 1] = 0;
            count += popcount32(a) + popcount32(b);
          }
          if (word < 3) lo |= count << (9 * word);
          else if (word === 3) {
            lo |= count << 27;
            hi = count >>> 5;
          } else if (word < 7) hi |= count << (9 * word - 32);
        }
        const o = (leafAt + leafValues) >>> 2;
        for (let z = m + 16; z < o; z++) u32[z] = 0; // Float: the leaf's statistics
        if (isIndex) {
          // the value offset, then the cumulative counts
          const offset = activeBefore + 1;
          u32[o] = offset >>> 0;
          u32[o + 1] = Math.floor(offset / 4294967296);
          u32[o + 2] = lo >>> 0;
          u32[o + 3] = hi >>> 0;
          for (let z = o + 4, e = (leafAt + leafSize) >>> 2; z < e; z++) u32[z] = 0;
        }
        activeBefore += count;
        if (x0 < lx0) lx0 = x0;
        if (y0 < ly0) ly0 = y0;
        if (z0 < lz0) lz0 = z0;
        if (x1 > lx1) lx1 = x1;
        if (y1 > ly1) ly1 = y1;
        if (z1 > lz1) lz1 = z1;
        xs = ys = zs = 0;
      }
      if (newLower && lower >= 0) {
        const b = (lowerAt + Internal.bbox) >>> 2;
        i32[b] = lx0;
        i32[b + 1] = ly0;
        i32[b + 2] = lz0;
        i32[b + 3] = lx1;
        i32[b + 4] = ly1;
        i32[b + 5] = lz1;
        growBox(boxes, UPPER_BOX, lx0, ly0, lz0, lx1, ly1, lz1);
        lx0 = ly0 = lz0 = 2147483647;
        lx1 = ly1 = lz1 = -2147483648;
      }
      if (newTile && tile >= 0) closeBox(boxes, UPPER_BOX, ROOT_BOX, i32, (upperAt + Internal.bbox) >>> 2);
      if (end) break;
      // the leaf's origin from its key without the leaf voxel bits (the same bits above bit 3 as any of its voxels):
      // each key byte's bits of x, y and z from the unpacking table, the high word's only when the leaf key reaches it
      const kl = k & leafLo;
      const e0 = T + 3 * (kl & 255);
      const e1 = T + 768 + 3 * ((kl >>> 8) & 255);
      const e2 = T + 1536 + 3 * ((kl >>> 16) & 255);
      const e3 = T + 2304 + 3 * (kl >>> 24);
      let qx = (tables[e0] as number) | (tables[e1] as number) | (tables[e2] as number) | (tables[e3] as number);
      let qy = (tables[e0 + 1] as number) | (tables[e1 + 1] as number) | (tables[e2 + 1] as number) | (tables[e3 + 1] as number);
      let qz = (tables[e0 + 2] as number) | (tables[e1 + 2] as number) | (tables[e2 + 2] as number) | (tables[e3 + 2] as number);
      if (leafHi !== 0) {
        const kh = h & leafHi;
        const e4 = T + 3072 + 3 * (kh & 255);
        const e5 = T + 3840 + 3 * ((kh >>> 8) & 255);
        const e6 = T + 4608 + 3 * ((kh >>> 16) & 255);
        const e7 = T + 5376 + 3 * (kh >>> 24);
        qx |= (tables[e4] as number) | (tables[e5] as number) | (tables[e6] as number) | (tables[e7] as number);
        qy |= (tables[e4 + 1] as number) | (tables[e5 + 1] as number) | (tables[e6 + 1] as number) | (tables[e7 + 1] as number);
        qz |= (tables[e4 + 2] as number) | (tables[e5 + 2] as number) | (tables[e6 + 2] as number) | (tables[e7 + 2] as number);
      }
      // an axis inside one leaf is relative to its lowest voxel: rounding down to 8 gives the origin all the same
      const x = (qx + bx) & -8;
      const y = (qy + by) & -8;
      const z = (qz + bz) & -8;
      if (newTile) upperAt = nodes.openTile(++tile, x, y, z);
      if (newLower) lowerAt = nodes.openLower(++lower, upperAt, x, y, z);
      leafAt = nodes.linkLeaf(++leaf, lowerAt, x, y, z);
      if (!isIndex) f32.fill(fill ? background : 0, (leafAt + leafValues) >>> 2, ((leafAt + leafValues) >>> 2) + 512);
      ox = x;
      oy = y;
      oz = z;
    }
    const nv = tables[LEAF_VOXEL_TABLE + ((((k & lowMask) >>> lowShift) | (((h & highMask) << highLeft) >>> highRight)) & voxelMask)] as number;
    mask[nv >>> 5] = ((mask[nv >>> 5] as number) | (1 << (nv & 31))) >>> 0;
    xs |= 1 << (nv >>> 6);
    ys |= 1 << ((nv >>> 3) & 7);
    zs |= 1 << (nv & 7);
    if (!isIndex) f32[(leafAt + leafValues + 4 * nv) >>> 2] = 1;
    pk = k;
    ph = h;
  }
  nodes.finish(boxes, template, { ...plan, voxels: activeBefore });
  return activeBefore;
}
