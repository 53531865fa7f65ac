import { ErrorCode, err, ok, type Result } from '@hs/streams';

/** Smallest public header of each LAS 1.x minor version this reader accepts, in bytes. */
const HEADER_BYTES: Readonly<Record<number, number>> = { 2: 227, 3: 235, 4: 375 };
/** Smallest point record of point data formats 0 to 3, in bytes (X, Y, Z, ... [, GPS time] [, RGB]). */
const RECORD_BYTES = [20, 28, 26, 34] as const;

/**
 * The positions of a LAS file's bytes (ASPRS LAS 1.2, 1.3 or 1.4, point data formats 0 to 3,
 * uncompressed), read with this reader rather than a library: each point's X, Y and Z are int32 counts
 * at the start of its record, scaled and offset by the header's per-axis `scale` and `offset`
 * (`x = X * scale + offset`, world units as the file defines them). Records may be longer than the
 * format's minimum (extra bytes are skipped). LAS 1.4 files whose legacy point count is 0 use the 64-bit
 * count. Variable-length records before the points are skipped through the header's point-data offset.
 * @returns x, y, z triplets; InvalidArgument naming `path` for a file that does not start with `LASF`, a
 *   header shorter than its version needs or pointing outside the file, a record length below its
 *   format's minimum, a non-finite or zero scale or a non-finite offset, or a point count that needs more
 *   bytes than the file holds (both sizes named); NotSupported for another LAS version, a compressed
 *   (LAZ) file, or point data formats 4 and above; ResourceExhausted when the coordinates do not fit in memory.
 */
export function lasPositions(path: string, bytes: Uint8Array): Result<Float64Array> {
  const fail = (code: ErrorCode, detail: string): Result<never> => err(code, `${path}: ${detail}`);
  if (bytes.byteLength < 4 || new TextDecoder('latin1').decode(bytes.subarray(0, 4)) !== 'LASF') {
    return fail(ErrorCode.InvalidArgument, 'not a LAS file: it does not start with "LASF"');
  }
  if (bytes.byteLength < HEADER_BYTES[2]!) return fail(ErrorCode.InvalidArgument, `truncated LAS header: ${bytes.byteLength} bytes, a LAS header needs at least ${HEADER_BYTES[2]}`);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const major = v.getUint8(24);
  const minor = v.getUint8(25);
  const minHeader = major === 1 ? HEADER_BYTES[minor] : undefined;
  if (minHeader === undefined) return fail(ErrorCode.NotSupported, `LAS version ${major}.${minor} is not supported; this reader takes LAS 1.2, 1.3 and 1.4`);
  const headerSize = v.getUint16(94, true);
  const pointOffset = v.getUint32(96, true);
  if (headerSize < minHeader || headerSize > bytes.byteLength) {
    return fail(ErrorCode.InvalidArgument, `LAS ${major}.${minor} header size ${headerSize} is outside ${minHeader}..${bytes.byteLength} (the file size)`);
  }
  if (pointOffset < headerSize || pointOffset > bytes.byteLength) {
    return fail(ErrorCode.InvalidArgument, `LAS point data offset ${pointOffset} is outside ${headerSize}..${bytes.byteLength} (header size to file size)`);
  }
  const formatByte = v.getUint8(104);
  if (formatByte >= 64) return fail(ErrorCode.NotSupported, `compressed LAS (LAZ, point format byte ${formatByte}) is not supported; decompress it to LAS first`);
  const minRecord = RECORD_BYTES[formatByte as 0 | 1 | 2 | 3];
  if (minRecord === undefined) return fail(ErrorCode.NotSupported, `LAS point data format ${formatByte} is not supported; this reader takes formats 0 to 3`);
  const recordLength = v.getUint16(105, true);
  if (recordLength < minRecord) {
    return fail(ErrorCode.InvalidArgument, `LAS point record length ${recordLength} is shorter than point data format ${formatByte} needs (${minRecord} bytes)`);
  }
  const legacyCount = v.getUint32(107, true);
  const count = minor === 4 && legacyCount === 0 ? v.getBigUint64(247, true) : BigInt(legacyCount);
  const available = BigInt(bytes.byteLength - pointOffset);
  if (count * BigInt(recordLength) > available) {
    return fail(ErrorCode.InvalidArgument, `truncated LAS point data: the header declares ${count} points of ${recordLength} bytes from offset ${pointOffset}, the file holds ${available} bytes there`);
  }
  const scale = [v.getFloat64(131, true), v.getFloat64(139, true), v.getFloat64(147, true)] as const;
  const offset = [v.getFloat64(155, true), v.getFloat64(163, true), v.getFloat64(171, true)] as const;
  if (!scale.every((s) => Number.isFinite(s) && s !== 0) || !offset.every(Number.isFinite)) {
    return fail(ErrorCode.InvalidArgument, `LAS scale (${scale.join(', ')}) must be finite and non-zero and offset (${offset.join(', ')}) finite`);
  }
  const n = Number(count);
  let positions: Float64Array;
  try {
    positions = new Float64Array(3 * n);
  } catch (cause) {
    return err(ErrorCode.ResourceExhausted, `${path}: cannot hold ${n} points (${24 * n} bytes of coordinates) in memory`, cause);
  }
  for (let i = 0, at = pointOffset; i < n; i++, at += recordLength) {
    positions[3 * i] = v.getInt32(at, true) * scale[0] + offset[0];
    positions[3 * i + 1] = v.getInt32(at + 4, true) * scale[1] + offset[1];
    positions[3 * i + 2] = v.getInt32(at + 8, true) * scale[2] + offset[2];
  }
  return ok(positions);
}
