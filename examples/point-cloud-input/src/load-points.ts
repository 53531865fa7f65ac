/// <reference path="./bunny.d.ts" />
import { extname } from 'node:path';
import { ErrorCode, err, ok, readRegularFileSync, type Result } from '@hs/streams';
import bunny from 'bunny';
import { lasPositions } from './las-points.js';
import { plyPositions } from './ply-points.js';
import { xyzPositions } from './xyz-points.js';

/** A point cloud in world space: x, y, z triplets (world units of the source) and where it came from. */
export interface PointCloud {
  readonly positions: Float32Array | Float64Array;
  /** A label for reports: the file path, or the bundled cloud's name. */
  readonly source: string;
  /**
   * Where point `index` (0-based) was read, for messages about one point: `<file>:<line>` (1-based) for
   * XYZ/TXT files. Absent when the source has no finer place than `source` (the bunny, PLY, LAS).
   */
  readonly pointLocation?: (index: number) => string;
}

/** The bundled default: the Stanford bunny scan's vertices from the `bunny` package (1,839 points; about 9.9 x 9.7 x 7.5 units, y up). */
export function bunnyPoints(): PointCloud {
  const positions = new Float64Array(bunny.positions.length * 3);
  bunny.positions.forEach((p, i) => positions.set(p, 3 * i));
  return { positions, source: 'Stanford bunny (bunny package)' };
}

/** File extensions `loadPoints` reads, lower case. */
export const POINT_FILE_EXTENSIONS = ['.ply', '.xyz', '.txt', '.las'] as const;

/**
 * Reads a point file, chosen by extension (case-insensitive): `.ply` (ASCII or binary; the vertex
 * element's x, y, z, see `plyPositions`), `.xyz`/`.txt` (one `x y z` per line, see `xyzPositions`), or
 * `.las` (LAS 1.2 to 1.4, point data formats 0 to 3, see `lasPositions`).
 * @returns the cloud; `readRegularFileSync`'s error (NotFound for a missing file, the OS code otherwise) when
 *   the file cannot be read, InvalidArgument naming the type for a FIFO, folder or device; InvalidArgument for an unknown extension, a file holding no points, or the
 *   reader's own error; NotSupported from the LAS reader for LAZ or point formats above 3. Every message is
 *   one line and names the file.
 */
export function loadPoints(path: string): Result<PointCloud> {
  const read = readRegularFileSync(path); // a FIFO or device at `path` is refused, never waited on
  if (!read.ok) return read;
  const bytes: Uint8Array = read.value;
  const ext = extname(path).toLowerCase();
  const parsed = ext === '.xyz' || ext === '.txt' ? xyzCloud(path, bytes) : ext === '.ply' ? plyPositions(path, bytes) : ext === '.las' ? lasPositions(path, bytes) : null;
  if (parsed === null) return err(ErrorCode.InvalidArgument, `${path}: unknown point file type "${ext}"; use ${POINT_FILE_EXTENSIONS.join(', ')}`);
  if (!parsed.ok) return parsed;
  const cloud = ArrayBuffer.isView(parsed.value) ? { positions: parsed.value, source: path } : parsed.value;
  if (cloud.positions.length === 0) return err(ErrorCode.InvalidArgument, `${path} holds no points`);
  return ok(cloud);
}

/** An XYZ file's cloud, each point located at its file and line. */
function xyzCloud(path: string, bytes: Uint8Array): Result<PointCloud> {
  const points = xyzPositions(path, bytes);
  if (!points.ok) return points;
  const { positions, lines } = points.value;
  return ok({ positions, source: path, pointLocation: (index) => `${path}:${lines[index] ?? '?'}` });
}
