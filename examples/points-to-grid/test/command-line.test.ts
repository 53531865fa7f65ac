// The built example (`node dist/main.js`, what `pnpm --filter @hs/example-points-to-grid run start` runs)
// against the hs command-line convention (issue 25; its README command used to be refused for its `--`).
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProgram } from '@hs/cli-options/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(PACKAGE_DIR, 'dist', 'main.js');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-p2g-bin-'));
  writeFileSync(join(dir, 'cloud.xyz'), '0 0 0\n1 0 0\n0 1 0\n0 0 1\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const main = (args: readonly string[], options: Parameters<typeof spawnProgram>[2] = {}) =>
  spawnProgram(MAIN, args, { cwd: PACKAGE_DIR, ...options, env: { INIT_CWD: dir, ...options.env } });

describe('points-to-grid binary: the command-line convention', () => {
  it('takes the README command (run start -- --input FILE), resolving FILE and ./out/points-to-grid against the folder pnpm was typed in', async () => {
    const { code, stdout, stderr } = await main(['--', '--input', 'cloud.xyz', '--voxel-size', '5e-1']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(`points: 4 from ${join(dir, 'cloud.xyz')}`);
    expect(existsSync(join(dir, 'out', 'points-to-grid', 'points.nvdb'))).toBe(true);
  });

  it('exits 2 with the message and the hint for a bad value, 1 for a missing input named by its absolute path', async () => {
    const usage = await main(['--max-grid-bytes', 'Infinity']);
    expect(usage).toMatchObject({
      code: 2,
      stderr:
        "points-to-grid: InvalidArgument: --max-grid-bytes takes a whole number from 1 to 9007199254740991 in standard notation (30, 1e3), got 'Infinity'\nhint: points-to-grid --help lists the options\n",
    });
    const missing = await main(['--input', 'nope.ply']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(new RegExp(`^points-to-grid: NotFound: cannot read ${join(dir, 'nope.ply')}: ENOENT`));
  });

  it('ends quietly with exit 0 when the reader of standard output goes away at once', async () => {
    const { code, stderr } = await main(['--out', 'piped'], { closeStdoutAfterLines: 0 });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });
});
