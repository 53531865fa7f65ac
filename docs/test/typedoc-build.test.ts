import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const docsDir = fileURLToPath(new URL('..', import.meta.url));
const root = resolve(docsDir, '..');

it('builds the API reference from typedoc.json with zero warnings (a missing doc comment fails)', async () => {
  const out = mkdtempSync(join(tmpdir(), 'hs-api-'));
  try {
    const { code, output } = await new Promise<{ code: number; output: string }>((done) => {
      execFile(join(docsDir, 'node_modules', '.bin', 'typedoc'), ['--out', out], { cwd: root, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } }, (error, stdout, stderr) =>
        done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: `${stdout}${stderr}` }),
      );
    });
    const problems = output.split('\n').filter((line) => /\[(warning|error)\]/.test(line));
    expect(problems).toEqual([]);
    expect(code).toBe(0);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

it('puts every guide on the site (typedoc.json projectDocuments)', () => {
  const config = JSON.parse(readFileSync(join(root, 'typedoc.json'), 'utf8')) as { projectDocuments: string[] };
  const guides = readdirSync(join(docsDir, 'guides')).filter((f) => f.endsWith('.md')).map((f) => `docs/guides/${f}`);
  expect(guides.filter((g) => !config.projectDocuments.includes(g)), 'add them to "projectDocuments" in typedoc.json').toEqual([]);
});
