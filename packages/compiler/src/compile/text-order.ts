/** Ordinal (code-unit) comparison of two strings: the one order every canonical listing in a plan uses. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
