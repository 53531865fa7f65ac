/**
 * Sorts voxel coordinates into NanoVDB's breadth-first build order with an LSD radix sort of point
 * indices: root tiles by their key biased by 2^31 (so negative coordinates come first), then within a
 * tile by upper-node table index, lower-node table index and leaf voxel index — the order NanoVDB's GPU
 * builder produces, so hs's host and GPU grids can be byte-identical.
 */

/** 32-bit words of the 99-bit build key per point, least significant first. */
export const KEY_WORDS = 5;

/**
 * Radix passes, least significant first: [key word, shift, mask, histogram offset]. The 21-bit fields
 * take an 11-bit and a 10-bit digit and the 15-bit upper index an 8-bit and a 7-bit one, so the ten digit
 * histograms (12 672 entries) lie side by side in the histogram buffer, are all counted in one read of
 * the keys, and a small cloud's prefix sums stay short.
 */
const PASSES: readonly (readonly [number, number, number, number])[] = [
  [0, 0, 0x7ff, 0], // lower index << 9 | leaf voxel index: 21 bits
  [0, 11, 0x3ff, 2048],
  [1, 0, 0xff, 3072], // upper index: 15 bits
  [1, 8, 0x7f, 3328],
  [2, 0, 0x7ff, 3456], // biased tile z: 21 bits
  [2, 11, 0x3ff, 5504],
  [3, 0, 0x7ff, 6528], // biased tile y
  [3, 11, 0x3ff, 8576],
  [4, 0, 0x7ff, 9600], // biased tile x
  [4, 11, 0x3ff, 11648],
];
/** Histogram entries the passes use. */
const HISTOGRAM_ENTRIES = 12672;

/** `(c + 2^31) >> 12` as an unsigned 21-bit number. */
function tileCoord(c: number): number {
  return ((c ^ 0x80000000) >>> 12) & 0x1fffff;
}

/**
 * Returns `order` filled with the point indices 0..n-1 sorted by build key (stable). `coords` holds x,
 * y, z triplets of `n = order.length` voxels; `keys` (`KEY_WORDS * n` words) receives each point's key,
 * `scratch` (n entries) is the ping-pong buffer and `counts` (65536 entries) holds the digit histograms.
 * The result is whichever of `order` and `scratch` holds the final pass. All ten histograms are counted
 * while the keys are made (the counts follow `PASSES`); a digit equal for every point (its count is n)
 * is skipped, so a cloud inside one root tile and one upper node costs two scatter passes.
 */
export function sortByBuildKey(coords: Int32Array, keys: Uint32Array, order: Uint32Array, scratch: Uint32Array, counts: Uint32Array): Uint32Array {
  const n = order.length;
  counts.fill(0, 0, HISTOGRAM_ENTRIES);
  for (let i = 0; i < n; i++) {
    const x = coords[3 * i] as number;
    const y = coords[3 * i + 1] as number;
    const z = coords[3 * i + 2] as number;
    const k = KEY_WORDS * i;
    const lower = (((((x & 127) >> 3) << 8) | (((y & 127) >> 3) << 4) | ((z & 127) >> 3)) << 9) | ((x & 7) << 6) | ((y & 7) << 3) | (z & 7);
    const upper = (((x & 4095) >> 7) << 10) | (((y & 4095) >> 7) << 5) | ((z & 4095) >> 7);
    const tz = tileCoord(z);
    const ty = tileCoord(y);
    const tx = tileCoord(x);
    keys[k] = lower;
    keys[k + 1] = upper;
    keys[k + 2] = tz;
    keys[k + 3] = ty;
    keys[k + 4] = tx;
    order[i] = i;
    counts[lower & 0x7ff]! += 1;
    counts[2048 + (lower >>> 11)]! += 1;
    counts[3072 + (upper & 0xff)]! += 1;
    counts[3328 + (upper >>> 8)]! += 1;
    counts[3456 + (tz & 0x7ff)]! += 1;
    counts[5504 + (tz >>> 11)]! += 1;
    counts[6528 + (ty & 0x7ff)]! += 1;
    counts[8576 + (ty >>> 11)]! += 1;
    counts[9600 + (tx & 0x7ff)]! += 1;
    counts[11648 + (tx >>> 11)]! += 1;
  }
  let src = order;
  let dst = scratch;
  if (n < 2) return src;
  for (const [word, shift, mask, base] of PASSES) {
    if (counts[base + (((keys[word] as number) >>> shift) & mask)] === n) continue;
    let sum = 0;
    for (let d = base; d <= base + mask; d++) {
      const c = counts[d] as number;
      counts[d] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const p = src[i] as number;
      const at = base + (((keys[KEY_WORDS * p + word] as number) >>> shift) & mask);
      const to = counts[at] as number;
      dst[to] = p;
      counts[at] = to + 1;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/** True when sorted voxels `i` and `j` (x, y, z triplets in `sorted`) are the same voxel. */
export function sameVoxel(sorted: Int32Array, i: number, j: number): boolean {
  return sorted[3 * i] === sorted[3 * j] && sorted[3 * i + 1] === sorted[3 * j + 1] && sorted[3 * i + 2] === sorted[3 * j + 2];
}

/** True when sorted voxels `i` and `j` lie in the same node of `2^shift` voxels per side (3: leaf, 7: lower, 12: upper). */
export function sameNode(sorted: Int32Array, i: number, j: number, shift: number): boolean {
  return (
    (sorted[3 * i] as number) >> shift === (sorted[3 * j] as number) >> shift &&
    (sorted[3 * i + 1] as number) >> shift === (sorted[3 * j + 1] as number) >> shift &&
    (sorted[3 * i + 2] as number) >> shift === (sorted[3 * j + 2] as number) >> shift
  );
}

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
 * voxels' packed keys compare as their build keys do, so sorting the packed keys sorts into build order.
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

/**
 * Sorts `n` voxels (x, y, z triplets in `coords`) into NanoVDB's build order, the order `sortByBuildKey` gives
 * (stable: the points of one voxel keep their input order), with an LSD radix sort of packed keys (see
 * `packPlan`): one or two u32 words per point, only the bits the cloud's bounding box spans, in 11-bit digit passes
 * (a 1024^3 cube across the origin takes four), each moving keys (and indices) sequentially.
 * Scratch (`SortScratch`) and `counts` (65536 entries) come from the caller. Writes the sorted voxels to `sorted`
 * (3n, apart from `coords`) and the input index of each sorted voxel to `index` (n; `null`: not wanted, and the
 * passes move keys only).
 * With `levels` (4 entries) also counts the distinct voxels, leaves, lower nodes and root tiles of the sorted voxels
 * (what `planGrid` counts) from the sorted keys' level fields.
 * Returns false, writing nothing, when the box spans more than 64 key bits (voxels more than about 2^21 apart on
 * every axis): then `sortByBuildKey` sorts.
 */
export function sortVoxels(
  coords: Int32Array,
  n: number,
  sorted: Int32Array,
  index: Uint32Array | null,
  scratch: SortScratch,
  counts: Uint32Array,
  levels: Float64Array | null = null,
): boolean {
  if (levels !== null) levels.fill(0);
  if (n === 0) return true;
  const packed = sortPackedKeys(coords, n, index, scratch, counts, 'build');
  if (packed === null) return false;
  const { keys: src, two, base } = packed;
  const bx = base[0] as number;
  const by = base[1] as number;
  const bz = base[2] as number;
  // the level totals from the sorted keys, before the unpacking overwrites them
  if (levels !== null) countKeyLevels(packed, n, levels);
  // unpack the sorted keys into coordinates, last to first (`keys` may lie under `sorted`): each key byte's bits of
  // x, y and z from a table
  const U = UNPACK_TABLE;
  if (!two) {
    for (let i = n - 1; i >= 0; i--) {
      const k = src[i] as number;
      const e0 = U + 3 * (k & 255);
      const e1 = U + 768 + 3 * ((k >>> 8) & 255);
      const e2 = U + 1536 + 3 * ((k >>> 16) & 255);
      const e3 = U + 2304 + 3 * (k >>> 24);
      sorted[3 * i] = ((counts[e0] as number) | (counts[e1] as number) | (counts[e2] as number) | (counts[e3] as number)) + bx;
      sorted[3 * i + 1] = ((counts[e0 + 1] as number) | (counts[e1 + 1] as number) | (counts[e2 + 1] as number) | (counts[e3 + 1] as number)) + by;
      sorted[3 * i + 2] = ((counts[e0 + 2] as number) | (counts[e1 + 2] as number) | (counts[e2 + 2] as number) | (counts[e3 + 2] as number)) + bz;
    }
  } else {
    for (let i = n - 1; i >= 0; i--) {
      const k = src[2 * i] as number;
      const h = src[2 * i + 1] as number;
      const e0 = U + 3 * (k & 255);
      const e1 = U + 768 + 3 * ((k >>> 8) & 255);
      const e2 = U + 1536 + 3 * ((k >>> 16) & 255);
      const e3 = U + 2304 + 3 * (k >>> 24);
      const e4 = U + 3072 + 3 * (h & 255);
      const e5 = U + 3840 + 3 * ((h >>> 8) & 255);
      const e6 = U + 4608 + 3 * ((h >>> 16) & 255);
      const e7 = U + 5376 + 3 * (h >>> 24);
      const x = (counts[e0] as number) | (counts[e1] as number) | (counts[e2] as number) | (counts[e3] as number) | (counts[e4] as number) | (counts[e5] as number) | (counts[e6] as number) | (counts[e7] as number);
      const y =
        (counts[e0 + 1] as number) | (counts[e1 + 1] as number) | (counts[e2 + 1] as number) | (counts[e3 + 1] as number) | (counts[e4 + 1] as number) | (counts[e5 + 1] as number) | (counts[e6 + 1] as number) | (counts[e7 + 1] as number);
      const z =
        (counts[e0 + 2] as number) | (counts[e1 + 2] as number) | (counts[e2 + 2] as number) | (counts[e3 + 2] as number) | (counts[e4 + 2] as number) | (counts[e5 + 2] as number) | (counts[e6 + 2] as number) | (counts[e7 + 2] as number);
      sorted[3 * i] = x + bx;
      sorted[3 * i + 1] = y + by;
      sorted[3 * i + 2] = z + bz;
    }
  }
  return true;
}

/**
 * Sorts `n` voxels into build order whatever box they span: `sortVoxels` (packed keys), or past 64 key bits
 * `sortByBuildKey` and a gather of the coordinates. Writes the sorted voxels to `sorted` (3n) and returns the input
 * index of each sorted voxel (`order`, or `scratch` when the five-word sort ended there). `keys` holds
 * `KEY_WORDS * n` words, `order` and `scratch` n each, `counts` 65536; all apart from `sorted` and `coords`.
 */
export function sortVoxelsAnyWidth(coords: Int32Array, n: number, sorted: Int32Array, order: Uint32Array, keys: Uint32Array, scratch: Uint32Array, counts: Uint32Array): Uint32Array {
  const packed = { keys: keys.subarray(0, 2 * n), keys2: keys.subarray(2 * n, 4 * n), index2: scratch };
  if (sortVoxels(coords, n, sorted, order, packed, counts)) return order;
  const byKey = sortByBuildKey(coords, keys, order, scratch, counts);
  for (let j = 0; j < n; j++) {
    const p = byKey[j] as number;
    sorted[3 * j] = coords[3 * p] as number;
    sorted[3 * j + 1] = coords[3 * p + 1] as number;
    sorted[3 * j + 2] = coords[3 * p + 2] as number;
  }
  return byKey;
}

