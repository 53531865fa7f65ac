/**
 * Sorts voxel coordinates into NanoVDB's breadth-first build order with an LSD radix sort of point
 * indices: root tiles by their key biased by 2^31 (so negative coordinates come first), then within a
 * tile by upper-node table index, lower-node table index and leaf voxel index — the order NanoVDB's GPU
 * builder produces, so hs's host and GPU grids can be byte-identical.
 */

/** The 16-bit (or narrower) digits of the 99-bit build key, least significant first. */
const DIGITS: readonly ((x: number, y: number, z: number) => number)[] = [
  // lower index (12 bits) << 9 | leaf index (9 bits): 21 bits, in two digits
  (x, y, z) => ((lowerIndex(x, y, z) << 9) | voxelIndex(x, y, z)) & 0xffff,
  (x, y, z) => ((lowerIndex(x, y, z) << 9) | voxelIndex(x, y, z)) >>> 16,
  // upper index: 15 bits
  (x, y, z) => upperIndex(x, y, z),
  // biased tile coordinates, 21 bits each, z then y then x
  (_x, _y, z) => tileCoord(z) & 0xffff,
  (_x, _y, z) => tileCoord(z) >>> 16,
  (_x, y) => tileCoord(y) & 0xffff,
  (_x, y) => tileCoord(y) >>> 16,
  (x) => tileCoord(x) & 0xffff,
  (x) => tileCoord(x) >>> 16,
];

/** `(c + 2^31) >> 12` as an unsigned 21-bit number. */
export function tileCoord(c: number): number {
  return ((c ^ 0x80000000) >>> 12) & 0x1fffff;
}

function upperIndex(x: number, y: number, z: number): number {
  return (((x & 4095) >> 7) << 10) | (((y & 4095) >> 7) << 5) | ((z & 4095) >> 7);
}

function lowerIndex(x: number, y: number, z: number): number {
  return (((x & 127) >> 3) << 8) | (((y & 127) >> 3) << 4) | ((z & 127) >> 3);
}

function voxelIndex(x: number, y: number, z: number): number {
  return ((x & 7) << 6) | ((y & 7) << 3) | (z & 7);
}

/**
 * Returns `order` filled with the point indices 0..n-1 sorted by build key (stable), using `scratch`
 * (same length) as the ping-pong buffer and `counts` (65536 entries) for the digit histogram; the result
 * is whichever of `order` and `scratch` holds the final pass.
 * `coords` holds x, y, z triplets of `n = order.length` voxels. Digits that are equal for every point are
 * skipped, so a cloud inside one tile costs three passes.
 */
export function sortByBuildKey(coords: Int32Array, order: Uint32Array, scratch: Uint32Array, counts: Uint32Array): Uint32Array {
  const n = order.length;
  for (let i = 0; i < n; i++) order[i] = i;
  let src = order;
  let dst = scratch;
  for (const digit of DIGITS) {
    counts.fill(0);
    let first = -1;
    let varies = false;
    for (let i = 0; i < n; i++) {
      const d = digit(coords[3 * i] as number, coords[3 * i + 1] as number, coords[3 * i + 2] as number);
      counts[d] = (counts[d] as number) + 1;
      if (first < 0) first = d;
      else if (d !== first) varies = true;
    }
    if (!varies) continue;
    let sum = 0;
    for (let d = 0; d < 65536; d++) {
      const c = counts[d] as number;
      counts[d] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const p = src[i] as number;
      const d = digit(coords[3 * p] as number, coords[3 * p + 1] as number, coords[3 * p + 2] as number);
      dst[counts[d] as number] = p;
      counts[d] = (counts[d] as number) + 1;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}
