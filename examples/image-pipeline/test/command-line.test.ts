// The built example (`node dist/main.js`, what `pnpm --filter @hs/example-image-pipeline run start` runs)
// against the hs command-line convention (issue 25).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProgram } from '@hs/cli-options/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(PACKAGE_DIR, 'dist', 'main.js');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-image-bin-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const main = (args: readonly string[], options: Parameters<typeof spawnProgram>[2] = {}) =>
  spawnProgram(MAIN, args, { cwd: PACKAGE_DIR, ...options, env: { HS_BACKEND: 'host', INIT_CWD: dir, ...options.env } });

describe('image-pipeline binary: the command-line convention', () => {
  it('takes -- and exponent notation (--rate 1e3, --frames 2e0), writing into ./out/image-pipeline of the folder pnpm was typed in', async () => {
    const { code, stderr } = await main(['--', '--frames', '2e0', '--rate', '1e3']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(await readdir(join(dir, 'out', 'image-pipeline'))).toEqual(['frame-00000.png', 'frame-00001.png']);
  });

  it('exits 2 with the message and the hint for a bad value, 1 for a missing input named by its absolute path', async () => {
    const usage = await main(['--rate', 'NaN']);
    expect(usage).toMatchObject({ code: 2, stdout: '' });
    expect(usage.stderr).toBe(
      "image-pipeline: InvalidArgument: --rate takes a finite number from 0.001 to 1000000 in standard notation (30, 0.25, 5e-2), got 'NaN'\nhint: image-pipeline --help lists the options\n",
    );
    const missing = await main(['--input', 'photos/nope.png']);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toContain(`image-pipeline: NotFound: `);
    expect(missing.stderr).toContain(join(dir, 'photos', 'nope.png'));
  });

  it('ends quietly with exit 0 when the reader of standard output goes away after the first line (| head -1)', async () => {
    const { code, stdout, stderr } = await main(['--frames', '4', '--rate', '100', '--out', 'piped'], { closeStdoutAfterLines: 1 });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^input /);
  });
});
