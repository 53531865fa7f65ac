import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasSources, publicPackages, repositoryRoot } from '../src/public-packages.js';

/** Longest source file that needs no reason. */
const MAX_LINES = 500;
/** A file longer than `MAX_LINES` says why in a comment of this form in its first five lines. */
const REASON = /^\s*\/\/ Over 500 lines: \S.{10,}/m;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.[cm]?ts$/.test(entry.name) ? [path] : [];
  });
}

/** The files of `files` over `MAX_LINES` lines whose first five lines give no reason. */
function unexplained(files: readonly { path: string; text: string }[]): string[] {
  return files
    .filter(({ text }) => text.split('\n').length > MAX_LINES && !REASON.test(text.split('\n').slice(0, 5).join('\n')))
    .map(({ path }) => path);
}

describe(`source files stay under ${MAX_LINES} lines, or say why`, () => {
  it('flags a long file without a reason and accepts one with it (the check itself can fail)', () => {
    const long = 'const x = 1;\n'.repeat(MAX_LINES + 1);
    expect(unexplained([{ path: 'a.ts', text: long }])).toEqual(['a.ts']);
    expect(unexplained([{ path: 'b.ts', text: `// Over 500 lines: one suite of the whole contract.\n${long}` }])).toEqual([]);
    expect(unexplained([{ path: 'c.ts', text: 'const x = 1;\n'.repeat(MAX_LINES - 1) }])).toEqual([]);
  });

  it(`every file in packages/*/src over ${MAX_LINES} lines gives its reason`, () => {
    const files = publicPackages()
      .filter(hasSources)
      .flatMap((p) => sourceFiles(join(p.dir, 'src')))
      .map((path) => ({ path: relative(repositoryRoot, path), text: readFileSync(path, 'utf8') }));
    expect(unexplained(files)).toEqual([]);
  });
});
