/** Bits set in a byte. */
export function popcount8(b: number): number {
  b = b - ((b >> 1) & 0x55);
  b = (b & 0x33) + ((b >> 2) & 0x33);
  return (b + (b >> 4)) & 0x0f;
}

/** Bits set in a 32-bit word. */
export function popcount32(w: number): number {
  w = w - ((w >>> 1) & 0x55555555);
  w = (w & 0x33333333) + ((w >>> 2) & 0x33333333);
  return Math.imul((w + (w >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Bit `i` of the little-endian bit mask whose byte 0 is at `maskStart`. */
export function testBit(v: DataView, maskStart: number, i: number): boolean {
  return (v.getUint8(maskStart + (i >> 3)) & (1 << (i & 7))) !== 0;
}

/** Sets bit `i` of the little-endian bit mask whose byte 0 is at `maskStart` of `bytes`. */
export function setBit(bytes: Uint8Array, maskStart: number, i: number): void {
  const at = maskStart + (i >> 3);
  bytes[at] = (bytes[at] as number) | (1 << (i & 7));
}
