import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Guide snippets that quote a file. A guide puts a marker on the line before a fence:
 *
 * ```md
 * <!-- snippet: docs/examples/invert-operator.ts -->
 * ```ts
 * ...lines copied from that file...
 * ```
 * ```
 *
 * The path is relative to the repository root. The fenced lines must appear in that file as one run
 * of consecutive lines; the whole run may be indented in the file (a method quoted from a class).
 */
export interface Snippet {
  /** Markdown file, relative to the repository root. */
  readonly guide: string;
  /** 1-based line of the marker. */
  readonly line: number;
  /** Quoted file, relative to the repository root. */
  readonly source: string;
  /** The fenced lines. */
  readonly lines: readonly string[];
}

const MARKER = /^<!--\s*snippet:\s*(\S+)\s*-->\s*$/;
const OPEN_FENCE = /^```\w*\s*$/;
const CLOSE_FENCE = /^```\s*$/;

/** Every snippet of one markdown file. @throws Error naming the line of a marker without a fence. */
export function snippetsOf(root: string, guidePath: string): Snippet[] {
  const guide = relative(root, guidePath);
  const lines = readFileSync(guidePath, 'utf8').split(/\r?\n/);
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = MARKER.exec(lines[i]!);
    if (marker === null) continue;
    if (!OPEN_FENCE.test(lines[i + 1] ?? '')) throw new Error(`${guide}:${i + 1}: a snippet marker must be followed directly by a fence`);
    let close = i + 2;
    while (close < lines.length && !CLOSE_FENCE.test(lines[close]!)) close++;
    if (close >= lines.length) throw new Error(`${guide}:${i + 2}: the snippet's fence is never closed`);
    snippets.push({ guide, line: i + 1, source: marker[1]!, lines: lines.slice(i + 2, close) });
    i = close;
  }
  return snippets;
}

/**
 * True when `snippet` appears in `fileLines` as consecutive lines, each file line being the snippet
 * line with the same extra indentation in front (blank lines match blank lines).
 */
export function quotedIn(snippet: readonly string[], fileLines: readonly string[]): boolean {
  if (snippet.length === 0) return false;
  const first = snippet[0]!;
  for (let start = 0; start + snippet.length <= fileLines.length; start++) {
    const candidate = fileLines[start]!;
    if (!candidate.endsWith(first) || candidate.slice(0, candidate.length - first.length).trim() !== '') continue;
    const indent = candidate.slice(0, candidate.length - first.length);
    if (snippet.every((line, j) => (line.trim() === '' ? fileLines[start + j]!.trim() === '' : fileLines[start + j] === indent + line))) return true;
  }
  return false;
}

/** Markdown files of the docs folder (guides, README, spec names), not generated output or dependencies. */
export function docsMarkdown(docsDir: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'api') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk(docsDir);
  return found.sort();
}
