/**
 * Packed voxel keys: a cloud's voxels as one or two u32 words holding only the key bits its bounding box spans (root
 * tile, upper, lower and leaf voxel fields, relative to the box), sorted by an LSD radix sort into NanoVDB's build
 * order (`sortVoxels` in `voxel-order.ts` unpacks them into coordinates) or into leaf order only, which the host
 * PointsToGrid builder writes its grid from (`writeGridOfKeys`).
 */
/** Offsets in the 65536-entry `counts` buffer of `sortVoxels`: digit histograms, then the key packing and unpacking tables. */
const PACK_TABLE = 16384; // [axis][chunk 0..3][byte] -> lo, hi key bits: 3 * 4 * 256 * 2 entries
export const UNPACK_TABLE = PACK_TABLE + 6144; // [key byte 0..7][byte] -> x, y, z bits: 8 * 256 * 3 entries
/** Offset in the `counts` buffer of the 512-entry table of `leafVoxelTable`. */
export const LEAF_VOXEL_TABLE = UNPACK_TABLE + 6144;
/** Widest digit of a packed-key pass. */
const DIGIT_BITS = 11;

/**
 * The packed key of a cloud: per axis `q = c - base` (the bounding box's low corner rounded down to the node that
 * first splits the axis), whose bit slices [12, ...), [7, 12), [3, 7), [0, 3) are that axis' root tile, upper, lower
 * and leaf fields relative to the box; the key concatenates, most significant first, the tile fields of x, y, z,
 * then the upper fields, the lower fields and the leaf voxel fields, each only as wide as the box needs. Two
 * voxels' packed keys compare as their build keys do, so sorting the packed keys sorts into build order. With
 * `leafOrder` the leaf voxel fields go on top instead: the bits below them compare as the voxels' leaves' build keys.
 * `null` when the box needs more than 64 key bits.
 */
function packPlan(coords: Int32Array, n: number, counts: Uint32Array, leafOrder: boolean): { bits: number; base: Int32Array; widths: Int32Array } | null {
  let x0 = 2147483647;
  let y0 = 2147483647;
  let z0 = 2147483647;
  let x1 = -2147483648;
  let y1 = -2147483648;
  let z1 = -2147483648;
  for (let i = 0; i < 3 * n; i += 3) {
    const x = coords[i] as number;
    const y = coords[i + 1] as number;
    const z = coords[i + 2] as number;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
    if (z < z0) z0 = z;
    if (z > z1) z1 = z;
  }
  const lows = [x0, y0, z0];
  const highs = [x1, y1, z1];
  const base = new Int32Array(3);
  const widths = new Int32Array(3);
  let bits = 0;
  for (let a = 0; a < 3; a++) {
    const lo = lows[a] as number;
    const hi = highs[a] as number;
    // the highest node level whose index differs across the box: its field is kept relative, the levels below whole
    const shift = Math.floor(lo / 4096) !== Math.floor(hi / 4096) ? 12 : lo >> 7 !== hi >> 7 ? 7 : lo >> 3 !== hi >> 3 ? 3 : 0;
    const b = Math.floor(lo / 2 ** shift) * 2 ** shift;
    const span = hi - b; // below 2^33
    base[a] = b | 0;
    widths[a] = span === 0 ? 0 : Math.floor(Math.log2(span)) + 1;
    if (2 ** widths[a]! <= span) widths[a]! += 1; // log2 rounding at powers of two
    bits += widths[a]!;
  }
  if (bits > 64) return null;
  // key bit position of each (axis, bit of q): levels from the leaf voxel fields up, z least significant in each
  // level; in leaf order the leaf voxel fields go on top instead (the sort passes then cover the bits below them)
  const position = new Int32Array(96).fill(-1);
  const LEVELS = [
    [0, 3],
    [3, 7],
    [7, 12],
    [12, 33],
  ] as const;
  let at = 0;
  for (const [from, to] of leafOrder ? [...LEVELS.slice(1), LEVELS[0]] : LEVELS) {
    for (let a = 2; a >= 0; a--) {
      for (let j = from; j < Math.min(to, widths[a] as number); j++) position[32 * a + j] = at++;
    }
  }
  counts.fill(0, PACK_TABLE, UNPACK_TABLE + 6144);
  for (let a = 0; a < 3; a++) {
    for (let j = 0; j < (widths[a] as number); j++) {
      const p = position[32 * a + j] as number;
      const chunk = j >> 3;
      const bit = 1 << (j & 7);
      for (let v = 0; v < 256; v++) {
        if ((v & bit) === 0) continue;
        const e = PACK_TABLE + 2 * (256 * (4 * a + chunk) + v);
        if (p < 32) counts[e] = ((counts[e] as number) | (1 << p)) >>> 0;
        else counts[e + 1] = ((counts[e + 1] as number) | (1 << (p - 32))) >>> 0;
      }
      // unpacking: key byte p >> 3, bit p & 7 holds bit j of axis a
      const keyByte = p >> 3;
      const keyBit = 1 << (p & 7);
      for (let v = 0; v < 256; v++) {
        if ((v & keyBit) === 0) continue;
        const e = UNPACK_TABLE + 3 * (256 * keyByte + v) + a;
        counts[e] = ((counts[e] as number) | (1 << j)) >>> 0;
      }
    }
  }
  return { bits, base, widths };
}

/** The digit passes over the low `bits` bits of a packed key: [word, shift, mask] each, least significant first, digits at most 11 bits. */
function digitPasses(bits: number): [number, number, number][] {
  const passes: [number, number, number][] = [];
  for (let word = 0; word < 2; word++) {
    const wordBits = Math.max(0, Math.min(32, bits - 32 * word));
    if (wordBits === 0) continue;
    const count = Math.ceil(wordBits / DIGIT_BITS);
    let shift = 0;
    for (let d = 0; d < count; d++) {
      const width = Math.ceil((wordBits - shift) / (count - d));
      passes.push([word, shift, width === 32 ? 0xffffffff : (1 << width) - 1]);
      shift += width;
    }
  }
  return passes;
}

/**
 * Key bits of a packed key's leaf voxel fields (`voxel`), lower-node fields (`lower`) and upper-node fields (`upper`),
 * from the low end (the root tile fields take the rest), for a box of per-axis `widths`.
 */
function levelBits(widths: Int32Array): { voxel: number; lower: number; upper: number } {
  let voxel = 0;
  let lower = 0;
  let upper = 0;
  for (let a = 0; a < 3; a++) {
    const width = widths[a] as number;
    voxel += Math.min(3, width);
    lower += Math.max(0, Math.min(4, width - 3));
    upper += Math.max(0, Math.min(5, width - 7));
  }
  return { voxel, lower, upper };
}

/** The lo and hi words of the mask of key bits from bit `from` up. */
function maskFrom(from: number): [number, number] {
  return [from >= 32 ? 0 : (0xffffffff << from) >>> 0, from <= 32 ? 0xffffffff : from >= 64 ? 0 : (0xffffffff << (from - 32)) >>> 0];
}

/** The lo and hi words of the mask of key bits `[from, to)`. */
function maskRange(from: number, to: number): [number, number] {
  const [fl, fh] = maskFrom(from);
  const [tl, th] = maskFrom(to);
  return [(fl & ~tl) >>> 0, (fh & ~th) >>> 0];
}

/**
 * Where the levels sit in the keys of `sorted`: lo, hi masks of the bits that differ between two keys in other leaves
 * (`leaf`), other lower nodes (`lower`) and other root tiles (`tile`), and the lowest bit of the leaf voxel fields
 * (`voxelShift`: 0 in build order, above the other fields in leaf order) and their width (`voxelBits`).
 */
export function levelMasks(sorted: SortedKeys): { leaf: [number, number]; lower: [number, number]; tile: [number, number]; voxelShift: number; voxelBits: number } {
  const { voxel, lower, upper } = levelBits(sorted.widths);
  if (!sorted.leafOrder) return { leaf: maskFrom(voxel), lower: maskFrom(voxel + lower), tile: maskFrom(voxel + lower + upper), voxelShift: 0, voxelBits: voxel };
  const top = sorted.bits - voxel;
  return { leaf: maskRange(0, top), lower: maskRange(lower, top), tile: maskRange(lower + upper, top), voxelShift: top, voxelBits: voxel };
}

/** Scratch of `sortVoxels`: two key buffers and the index ping-pong buffer. */
export interface SortScratch {
  /**
   * Packed keys (n words, or 2n when a key takes two: lo, hi pairs). May be the first bytes of `sorted`'s memory
   * (the sorted voxels are unpacked last to first, so a key is read before its bytes are overwritten).
   */
  readonly keys: Uint32Array;
  /** The keys' ping-pong copy (as many words), apart from `keys` and `sorted`. */
  readonly keys2: Uint32Array;
  /** The input indices' ping-pong copy (n words; unused without `index`). */
  readonly index2: Uint32Array;
}

/** Packed keys sorted by `sortPackedKeys`, and what reading them back takes. */
export interface SortedKeys {
  /** The sorted keys: n words, or lo, hi pairs when `two`. */
  readonly keys: Uint32Array;
  /** Whether a key takes two words. */
  readonly two: boolean;
  /** Key bits. */
  readonly bits: number;
  /** Whether the keys are in leaf order, their leaf voxel fields on top (see `sortPackedKeys`). */
  readonly leafOrder: boolean;
  /** Per axis, the coordinate a key's bits are relative to (see `packPlan`). */
  readonly base: Int32Array;
  /** Per axis, the key bits of its coordinate. */
  readonly widths: Int32Array;
  /** The key and unpacking tables, in the caller's `counts` (see `sortVoxels`). */
  readonly tables: Uint32Array;
}

/**
 * The packed-key radix sort of `sortVoxels` without the unpacking: packs the keys of `n` voxels (x, y, z triplets in
 * `coords`) and sorts them, moving the input index of each voxel to `index` when it is not null. `order` 'build': into
 * build order, the keys `sortVoxels` sorts. 'leaf': into leaf order only (the voxels of a leaf in any order), the
 * leaf voxel fields packed above the others so that the passes skip them (`levelMasks` says where each level sits).
 * Scratch as for `sortVoxels`. Null, writing nothing, when the box spans more than 64 key bits.
 */
export function sortPackedKeys(coords: Int32Array, n: number, index: Uint32Array | null, scratch: SortScratch, counts: Uint32Array, order: 'build' | 'leaf'): SortedKeys | null {
  const leafOrder = order === 'leaf';
  const plan = packPlan(coords, n, counts, leafOrder);
  if (plan === null) return null;
  const { bits, base } = plan;
  const passes = digitPasses(leafOrder ? bits - levelBits(plan.widths).voxel : bits);
  const two = bits > 32;
  const { keys, keys2, index2 } = scratch;
  const bx = base[0] as number;
  const by = base[1] as number;
  const bz = base[2] as number;
  const chunks = Math.max(1, Math.ceil(Math.max(plan.widths[0]!, plan.widths[1]!, plan.widths[2]!) / 8));
  const P = PACK_TABLE;
  // pack the keys and count every pass' digits in one read of the points
  counts.fill(0, 0, 6 * 2048);
  // pass p's digit: ((word p ? hi : lo) >>> shift p) & mask p; absent passes count into a spare histogram row
  const np = passes.length;
  const pass = (p: number, k: 0 | 1 | 2): number => (p < np ? (passes[p] as [number, number, number])[k] : 0);
  const w0 = pass(0, 0), s0 = pass(0, 1), m0 = pass(0, 2);
  const w1 = pass(1, 0), s1 = pass(1, 1), m1 = pass(1, 2);
  const w2 = pass(2, 0), s2 = pass(2, 1), m2 = pass(2, 2);
  const w3 = pass(3, 0), s3 = pass(3, 1), m3 = pass(3, 2);
  const w4 = pass(4, 0), s4 = pass(4, 1), m4 = pass(4, 2);
  const w5 = pass(5, 0), s5 = pass(5, 1), m5 = pass(5, 2);
  for (let i = 0; i < n; i++) {
    const qx = ((coords[3 * i] as number) - bx) >>> 0;
    const qy = ((coords[3 * i + 1] as number) - by) >>> 0;
    const qz = ((coords[3 * i + 2] as number) - bz) >>> 0;
    let kl: number;
    let kh: number;
    if (chunks <= 2) {
      const ex0 = P + 2 * (qx & 255);
      const ex1 = P + 512 + 2 * ((qx >>> 8) & 255);
      const ey0 = P + 2048 + 2 * (qy & 255);
      const ey1 = P + 2560 + 2 * ((qy >>> 8) & 255);
      const ez0 = P + 4096 + 2 * (qz & 255);
      const ez1 = P + 4608 + 2 * ((qz >>> 8) & 255);
      kl = ((counts[ex0] as number) | (counts[ex1] as number) | (counts[ey0] as number) | (counts[ey1] as number) | (counts[ez0] as number) | (counts[ez1] as number)) >>> 0;
      kh = ((counts[ex0 + 1] as number) | (counts[ex1 + 1] as number) | (counts[ey0 + 1] as number) | (counts[ey1 + 1] as number) | (counts[ez0 + 1] as number) | (counts[ez1 + 1] as number)) >>> 0;
    } else {
      kl = 0;
      kh = 0;
      for (let c = 0; c < 4; c++) {
        const s = 8 * c;
        const ex = P + 2 * (256 * c + ((qx >>> s) & 255));
        const ey = P + 2 * (256 * (4 + c) + ((qy >>> s) & 255));
        const ez = P + 2 * (256 * (8 + c) + ((qz >>> s) & 255));
        kl |= (counts[ex] as number) | (counts[ey] as number) | (counts[ez] as number);
        kh |= (counts[ex + 1] as number) | (counts[ey + 1] as number) | (counts[ez + 1] as number);
      }
      kl >>>= 0;
      kh >>>= 0;
    }
    if (two) {
      keys[2 * i] = kl;
      keys[2 * i + 1] = kh;
    } else {
      keys[i] = kl;
    }
    counts[((w0 === 0 ? kl : kh) >>> s0) & m0]! += 1;
    counts[2048 + (((w1 === 0 ? kl : kh) >>> s1) & m1)]! += 1;
    counts[4096 + (((w2 === 0 ? kl : kh) >>> s2) & m2)]! += 1;
    counts[6144 + (((w3 === 0 ? kl : kh) >>> s3) & m3)]! += 1;
    if (np > 4) {
      counts[8192 + (((w4 === 0 ? kl : kh) >>> s4) & m4)]! += 1;
      counts[10240 + (((w5 === 0 ? kl : kh) >>> s5) & m5)]! += 1;
    }
  }
  let src = keys;
  let dst = keys2;
  let srcIndex: Uint32Array | null = null; // null: the identity (no pass has moved a point yet)
  const withIndex = index !== null;
  let dstIndex = index ?? index2;
  for (let p = 0; p < np; p++) {
    const [word, shift, mask] = passes[p] as [number, number, number];
    const h = 2048 * p;
    if (counts[h + (((src[two ? word : 0] as number) >>> shift) & mask)] === n) continue; // one digit for every point
    let sum = 0;
    for (let d = h; d <= h + mask; d++) {
      const c = counts[d] as number;
      counts[d] = sum;
      sum += c;
    }
    if (two) {
      for (let i = 0; i < n; i++) {
        const kl = src[2 * i] as number;
        const kh = src[2 * i + 1] as number;
        const at = h + (((word === 0 ? kl : kh) >>> shift) & mask);
        const to = counts[at] as number;
        counts[at] = to + 1;
        dst[2 * to] = kl;
        dst[2 * to + 1] = kh;
        if (withIndex) dstIndex[to] = srcIndex === null ? i : (srcIndex[i] as number);
      }
    } else {
      for (let i = 0; i < n; i++) {
        const kl = src[i] as number;
        const at = h + ((kl >>> shift) & mask);
        const to = counts[at] as number;
        counts[at] = to + 1;
        dst[to] = kl;
        if (withIndex) dstIndex[to] = srcIndex === null ? i : (srcIndex[i] as number);
      }
    }
    const t = src;
    src = dst;
    dst = t;
    const tIndex = srcIndex;
    srcIndex = dstIndex;
    dstIndex = tIndex === null ? (dstIndex === index2 ? (index as Uint32Array) : index2) : tIndex;
  }
  if (index !== null) {
    if (srcIndex === null) for (let i = 0; i < n; i++) index[i] = i;
    else if (srcIndex !== index) index.set(srcIndex.subarray(0, n));
  }
  return { keys: src, two, bits, leafOrder, base, widths: plan.widths, tables: counts };
}

/**
 * Fills `sorted.tables[LEAF_VOXEL_TABLE + v]`, for every value `v` of a key's leaf voxel bits (its lowest
 * `levelBits(widths).voxel` bits), with that voxel's index in its leaf, `(x & 7) << 6 | (y & 7) << 3 | (z & 7)`.
 */
export function leafVoxelTable(sorted: SortedKeys): void {
  const { widths, base, tables } = sorted;
  const wz = Math.min(3, widths[2] as number);
  const wy = Math.min(3, widths[1] as number);
  const wx = Math.min(3, widths[0] as number);
  for (let v = 0; v < 1 << (wx + wy + wz); v++) {
    // the leaf fields hold z's low bits, then y's, then x's; an axis whose voxels share one leaf is relative to its
    // lowest voxel (a base that is not a multiple of 8), and stays inside that leaf
    const lz = ((v & ((1 << wz) - 1)) + (base[2] as number)) & 7;
    const ly = (((v >>> wz) & ((1 << wy) - 1)) + (base[1] as number)) & 7;
    const lx = (((v >>> (wz + wy)) & ((1 << wx) - 1)) + (base[0] as number)) & 7;
    tables[LEAF_VOXEL_TABLE + v] = (lx << 6) | (ly << 3) | lz;
  }
}

/**
 * The distinct leaves, lower nodes and root tiles of `n` keys sorted by `sortPackedKeys` (into leaf or build order),
 * written to `levels` [1..3]; with keys in build order also the distinct voxels to `levels[0]` (what `planGrid` counts).
 */
export function countKeyLevels(sorted: SortedKeys, n: number, levels: Float64Array): void {
  levels.fill(0);
  if (n === 0) return;
  const {
    leaf: [leafLo, leafHi],
    lower: [lowerLo, lowerHi],
    tile: [tileLo, tileHi],
  } = levelMasks(sorted);
  const keys = sorted.keys;
  let voxels = 1;
  let leaves = 1;
  let lowers = 1;
  let tiles = 1;
  const step = sorted.two ? 2 : 1;
  for (let i = step; i < step * n; i += step) {
    const dl = ((keys[i] as number) ^ (keys[i - step] as number)) >>> 0;
    const dh = sorted.two ? ((keys[i + 1] as number) ^ (keys[i - 1] as number)) >>> 0 : 0;
    if ((dl | dh) === 0) continue;
    voxels++;
    if (((dl & leafLo) | (dh & leafHi)) === 0) continue;
    leaves++;
    if (((dl & lowerLo) | (dh & lowerHi)) === 0) continue;
    lowers++;
    if (((dl & tileLo) | (dh & tileHi)) !== 0) tiles++;
  }
  levels[0] = voxels;
  levels[1] = leaves;
  levels[2] = lowers;
  levels[3] = tiles;
}
