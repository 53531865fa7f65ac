import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { PLYLoader } from '@loaders.gl/ply';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import bunny from 'bunny';

/** A point cloud in world space: x, y, z triplets and where it came from. */
export interface PointCloud {
  readonly positions: Float32Array | Float64Array;
  readonly source: string;
}

/** The bundled default: the Stanford bunny scan's vertices (1,839 points, about 10 units tall). */
export function bunnyPoints(): PointCloud {
  const positions = new Float64Array(bunny.positions.length * 3);
  bunny.positions.forEach((p, i) => positions.set(p, 3 * i));
  return { positions, source: 'Stanford bunny (bunny package)' };
}

/**
 * Reads the vertices of a PLY file (ASCII or binary, parsed by @loaders.gl/ply) or an XYZ text file
 * (one point per line: x y z, extra columns ignored, `#` comments). InvalidArgument for an unknown
 * extension or a file without points; NotFound when the file cannot be read.
 */
export function loadPoints(path: string): Result<PointCloud> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (cause) {
    return err(ErrorCode.NotFound, `cannot read ${path}`, cause);
  }
  const ext = extname(path).toLowerCase();
  let positions: Float32Array | Float64Array;
  if (ext === '.ply') {
    try {
      const mesh = PLYLoader.parseSync(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer, {});
      positions = mesh.attributes['POSITION']?.value as Float32Array;
    } catch (cause) {
      return err(ErrorCode.InvalidArgument, `${path} is not a readable PLY file`, cause);
    }
  } else if (ext === '.xyz' || ext === '.txt') {
    const values: number[] = [];
    for (const [n, line] of bytes.toString('utf8').split(/\r?\n/).entries()) {
      const text = line.trim();
      if (text === '' || text.startsWith('#')) continue;
      const fields = text.split(/[\s,]+/).slice(0, 3).map(Number);
      if (fields.length < 3 || fields.some((f) => Number.isNaN(f))) return err(ErrorCode.InvalidArgument, `${path}:${n + 1}: expected "x y z", got "${text}"`);
      values.push(...fields);
    }
    positions = Float64Array.from(values);
  } else {
    return err(ErrorCode.InvalidArgument, `${path}: unknown point file type "${ext}"; use .ply or .xyz`);
  }
  if (positions === undefined || positions.length === 0) return err(ErrorCode.InvalidArgument, `${path} holds no points`);
  return ok({ positions, source: path });
}
