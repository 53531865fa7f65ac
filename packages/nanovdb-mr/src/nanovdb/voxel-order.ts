/**
 * Sorts voxel coordinates into NanoVDB's breadth-first build order with an LSD radix sort of point
 * indices: root tiles by their key biased by 2^31 (so negative coordinates come first), then within a
 * tile by upper-node table index, lower-node table index and leaf voxel index — the order NanoVDB's GPU
 * builder produces, so hs's host and GPU grids can be byte-identical.
 */

/** 32-bit words of the 99-bit build key per point, least significant first. */
export const KEY_WORDS = 5;

/** Radix passes, least significant first: [key word, shift, mask] (16-bit or narrower digits). */
const PASSES: readonly (readonly [number, number, number])[] = [
  [0, 0, 0xffff], // lower index << 9 | leaf voxel index: 21 bits
  [0, 16, 0x1f],
  [1, 0, 0x7fff], // upper index: 15 bits
  [2, 0, 0xffff], // biased tile z: 21 bits
  [2, 16, 0x1f],
  [3, 0, 0xffff], // biased tile y
  [3, 16, 0x1f],
  [4, 0, 0xffff], // biased tile x
  [4, 16, 0x1f],
];

/** `(c + 2^31) >> 12` as an unsigned 21-bit number. */
function tileCoord(c: number): number {
  return ((c ^ 0x80000000) >>> 12) & 0x1fffff;
}

/**
 * Returns `order` filled with the point indices 0..n-1 sorted by build key (stable). `coords` holds x,
 * y, z triplets of `n = order.length` voxels; `keys` (`KEY_WORDS * n` words) receives each point's key,
 * `scratch` (n entries) is the ping-pong buffer and `counts` (65536 entries) the digit histogram. The
 * result is whichever of `order` and `scratch` holds the final pass. Digits equal for every point are
 * skipped, so a cloud inside one root tile costs three passes.
 */
export function sortByBuildKey(coords: Int32Array, keys: Uint32Array, order: Uint32Array, scratch: Uint32Array, counts: Uint32Array): Uint32Array {
  const n = order.length;
  for (let i = 0; i < n; i++) {
    const x = coords[3 * i] as number;
    const y = coords[3 * i + 1] as number;
    const z = coords[3 * i + 2] as number;
    const k = KEY_WORDS * i;
    keys[k] = (((((x & 127) >> 3) << 8) | (((y & 127) >> 3) << 4) | ((z & 127) >> 3)) << 9) | ((x & 7) << 6) | ((y & 7) << 3) | (z & 7);
    keys[k + 1] = (((x & 4095) >> 7) << 10) | (((y & 4095) >> 7) << 5) | ((z & 4095) >> 7);
    keys[k + 2] = tileCoord(z);
    keys[k + 3] = tileCoord(y);
    keys[k + 4] = tileCoord(x);
    order[i] = i;
  }
  let src = order;
  let dst = scratch;
  for (const [word, shift, mask] of PASSES) {
    counts.fill(0);
    const first = n === 0 ? 0 : ((keys[word] as number) >>> shift) & mask;
    let varies = false;
    for (let i = 0; i < n; i++) {
      const d = ((keys[KEY_WORDS * i + word] as number) >>> shift) & mask;
      counts[d] = (counts[d] as number) + 1;
      if (d !== first) varies = true;
    }
    if (!varies) continue;
    let sum = 0;
    for (let d = 0; d <= mask; d++) {
      const c = counts[d] as number;
      counts[d] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const p = src[i] as number;
      const d = ((keys[KEY_WORDS * p + word] as number) >>> shift) & mask;
      dst[counts[d] as number] = p;
      counts[d] = (counts[d] as number) + 1;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}
