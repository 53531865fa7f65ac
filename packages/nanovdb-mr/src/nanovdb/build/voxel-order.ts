/**
 * Sorts voxel coordinates into NanoVDB's breadth-first build order with an LSD radix sort of point
 * indices: root tiles by their key biased by 2^31 (so negative coordinates come first), then within a
 * tile by upper-node table index, lower-node table index and leaf voxel index — the order NanoVDB's GPU
 * builder produces, so hs's host and GPU grids can be byte-identical.
 */

import { UNPACK_TABLE, countKeyLevels, sortPackedKeys, type SortScratch } from './packed-voxel-keys.js';

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

