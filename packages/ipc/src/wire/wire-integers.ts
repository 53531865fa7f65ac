/** Largest u64 wire value accepted: 2^53 - 1, so every field is an exact JS number. */
const TWO_POW_32 = 4294967296;
/** High word limit of a safe u64 (2^53 - 1 has high word 0x1fffff). */
const MAX_SAFE_HIGH_WORD = 0x1fffff;

/** Reads a little-endian u64 at `offset` as a number, or -1 when it exceeds 2^53 - 1. Allocates nothing. */
export function readSafeU64(view: DataView, offset: number): number {
  const low = view.getUint32(offset, true);
  const high = view.getUint32(offset + 4, true);
  return high > MAX_SAFE_HIGH_WORD ? -1 : high * TWO_POW_32 + low;
}

/** Writes a non-negative safe integer as a little-endian u64 at `offset`. */
export function writeSafeU64(view: DataView, offset: number, value: number): void {
  view.setUint32(offset, value % TWO_POW_32, true);
  view.setUint32(offset + 4, Math.floor(value / TWO_POW_32), true);
}

/** True when bytes `from` (inclusive) to `to` (exclusive) of the view are all zero. */
export function allZero(view: DataView, from: number, to: number): boolean {
  let offset = from;
  for (; offset + 4 <= to; offset += 4) if (view.getUint32(offset, true) !== 0) return false;
  for (; offset < to; offset++) if (view.getUint8(offset) !== 0) return false;
  return true;
}
