// The built flagship (`node dist/main.js`, what `pnpm run main` runs) against the hs command-line
// convention (issue 25).
import { spawnSync } from 'node:child_process';
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
      "scan-to-volume: InvalidArgument: --sweeps takes a whole number from 1 to 1000000 in standard notation (30, 1e3), got '1_000'\nhint: scan-to-volume --help lists the options\n",
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

  // Quick start line 1 as CI and users run it. Everything it builds is built already (this suite waits for
  // those builds), so turbo answers from its cache; what it must not do is replay those builds' logs.
  const pnpm = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  it.skipIf(pnpm.status !== 0)('pnpm run main prints the program\'s output, not turbo\'s replay of the build logs', () => {
    const repo = join(PACKAGE_DIR, '..', '..');
    const env: Record<string, string | undefined> = { ...process.env, HS_BACKEND: 'host', TURBO_TELEMETRY_DISABLED: '1' };
    // This run's own turbo, no run summary of it among CI's (TURBO_RUN_SUMMARY) and no outer task's settings.
    for (const name of Object.keys(env)) if (name.startsWith('TURBO_') && name !== 'TURBO_TELEMETRY_DISABLED') delete env[name];
    const { status, stdout, stderr } = spawnSync('pnpm', ['run', 'main'], { cwd: repo, env, encoding: 'utf8', timeout: 300_000 });
    expect({ status, errors: stderr.split('\n').filter((line) => line.startsWith('scan-to-volume:')) }).toEqual({ status: 0, errors: [] });
    const lines = stdout.split('\n');
    expect(lines.filter((line) => /^@hs\/[^:\s]+:build: /.test(line))).toEqual([]);
    expect(lines.findIndex((line) => line.startsWith('plan scan-to-volume'))).toBeLessThan(15);
    // pnpm sets INIT_CWD to the folder it was typed in: the outputs land in <repo>/out/scan-to-volume.
    expect(stdout).toContain(`wrote ${join(repo, 'out', 'scan-to-volume', 'volume.nvdb')}`);
  }, 300_000);
});
