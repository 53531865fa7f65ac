// The built `hs` binary against the hs command-line convention (issue 25): each case is a finding of a
// user run from a fresh clone, checked on `node dist/bin.js` as users run it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnProgram } from '@hs/cli-options/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, FIXTURE, PACKAGE_DIR } from './run-hs.js';

const FLAGSHIP = join(PACKAGE_DIR, '..', '..', 'examples', 'scan-to-volume');
const REPO = join(PACKAGE_DIR, '..', '..');
const hs = (args: readonly string[], options: Parameters<typeof spawnProgram>[2] = {}) =>
  spawnProgram(BIN, args, { cwd: PACKAGE_DIR, ...options, env: { HS_BACKEND: 'host', INIT_CWD: undefined, ...options.env } });

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-command-line-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('hs binary: the command-line convention', () => {
  it('accepts a leading -- (pnpm hs -- plan ...) as it accepts none', async () => {
    const { code, stdout, stderr } = await hs(['--', 'plan', FIXTURE, '--json']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(stdout)).toMatchObject({ name: 'counting' });
  });

  it('takes numbers in standard notation (--interval 1e2) and refuses 1_000 as a usage error: exit 2, the message and the hint', async () => {
    const run = await hs(['run', FIXTURE, '--interval', '1e2', '--no-progress', '--', '--frames', '3']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('hs run counting-pipeline');
    const refused = await hs(['run', FIXTURE, '--interval', '1_000']);
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr.trimEnd().split('\n')).toEqual([
      "hs: option '--interval <ms>' argument '1_000' is invalid. --interval takes a whole number from 10 to 60000 in standard notation (30, 1e3), got '1_000'",
      'hint: hs run --help lists the options', // hs run's, where --interval is listed
    ]);
  });

  it('exits 2 for a wrong command line and 1 for failed work, each as "hs: <message>"', async () => {
    const usage = await hs(['plan', FIXTURE, '--svg', '--dot']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^hs: option '--dot' cannot be used with option '--svg'\nhint: /);
    const failed = await hs(['run', FIXTURE, '--no-progress', '--', '--fail-build']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe('hs: NotFound: input points.ply does not exist\n');
  });

  it('ends quietly with exit 0 when the reader of standard output goes away (hs doctor | head, hs run | head)', async () => {
    const doctor = await hs(['doctor'], { closeStdoutAfterLines: 0 });
    expect({ code: doctor.code, stderr: doctor.stderr }).toEqual({ code: 0, stderr: '' });
    // The run prints its first lines, then the metrics when it ends: those meet the closed pipe.
    const run = await hs(['run', FIXTURE, '--no-progress', '--', '--frames', '20', '--rate', '200'], { closeStdoutAfterLines: 1 });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^hs run counting-pipeline/);
  });

  it('resolves relative paths against INIT_CWD (where pnpm was typed), and prints them absolute in errors', async () => {
    const written = await hs(['plan', FIXTURE, '-o', 'plan.txt'], { env: { INIT_CWD: dir } });
    expect(written).toMatchObject({ code: 0, stderr: `wrote the text plan of counting-pipeline to ${join(dir, 'plan.txt')}\n` });
    expect(await readFile(join(dir, 'plan.txt'), 'utf8')).toContain('source.frames->add-one.input');
    const missing = await hs(['plan', FLAGSHIP, '--', '--input', 'nope.ply'], { env: { INIT_CWD: dir } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`hs: NotFound: cannot read ${join(dir, 'nope.ply')}`);
  });

  it('refuses -o plan.png (an extension no plan format writes) with exit 2, writing nothing', async () => {
    const { code, stdout, stderr } = await hs(['plan', FIXTURE, '-o', 'plan.png'], { env: { INIT_CWD: dir } });
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toBe(`hs: InvalidArgument: -o ${join(dir, 'plan.png')}: cannot write a .png file; use one of .txt, .json, .dot, .svg, .html\nhint: hs plan --help lists the options\n`);
    expect(existsSync(join(dir, 'plan.png'))).toBe(false);
  });

  // `pnpm hs` as users type it, with the pnpm on PATH (the one running this suite under `pnpm test`).
  const pnpm = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  it.skipIf(pnpm.status !== 0)('pnpm hs prints hs\'s output without echoing its guard line', () => {
    const { status, stdout, stderr } = spawnSync('pnpm', ['hs', '--version'], { cwd: REPO, encoding: 'utf8' });
    expect(status).toBe(0);
    expect(`${stdout}${stderr}`).not.toContain('test -f');
    expect(stdout.trim().split('\n').at(-1)).toMatch(/^\d+\.\d+\.\d+/);
  });
});
