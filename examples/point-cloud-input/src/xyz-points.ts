import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { quotedExcerpt } from './quoted-excerpt.js';

/** A plain decimal number as XYZ files write it (`-1.5`, `.25`, `3e-2`): no hex, no Infinity or NaN. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** The points of an XYZ file and the line each came from. */
export interface XyzPoints {
  /** x, y, z triplets, world units as written. */
  readonly positions: Float64Array;
  /** The 1-based line of each point (`lines[i]` holds point `i`). */
  readonly lines: Uint32Array;
}

/**
 * The positions of an XYZ text file's bytes: one point per line, `x y z` as plain decimal numbers
 * (separated by spaces, tabs or commas; extra columns ignored), blank lines and `#` comments skipped.
 * @returns the points and their 1-based lines, or InvalidArgument `<path>:<line>: expected "x y z" as
 *   three finite decimal numbers, got "<text>"` when a line is not three finite decimal numbers; the text
 *   is at most 40 characters of the line, control and undecodable characters escaped (see
 *   `quotedExcerpt`), so a binary file's bytes are never echoed raw.
 */
export function xyzPositions(path: string, bytes: Uint8Array): Result<XyzPoints> {
  const values: number[] = [];
  const lines: number[] = [];
  for (const [n, line] of new TextDecoder().decode(bytes).split(/\r?\n/).entries()) {
    const text = line.trim();
    if (text === '' || text.startsWith('#')) continue;
    const fields = text.split(/[\s,]+/).slice(0, 3);
    if (fields.length < 3 || !fields.every((f) => DECIMAL.test(f) && Number.isFinite(Number(f)))) {
      return err(ErrorCode.InvalidArgument, `${path}:${n + 1}: expected "x y z" as three finite decimal numbers, got ${quotedExcerpt(text)}`);
    }
    values.push(Number(fields[0]), Number(fields[1]), Number(fields[2]));
    lines.push(n + 1);
  }
  return ok({ positions: Float64Array.from(values), lines: Uint32Array.from(lines) });
}
