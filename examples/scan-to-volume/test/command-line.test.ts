// The built flagship (`node dist/main.js`, what `pnpm run main` runs) against the hs command-line
// convention (issue 25).
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProgram } from '@hs/cli-options/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(PACKAGE_DIR, 'dist', 'main.js');
/** A quick run: the bunny at 0.5 units per voxel, 4 scans at 1 kHz, numbers in exponent notation. */
const QUICK = ['--backend', 'host', '--voxel-size', '5e-1', '--scans', '4e0', '--rate', '1e3'];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-scan-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const main = (args: readonly string[], options: Parameters<typeof spawnProgram>[2] = {}) =>
  spawnProgram(MAIN, args, { cwd: PACKAGE_DIR, ...options, env: { INIT_CWD: dir, ...options.env } });

describe('scan-to-volume binary: the command-line convention', () => {
  it('takes -- (pnpm run start -- ...) and exponent notation, writing into ./out/scan-to-volume of the folder pnpm was typed in', async () => {
    const { code, stdout, stderr } = await main(['--', ...QUICK]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(`wrote ${join(dir, 'out', 'scan-to-volume', 'volume.nvdb')}`);
    expect(existsSync(join(dir, 'out', 'scan-to-volume', 'preview.png'))).toBe(true);
  });

  it('exits 2 with the message and the hint for a bad value, 1 for a missing input named by its absolute path', async () => {
    const usage = await main([...QUICK, '--sweeps', '1_000']);
    expect(usage).toMatchObject({ code: 2, stdout: '' });
    expect(usage.stderr).toBe(
      "scan-to-volume: InvalidArgument: --sweeps takes a whole number from 1 to 1000000 in standard notation (30, 0.25, 5e-2), got '1_000'\nhint: scan-to-volume --help lists the options\n",
    );
    const missing = await main([...QUICK, '--input', 'scans/nope.ply', '--out', 'never']);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toMatch(new RegExp(`^scan-to-volume: NotFound: cannot read ${join(dir, 'scans', 'nope.ply')}: ENOENT`));
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });

  it('ends quietly with exit 0 when the reader of standard output goes away after the first line (| head -1)', async () => {
    const { code, stdout, stderr } = await main([...QUICK, '--out', 'piped'], { closeStdoutAfterLines: 1 });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^plan scan-to-volume/);
  });
});
