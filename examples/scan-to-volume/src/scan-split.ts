import { ErrorCode, HsError } from '@hs/streams';

/** Most scans one sweep is split into. */
export const MAX_SCANS = 3600;

/** A cloud split into scans: each scan's points, packed x, y, z float64 triplets, in sweep order. */
export interface ScanSweep {
  readonly scans: readonly Float64Array[];
  /** Points in the largest scan; sizes the source's pool slots. */
  readonly maxScanPoints: number;
}

/**
 * Splits a cloud into `scanCount` scans the way a spinning scanner at the cloud's centre would take
 * them: scan k holds the points whose azimuth about the z axis through the centre of the x-y bounding
 * box lies in `[k, k + 1) * 360 / scanCount` degrees (0 degrees along +x, counter-clockwise), in their
 * original order. Deterministic; a scan may be empty. Coordinates stay float64, as read (float32 would
 * move georeferenced LAS coordinates, millions of metres, by up to half a metre).
 * @throws HsError InvalidArgument when `scanCount` is not an integer from 1 to `MAX_SCANS` or the
 *   coordinate count is not a multiple of 3.
 */
export function splitIntoScans(positions: Float32Array | Float64Array, scanCount: number): ScanSweep {
  if (!Number.isSafeInteger(scanCount) || scanCount < 1 || scanCount > MAX_SCANS) {
    throw new HsError(ErrorCode.InvalidArgument, `splitIntoScans: scanCount must be an integer from 1 to ${MAX_SCANS}, got ${scanCount}`);
  }
  if (positions.length % 3 !== 0) throw new HsError(ErrorCode.InvalidArgument, `splitIntoScans: ${positions.length} coordinates is not a whole number of x, y, z triplets`);
  const n = positions.length / 3;
  let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    const x = positions[3 * i]!;
    const y = positions[3 * i + 1]!;
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  const cx = (minX + maxX) / 2;
  const cy = (minY + maxY) / 2;
  const sector = new Uint32Array(n);
  const counts = new Uint32Array(scanCount);
  for (let i = 0; i < n; i++) {
    const turns = Math.atan2(positions[3 * i + 1]! - cy, positions[3 * i]! - cx) / (2 * Math.PI);
    const k = Math.min(scanCount - 1, Math.floor((turns < 0 ? turns + 1 : turns) * scanCount));
    sector[i] = k;
    counts[k]! += 1;
  }
  const scans = Array.from(counts, (c) => new Float64Array(3 * c));
  const filled = new Uint32Array(scanCount);
  for (let i = 0; i < n; i++) {
    const k = sector[i]!;
    const scan = scans[k]!;
    const at = 3 * filled[k]!;
    scan[at] = positions[3 * i]!;
    scan[at + 1] = positions[3 * i + 1]!;
    scan[at + 2] = positions[3 * i + 2]!;
    filled[k]! += 1;
  }
  return { scans, maxScanPoints: counts.reduce((m, c) => Math.max(m, c), 0) };
}
