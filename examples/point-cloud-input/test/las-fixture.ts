/** What `lasFile` writes. */
export interface LasFixture {
  readonly minor: 2 | 3 | 4;
  readonly format: 0 | 1 | 2 | 3;
  readonly points: readonly (readonly [number, number, number])[];
  /** Bytes appended to every record beyond the format's minimum; default 0. */
  readonly extraBytes?: number;
  /** Per-axis offset; default 0. Scale is 0.001 on every axis. */
  readonly offset?: readonly [number, number, number];
  /** LAS 1.4: write 0 as the legacy count and the real count in the 64-bit field. */
  readonly legacyCountZero?: boolean;
}

/**
 * An uncompressed LAS file written field by field from the ASPRS layout (public header, no VLRs, point
 * records whose X, Y, Z are int32 counts of 0.001 units from the offset), for reader tests.
 */
export function lasFile(f: LasFixture): Uint8Array {
  const record = [20, 28, 26, 34][f.format]! + (f.extraBytes ?? 0);
  const header = { 2: 227, 3: 235, 4: 375 }[f.minor];
  const offset = f.offset ?? [0, 0, 0];
  const bytes = new Uint8Array(header + record * f.points.length);
  const v = new DataView(bytes.buffer);
  bytes.set(new TextEncoder().encode('LASF'), 0);
  v.setUint8(24, 1);
  v.setUint8(25, f.minor);
  v.setUint16(94, header, true);
  v.setUint32(96, header, true);
  v.setUint8(104, f.format);
  v.setUint16(105, record, true);
  v.setUint32(107, f.legacyCountZero ? 0 : f.points.length, true);
  if (f.minor === 4) v.setBigUint64(247, BigInt(f.points.length), true);
  for (let a = 0; a < 3; a++) {
    v.setFloat64(131 + 8 * a, 0.001, true);
    v.setFloat64(155 + 8 * a, offset[a]!, true);
  }
  f.points.forEach((p, i) => {
    for (let a = 0; a < 3; a++) v.setInt32(header + i * record + 4 * a, Math.round((p[a]! - offset[a]!) / 0.001), true);
    // Intensity and the first attribute bytes get a non-zero pattern so a reader that misplaces X, Y, Z shows it.
    v.setUint16(header + i * record + 12, 0xbeef, true);
  });
  return bytes;
}
