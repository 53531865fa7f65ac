/** An exact non-negative rational number `n / d` in lowest terms (`d > 0`), used for rates, horizons and ratios. */
export interface Rational {
  /** Numerator (>= 0). */
  readonly n: bigint;
  /** Denominator (> 0). */
  readonly d: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/** `n / d` in lowest terms. `d` must be non-zero. */
export function rational(n: bigint, d = 1n): Rational {
  const sign = d < 0n ? -1n : 1n;
  const g = gcd(n, d) || 1n;
  return { n: (sign * n) / g, d: (sign * d) / g };
}

/** `a * b`, exact. */
export function multiplyRational(a: Rational, b: Rational): Rational {
  return rational(a.n * b.n, a.d * b.d);
}

/** `1 / a`; `a` must be non-zero. */
export function reciprocal(a: Rational): Rational {
  return rational(a.d, a.n);
}

/** Negative, zero or positive as `a` is below, equal to or above `b`. */
export function compareRational(a: Rational, b: Rational): number {
  const left = a.n * b.d;
  const right = b.n * a.d;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** The smallest integer not below `a`. */
export function ceilRational(a: Rational): bigint {
  const q = a.n / a.d;
  return a.n % a.d === 0n || a.n < 0n ? q : q + 1n;
}

/** `n/d` text, or `n` when `d` is 1. */
export function formatRational(a: Rational): string {
  return a.d === 1n ? String(a.n) : `${a.n}/${a.d}`;
}

/** Parses `n` or `n/d` (as written by `formatRational`); `null` for anything else. */
export function parseRational(text: string): Rational | null {
  const match = /^(\d+)(?:\/(\d+))?$/.exec(text);
  if (match === null || match[2] === '0') return null;
  return rational(BigInt(match[1] as string), BigInt(match[2] ?? '1'));
}
