/** Most characters (UTF-16 code units) of a line `quotedExcerpt` quotes. */
export const MAX_EXCERPT_CHARACTERS = 40;

/** Code units JSON.stringify leaves as they are that are not printable ASCII: DEL and everything above it. */
const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/g;

/**
 * `text` as a double-quoted excerpt for a one-line error message: at most `MAX_EXCERPT_CHARACTERS`
 * characters (then `...` after the closing quote), with every character outside printable ASCII escaped
 * as JSON does (`\n`, `\u0000`, `\ufffd` for bytes that were not UTF-8, `\u00e9`), so binary data given as
 * text never reaches the terminal raw. Point files are ASCII numbers, so a readable line stays readable.
 */
export function quotedExcerpt(text: string): string {
  const cut = text.length > MAX_EXCERPT_CHARACTERS;
  const quoted = JSON.stringify(cut ? text.slice(0, MAX_EXCERPT_CHARACTERS) : text).replace(NOT_PRINTABLE_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return cut ? `${quoted}...` : quoted;
}
