import { ErrorCode, err, ok, type Result } from '@hs/streams';

/** A plain decimal number as XYZ files write it (`-1.5`, `.25`, `3e-2`): no hex, no Infinity or NaN. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * The positions of an XYZ text file's bytes: one point per line, `x y z` as plain decimal numbers
 * (separated by spaces, tabs or commas; extra columns ignored), blank lines and `#` comments skipped.
 * @returns x, y, z triplets (world units, as written), or InvalidArgument naming `path`, the 1-based line
 *   and its text when a line is not three finite decimal numbers.
 */
export function xyzPositions(path: string, bytes: Uint8Array): Result<Float64Array> {
  const values: number[] = [];
  for (const [n, line] of new TextDecoder().decode(bytes).split(/\r?\n/).entries()) {
    const text = line.trim();
    if (text === '' || text.startsWith('#')) continue;
    const fields = text.split(/[\s,]+/).slice(0, 3);
    if (fields.length < 3 || !fields.every((f) => DECIMAL.test(f) && Number.isFinite(Number(f)))) {
      return err(ErrorCode.InvalidArgument, `${path}:${n + 1}: expected "x y z" as three finite decimal numbers, got "${text}"`);
    }
    values.push(Number(fields[0]), Number(fields[1]), Number(fields[2]));
  }
  return ok(Float64Array.from(values));
}
