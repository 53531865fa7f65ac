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
