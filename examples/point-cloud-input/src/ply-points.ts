import { PLYLoader } from '@loaders.gl/ply';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { quotedExcerpt } from './quoted-excerpt.js';

/** The line that ends a PLY header. */
const END_HEADER = 'end_header';

/**
 * The vertex positions of a PLY file's bytes (ASCII or binary, parsed by @loaders.gl/ply), after
 * checking the `ply` magic line and that the vertex element has x, y and z properties.
 * The header is checked to be text first (the parser echoes header lines it does not know, and its
 * reasons quote them), so binary data never reaches the terminal.
 * @returns x, y, z triplets, or InvalidArgument naming `path`: no `ply` header line, no `end_header` line,
 *   a header byte that is not printable ASCII (its line and value named), a file the parser rejects (its
 *   reason quoted, at most 40 characters; a binary file that ends early is reported as truncated), no vertex element,
 *   a vertex element without x, y or z (naming the properties it has), or fewer vertices than the header
 *   declares (a truncated ASCII file), or a vertex with a NaN or infinite coordinate (0-based index).
 */
export function plyPositions(path: string, bytes: Uint8Array): Result<Float32Array | Float64Array> {
  if (!/^ply\r?\n/.test(new TextDecoder('latin1').decode(bytes.subarray(0, 5)))) {
    return err(ErrorCode.InvalidArgument, `${path} is not a readable PLY file: it does not start with the "ply" header line`);
  }
  const problem = headerProblem(bytes);
  if (problem !== null) return err(ErrorCode.InvalidArgument, `${path} is not a readable PLY file: ${problem}`);
  let mesh: ReturnType<typeof PLYLoader.parseSync>;
  try {
    mesh = PLYLoader.parseSync(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, {});
  } catch (cause) {
    const reason = cause instanceof RangeError ? 'it ends before the data its header declares (truncated?)' : `the parser reports ${quotedExcerpt(cause instanceof Error ? cause.message : String(cause))}`;
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

/**
 * What is wrong with the header (the bytes before the `end_header` line), or `null`: no `end_header`, or a
 * byte other than tab, line feed, carriage return and printable ASCII (named with its 1-based line).
 */
function headerProblem(bytes: Uint8Array): string | null {
  const end = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(END_HEADER);
  if (end < 0) return `its header has no "${END_HEADER}" line`;
  let line = 1;
  for (let i = 0; i < end; i++) {
    const b = bytes[i]!;
    if (b === 10) line += 1;
    else if (b !== 9 && b !== 13 && (b < 32 || b > 126)) return `header line ${line} holds byte 0x${b.toString(16).padStart(2, '0')}, not printable text (binary data?)`;
  }
  return null;
}
