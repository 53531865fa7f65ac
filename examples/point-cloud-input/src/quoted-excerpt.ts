/** Most characters (UTF-16 code units) of a line `quotedExcerpt` quotes. */
export const MAX_EXCERPT_CHARACTERS = 40;

/**
 * Characters JSON.stringify leaves as they are but a terminal should not receive: DEL and the C1
 * controls, the line and paragraph separators, and U+FFFD (what bytes that are not UTF-8 decode to).
 */
const UNPRINTABLE = /[\u007f-\u009f\u2028\u2029\ufffd]/g;

/**
 * `text` as a double-quoted excerpt for a one-line error message: at most `MAX_EXCERPT_CHARACTERS`
 * characters (then `...` after the closing quote), every control character, DEL, C1 control and U+FFFD
 * escaped (`\n`, `\u0000`, `\ufffd`), so binary data given as text never reaches the terminal raw.
 */
export function quotedExcerpt(text: string): string {
  const cut = text.length > MAX_EXCERPT_CHARACTERS;
  const quoted = JSON.stringify(cut ? text.slice(0, MAX_EXCERPT_CHARACTERS) : text).replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return cut ? `${quoted}...` : quoted;
}
