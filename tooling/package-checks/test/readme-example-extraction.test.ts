import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { extractReadmeExamples } from '../src/readme-examples.js';
import { readmeCompilerOptions } from '../src/readme-installs.js';

describe('extractReadmeExamples', () => {
  it('takes the fenced block after each marker, with its expected output', () => {
    const readme = [
      '# pkg',
      '```ts',
      'not marked',
      '```',
      '<!-- readme-example prints="255" -->',
      '```ts',
      'console.log(255);',
      '```',
      'text',
      '<!-- readme-example -->',
      '```typescript',
      'const a = 1;',
      '',
      'void a;',
      '```',
    ].join('\n');
    expect(extractReadmeExamples(readme)).toEqual([
      { code: 'console.log(255);\n', prints: '255', line: 5 },
      { code: 'const a = 1;\n\nvoid a;\n', prints: null, line: 10 },
    ]);
  });

  it('finds nothing in a README without markers', () => {
    expect(extractReadmeExamples('# pkg\n\n```ts\nx\n```\n')).toEqual([]);
  });

  it('rejects a marker that is not followed by a TypeScript fence', () => {
    expect(() => extractReadmeExamples('<!-- readme-example -->\n\n```ts\nx\n```')).toThrow(/line 1: .*followed directly by a ```ts fence/);
    expect(() => extractReadmeExamples('<!-- readme-example -->\n```js\nx\n```')).toThrow(/line 1/);
  });

  it('rejects a fence that never closes', () => {
    expect(() => extractReadmeExamples('a\n<!-- readme-example -->\n```ts\nx\n')).toThrow(/line 3: .*never closed/);
  });
});

describe('readmeCompilerOptions', () => {
  it("reads the README's TypeScript settings, which name the libraries hs's declarations need", () => {
    const options = readmeCompilerOptions(readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8'));
    expect(options['lib']).toContain('ESNext.Disposable');
    expect(options['types']).toContain('node');
    expect(options['strict']).toBe(true);
  });

  it('refuses a README without exactly one marked block, and a block without compilerOptions', () => {
    expect(() => readmeCompilerOptions('# no settings\n')).toThrow(/exactly one readme-tsconfig block, found 0/);
    expect(() => readmeCompilerOptions('<!-- readme-tsconfig -->\n```json\n{ "include": [] }\n```\n')).toThrow(/no compilerOptions/);
  });
});
