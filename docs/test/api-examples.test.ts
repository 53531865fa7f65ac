import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { apiExamples, exampleFileName, isSelfContained, typeErrors } from './api-examples.js';

const docsDir = fileURLToPath(new URL('..', import.meta.url));
const root = resolve(docsDir, '..');
/** `HS_API_EXAMPLES=@hs/tensor,@hs/pool` checks only those packages (while writing examples); CI checks all. */
const only = process.env['HS_API_EXAMPLES']?.split(',').filter((p) => p !== '');
const examples = apiExamples(root).filter((e) => only === undefined || only.length === 0 || only.includes(e.pkg));
/** Where the examples are written to compile and run (inside docs/, so `@hs/*` resolves; git-ignored). */
const outDir = join(docsDir, '.api-examples');

describe('API examples: every value export of every documented package', () => {
  it('has an @example', () => {
    expect(examples.filter((e) => e.code === null).map((e) => `${e.pkg} ${e.name} (${e.source})`)).toEqual([]);
  });

  it('is a complete program (imports what it uses from @hs/*)', () => {
    expect(examples.filter((e) => e.code !== null && !isSelfContained(e.code)).map((e) => `${e.pkg} ${e.name} (${e.source})`)).toEqual([]);
  });

  it('compiles and runs on the host backend', async () => {
    const runnable = examples.filter((e) => e.code !== null && isSelfContained(e.code));
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    const taken = new Set<string>();
    const files = runnable.map((e) => {
      const file = join(outDir, exampleFileName(e, taken));
      writeFileSync(file, `// ${e.pkg} ${e.name}: the @example of ${e.source}\n${e.code as string}\nexport {};\n`);
      return file;
    });
    expect(typeErrors(root, files)).toEqual([]);
    const run = await new Promise<{ stdout: string; stderr: string; failed: boolean }>((done) => {
      execFile(process.execPath, ['--import', 'tsx', join(docsDir, 'test', 'run-api-examples.ts'), ...files], { cwd: outDir, env: { ...process.env, HS_BACKEND: 'host' }, maxBuffer: 64 << 20 }, (error, stdout, stderr) =>
        done({ stdout, stderr, failed: error !== null }),
      );
    });
    expect(run.failed, run.stderr).toBe(false);
    const last = run.stdout.trimEnd().split('\n').at(-1) ?? '[]';
    expect(JSON.parse(last), run.stdout).toEqual([]);
  });
});
