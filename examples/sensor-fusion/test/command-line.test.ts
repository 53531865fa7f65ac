// The built example (`node dist/main.js`, what `pnpm --filter @hs/example-sensor-fusion run start` runs)
// against the hs command-line convention (issue 25).
import { existsSync } from 'node:fs';
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
  dir = await mkdtemp(join(tmpdir(), 'hs-fusion-bin-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const main = (args: readonly string[], options: Parameters<typeof spawnProgram>[2] = {}) =>
  spawnProgram(MAIN, args, { cwd: PACKAGE_DIR, ...options, env: { HS_BACKEND: 'host', INIT_CWD: dir, ...options.env } });

describe('sensor-fusion binary: the command-line convention', () => {
  it('takes -- and --seconds 1e0, uses ./out/sensor-fusion of the folder pnpm was typed in, and ends quietly with exit 0 under | head -1', async () => {
    // The output folder is made and the plan printed first; the later lines meet the closed pipe, and the
    // process ends there (as `| head` ends a command), before the real-time second is over.
    const { code, stdout, stderr } = await main(['--', '--seconds', '1e0'], { closeStdoutAfterLines: 1 });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^plan /);
    expect(existsSync(join(dir, 'out', 'sensor-fusion'))).toBe(true);
  });

  it('exits 2 with the message and the hint for a bad value or an unknown option', async () => {
    const bad = await main(['--seconds', '1.5']);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toBe(
      "sensor-fusion: InvalidArgument: --seconds takes a whole number from 1 to 3600 in standard notation (30, 1e3), got '1.5'\nhint: sensor-fusion --help lists the options\n",
    );
    const unknown = await main(['--minutes', '1']);
    expect(unknown).toMatchObject({ code: 2, stderr: "sensor-fusion: unknown option '--minutes'\nhint: sensor-fusion --help lists the options\n" });
  });

  it('exits 1 for failed work, naming the --out it could not create by its absolute path', async () => {
    const failed = await main(['--seconds', '1', '--out', 'a-file/out'], { env: { INIT_CWD: '/proc' } });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^sensor-fusion: InvalidArgument: --out: cannot create \/proc\/a-file\/out: /);
  });
});
