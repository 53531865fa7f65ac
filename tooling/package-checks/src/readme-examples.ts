/**
 * README examples that CI runs. A package README marks its example with an HTML comment on the line
 * before a TypeScript fence (invisible where the README is rendered):
 *
 * ```md
 * <!-- readme-example prints="255" -->
 * ```ts
 * ...
 * ```
 * ```
 *
 * `prints` (optional) is text the example's standard output must contain. The fenced block itself is
 * what runs, so the README and the check cannot drift apart.
 */

/** One marked example. */
export interface ReadmeExample {
  /** The TypeScript source inside the fence. */
  readonly code: string;
  /** Text its standard output must contain, or null. */
  readonly prints: string | null;
  /** 1-based line of the marker in the README. */
  readonly line: number;
}

const MARKER = /^<!--\s*readme-example(?:\s+prints="([^"]*)")?\s*-->\s*$/;
const OPEN_FENCE = /^```(ts|typescript)\s*$/;
const CLOSE_FENCE = /^```\s*$/;

/**
 * Extracts every marked example of a README, in order.
 * @throws Error naming the line when a marker is not followed by a ```ts fence or the fence never closes.
 */
export function extractReadmeExamples(markdown: string): ReadmeExample[] {
  const lines = markdown.split(/\r?\n/);
  const examples: ReadmeExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = MARKER.exec(lines[i]!);
    if (marker === null) continue;
    const open = i + 1;
    if (open >= lines.length || !OPEN_FENCE.test(lines[open]!)) {
      throw new Error(`line ${i + 1}: a readme-example marker must be followed directly by a \`\`\`ts fence`);
    }
    let close = open + 1;
    while (close < lines.length && !CLOSE_FENCE.test(lines[close]!)) close++;
    if (close >= lines.length) throw new Error(`line ${open + 1}: the example's \`\`\`ts fence is never closed`);
    examples.push({ code: lines.slice(open + 1, close).join('\n') + '\n', prints: marker[1] ?? null, line: i + 1 });
    i = close;
  }
  return examples;
}
