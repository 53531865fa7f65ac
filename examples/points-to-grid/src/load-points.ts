import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { PLYLoader } from '@loaders.gl/ply';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import bunny from 'bunny';
import { fileSystemError } from './file-system-error.js';

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

/** A plain decimal number as XYZ files write it (`-1.5`, `.25`, `3e-2`): no hex, no Infinity or NaN. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Reads the vertices of a PLY file (ASCII or binary, parsed by @loaders.gl/ply; its vertex element must
 * have x, y and z properties) or an XYZ text file, `.xyz` or `.txt` (one point per line: x y z as plain
 * decimal numbers, extra columns ignored, `#` comments). Errors: InvalidArgument for an unknown
 * extension, a file that is not a readable PLY, a PLY vertex element missing a coordinate property, an
 * XYZ line that is not three finite decimal numbers (naming the line), or a file without points;
 * `fileSystemError`'s (NotFound for a missing file, the OS code otherwise) when the file cannot be read.
 */
export function loadPoints(path: string): Result<PointCloud> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (cause) {
    return fileSystemError('read', path, cause);
  }
  const ext = extname(path).toLowerCase();
  let positions: Float32Array | Float64Array;
  if (ext === '.ply') {
    const parsed = plyPositions(path, bytes);
    if (!parsed.ok) return parsed;
    positions = parsed.value;
  } else if (ext === '.xyz' || ext === '.txt') {
    const values: number[] = [];
    for (const [n, line] of bytes.toString('utf8').split(/\r?\n/).entries()) {
      const text = line.trim();
      if (text === '' || text.startsWith('#')) continue;
      const fields = text.split(/[\s,]+/).slice(0, 3);
      if (fields.length < 3 || !fields.every((f) => DECIMAL.test(f) && Number.isFinite(Number(f)))) {
        return err(ErrorCode.InvalidArgument, `${path}:${n + 1}: expected "x y z" as three finite decimal numbers, got "${text}"`);
      }
      values.push(...fields.map(Number));
    }
    positions = Float64Array.from(values);
  } else {
    return err(ErrorCode.InvalidArgument, `${path}: unknown point file type "${ext}"; use .ply, .xyz or .txt`);
  }
  if (positions.length === 0) return err(ErrorCode.InvalidArgument, `${path} holds no points`);
  return ok({ positions, source: path });
}

/** The vertex positions of a PLY file, after checking its magic and that the vertex element has x, y and z. */
function plyPositions(path: string, bytes: Buffer): Result<Float32Array> {
  if (!/^ply\r?\n/.test(bytes.subarray(0, 5).toString('latin1'))) {
    return err(ErrorCode.InvalidArgument, `${path} is not a readable PLY file: it does not start with the "ply" header line`);
  }
  let mesh: ReturnType<typeof PLYLoader.parseSync>;
  try {
    mesh = PLYLoader.parseSync(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer, {});
  } catch (cause) {
    return err(ErrorCode.InvalidArgument, `${path} is not a readable PLY file`, cause);
  }
  const header = mesh.loaderData as { elements?: { name: string; properties: { name: string }[] }[] } | undefined;
  const vertex = header?.elements?.find((e) => e.name === 'vertex');
  if (vertex === undefined) return err(ErrorCode.InvalidArgument, `${path} is not a readable PLY file: its header declares no vertex element`);
  const names = vertex.properties.map((p) => p.name);
  const missing = ['x', 'y', 'z'].filter((c) => !names.includes(c));
  if (missing.length > 0) {
    return err(ErrorCode.InvalidArgument, `${path}: the PLY vertex element has no ${missing.map((c) => `"${c}"`).join(', ')} property (it has ${names.join(', ') || 'none'}); points need x, y and z`);
  }
  return ok(mesh.attributes['POSITION']?.value as Float32Array);
}
