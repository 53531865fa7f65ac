import { ErrorCode, err, ok, type Result } from '@hs/streams';

/**
 * A number as people type it: optional sign, digits with an optional fraction, an optional exponent
 * (`30`, `0.25`, `.5`, `5e-2`, `1e9`, `+2.5E3`). No hex, no `_` separators, no `NaN` or `Infinity` words,
 * no spaces, not empty.
 */
const STANDARD_NOTATION = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/;

/** What a numeric option accepts: a closed range, optionally only whole numbers, optionally strictly above a bound. */
export interface NumberRange {
  /** Smallest value accepted (inclusive); leave out when `above` gives the bound. */
  readonly min?: number;
  /** Values must be greater than this (exclusive), e.g. `0` for a voxel size. */
  readonly above?: number;
  /** Largest value accepted (inclusive); leave out for no bound but finiteness. */
  readonly max?: number;
  /** `true`: only whole numbers (`1e3` is 1000 and accepted, `2.5` is refused). */
  readonly integer?: boolean;
}

/**
 * The one number parser of hs's command lines: `text` in standard notation (see above), finite, within
 * `range`. `flag` names the option in the message (`--rate`).
 * @returns the value, or `InvalidArgument` `<flag> takes <what> from <min> to <max> in standard notation
 *   (...), got '<text>'`.
 * @example
 * ```ts
 * parseNumberOption('--sweeps', '1e2', { min: 1, max: 1_000_000, integer: true }); // ok(100)
 * parseNumberOption('--voxel-size', '5e-2', { above: 0 });                         // ok(0.05)
 * parseNumberOption('--rate', '1_000', { min: 1, max: 1000 });                     // InvalidArgument
 * ```
 */
export function parseNumberOption(flag: string, text: string, range: NumberRange): Result<number> {
  const value = STANDARD_NOTATION.test(text) ? Number(text) : Number.NaN;
  const inRange =
    Number.isFinite(value) &&
    (range.above === undefined || value > range.above) &&
    (range.min === undefined || value >= range.min) &&
    (range.max === undefined || value <= range.max) &&
    (range.integer !== true || Number.isInteger(value));
  if (inRange) return ok(value);
  const [what, notation] = range.integer === true ? ['a whole number', '30, 1e3'] : ['a finite number', '30, 0.25, 5e-2'];
  return err(ErrorCode.InvalidArgument, `${flag} takes ${what}${describeBounds(range)} in standard notation (${notation}), got '${text}'`);
}

/** ` from 1 to 10`, ` above 0`, ` above 0 and at most 5`, ` of at least 1`, or nothing. */
function describeBounds({ min, above, max }: NumberRange): string {
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  const low = above !== undefined ? ` above ${above}` : min !== undefined ? ` of at least ${min}` : '';
  if (max === undefined) return low;
  return low === '' ? ` of at most ${max}` : `${low} and at most ${max}`;
}
