import { PLYLoader } from '@loaders.gl/ply';
import { ErrorCode, err, ok, type Result } from '@hs/streams';

/**
 * The vertex positions of a PLY file's bytes (ASCII or binary, parsed by @loaders.gl/ply), after
 * checking the `ply` magic line and that the vertex element has x, y and z properties.
 * @returns x, y, z triplets, or InvalidArgument naming `path`: no `ply` header line, a file the parser
 *   rejects (with its reason; a binary file that ends early is reported as truncated), no vertex element,
 *   a vertex element without x, y or z (naming the properties it has), or fewer vertices than the header
 *   declares (a truncated ASCII file), or a vertex with a NaN or infinite coordinate (0-based index).
 */
export function plyPositions(path: string, bytes: Uint8Array): Result<Float32Array | Float64Array> {
  if (!/^ply\r?\n/.test(new TextDecoder('latin1').decode(bytes.subarray(0, 5)))) {
    return err(ErrorCode.InvalidArgument, `${path} is not a readable PLY file: it does not start with the "ply" header line`);
  }
  let mesh: ReturnType<typeof PLYLoader.parseSync>;
  try {
    mesh = PLYLoader.parseSync(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, {});
  } catch (cause) {
    const reason = cause instanceof RangeError ? 'it ends before the data its header declares (truncated?)' : cause instanceof Error ? cause.message : String(cause);
    return err(ErrorCode.InvalidArgument, `${path} is not a readable PLY file: ${reason}`, cause);
  }
  const header = mesh.loaderData as { elements?: { name: string; count: number; properties: { name: string }[] }[] } | undefined;
  const vertex = header?.elements?.find((e) => e.name === 'vertex');
  if (vertex === undefined) return err(ErrorCode.InvalidArgument, `${path} is not a readable PLY file: its header declares no vertex element`);
  const names = vertex.properties.map((p) => p.name);
  const missing = ['x', 'y', 'z'].filter((c) => !names.includes(c));
  if (missing.length > 0) {
    return err(ErrorCode.InvalidArgument, `${path}: the PLY vertex element has no ${missing.map((c) => `"${c}"`).join(', ')} property (it has ${names.join(', ') || 'none'}); points need x, y and z`);
  }
  if (vertex.count === 0) return ok(new Float32Array(0));
  const positions = mesh.attributes['POSITION']?.value;
  if (!(positions instanceof Float32Array || positions instanceof Float64Array)) return err(ErrorCode.InvalidArgument, `${path} is not a readable PLY file: the parser found no vertex positions`);
  if (positions.length !== vertex.count * 3) {
    return err(ErrorCode.InvalidArgument, `${path} is truncated: its header declares ${vertex.count} vertices, the file holds ${Math.floor(positions.length / 3)}`);
  }
  const bad = positions.findIndex((value) => !Number.isFinite(value));
  if (bad >= 0) return err(ErrorCode.InvalidArgument, `${path}: vertex ${Math.floor(bad / 3)} has a non-finite coordinate (NaN or infinite); remove it from the file`);
  return ok(positions);
}
