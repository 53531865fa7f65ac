import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { docsMarkdown, quotedIn, snippetsOf } from './snippets.js';

const docsDir = fileURLToPath(new URL('..', import.meta.url));
const root = resolve(docsDir, '..');
const snippets = docsMarkdown(docsDir).flatMap((guide) => snippetsOf(root, guide));

describe('snippet matching', () => {
  it('finds a run of lines, shifted by one indentation, and nothing else', () => {
    const file = ['class A {', '  run(): void {', '    go();', '', '  }', '}'];
    expect(quotedIn(['run(): void {', '  go();', '', '}'], file)).toBe(true);
    expect(quotedIn(['run(): void {', '  stop();'], file)).toBe(false);
    expect(quotedIn(['go();', '}'], file)).toBe(false);
    expect(quotedIn([], file)).toBe(false);
  });
});

describe('guide snippets quote their source files verbatim', () => {
  it('has snippets', () => expect(snippets.length).toBeGreaterThan(0));
  for (const snippet of snippets) {
    it(`${snippet.guide}:${snippet.line} quotes ${snippet.source}`, () => {
      const file = readFileSync(join(root, snippet.source), 'utf8').split(/\r?\n/);
      expect(quotedIn(snippet.lines, file), `the fenced lines are not a run of lines in ${snippet.source}; copy them again from the file`).toBe(true);
    });
  }
});

describe('every example program is quoted by a guide', () => {
  for (const file of readdirSync(join(docsDir, 'examples')).filter((f) => f.endsWith('.ts'))) {
    it(`docs/examples/${file}`, () => {
      expect(snippets.some((s) => s.source === `docs/examples/${file}`)).toBe(true);
    });
  }
});
