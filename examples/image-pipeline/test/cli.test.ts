import { spawnSync } from 'node:child_process';
import { chown, lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CudaBackend } from '@hs/streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.js';

/** Runs the command line in-process with the given environment; collects what it prints. */
async function cli(args: readonly string[], env: Record<string, string | undefined> = { HS_BACKEND: 'host' }) {
  const logs: string[] = [];
  const errors: string[] = [];
  const exitCode = await runCli(args, { log: (line) => logs.push(line), error: (line) => errors.push(line) }, env);
  return { exitCode, logs, errors };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-image-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('option validation (before anything is printed)', () => {
  it.each(['1e-300', '0.0009', '0', '-1', '2000000', '1e7', '0x10', ' 30', 'Infinity', 'NaN', '30hz', '1_000', ''])(
    'rejects --rate %j with a typed error, the hint and exit code 2',
    async (rate) => {
      const out = join(dir, 'never-rate');
      const { exitCode, logs, errors } = await cli(['--rate', rate, '--out', out]);
      expect(exitCode).toBe(2);
      expect(logs).toEqual([]);
      expect(errors).toEqual([
        `image-pipeline: InvalidArgument: --rate takes a finite number from 0.001 to 1000000 in standard notation (30, 0.25, 5e-2), got '${rate}'`,
        'hint: image-pipeline --help lists the options',
      ]);
      expect(await exists(out)).toBe(false);
    },
  );

  it.each(['0x10', '1e6', ' 3', '3 ', '0', '-1', '2.5', '25e-1', '100001', '1_0', 'NaN', ''])('rejects --frames %j with exit code 2', async (frames) => {
    const { exitCode, logs, errors } = await cli(['--frames', frames, '--out', join(dir, 'never-frames')]);
    expect(exitCode).toBe(2);
    expect(logs).toEqual([]);
    expect(errors).toEqual([
      `image-pipeline: InvalidArgument: --frames takes a whole number from 1 to 100000 in standard notation (30, 1e3), got '${frames}'`,
      'hint: image-pipeline --help lists the options',
    ]);
  });

  it('accepts the documented extremes of --rate and a plain --frames', async () => {
    for (const rate of ['0.001', '1000000', '.5', '29.97', '1e3', '5e-2']) {
      const out = join(dir, `rate-${rate}`);
      const { exitCode, errors } = await cli(['--rate', rate, '--frames', '1', '--out', out]);
      expect([exitCode, errors]).toEqual([0, []]);
      expect(await readdir(out)).toEqual(['frame-00000.png']);
    }
  });

  it('rejects an --out below a file before printing, with the OS error code', async () => {
    const blocker = join(dir, 'a-file');
    await writeFile(blocker, 'not a directory');
    const { exitCode, logs, errors } = await cli(['--frames', '1', '--out', join(blocker, 'out')]);
    expect(exitCode).toBe(1);
    expect(logs).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^image-pipeline: InvalidArgument: --out: cannot create .*a-file\/out: ENOTDIR$/);
  });

  // Node's recursive mkdir never returns for a folder under /proc; the example used to hang there.
  it.skipIf(process.platform !== 'linux')('rejects an --out under /proc with ENOENT instead of hanging', async () => {
    const { exitCode, logs, errors } = await cli(['--frames', '1', '--out', '/proc/hs-no-such-folder/out']);
    expect(exitCode).toBe(1);
    expect(logs).toEqual([]);
    expect(errors).toEqual(['image-pipeline: InvalidArgument: --out: cannot create /proc/hs-no-such-folder/out: ENOENT']);
  });

  it('rejects an unknown HS_BACKEND before printing and before touching --out', async () => {
    const out = join(dir, 'never-backend');
    const { exitCode, logs, errors } = await cli(['--frames', '1', '--out', out], { HS_BACKEND: 'tpu' });
    expect(exitCode).toBe(1);
    expect(logs).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^image-pipeline: InvalidArgument: HS_BACKEND=tpu: .*unknown backend "tpu"/);
    expect(await exists(out)).toBe(false);
  });

  it.skipIf(CudaBackend.available())('rejects --backend cuda before printing where CUDA is unavailable (skipped: this machine has a CUDA device)', async () => {
    const { exitCode, logs, errors } = await cli(['--frames', '1', '--backend', 'cuda', '--out', join(dir, 'never-cuda')], {});
    expect(exitCode).toBe(1);
    expect(logs).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^image-pipeline: NotSupported: --backend cuda: /);
  });

  it('rejects an unknown option through commander, printing only the usage error', async () => {
    const { exitCode, logs, errors } = await cli(['--fames', '2']);
    expect(exitCode).toBe(2);
    expect(logs).toEqual([]);
    expect(errors).toEqual(["image-pipeline: unknown option '--fames'\n(Did you mean --frames?)", 'hint: image-pipeline --help lists the options']);
  });
});

describe('runs', () => {
  it('skips one leading -- (as package managers pass it through) and reports one file in the singular', async () => {
    const out = join(dir, 'dash-dash');
    const { exitCode, logs, errors } = await cli(['--', '--frames', '1', '--out', out]);
    expect([exitCode, errors]).toEqual([0, []]);
    expect(logs[0]).toBe('input mandrill: 128x128 RGBA');
    expect(logs.at(-1)).toBe(`wrote 1 PNG file to ${out} (${join(out, 'frame-00000.png')})`);
  });

  it('reports several files in the plural with the first and last name', async () => {
    const out = join(dir, 'plural');
    const { exitCode, logs } = await cli(['--frames', '3', '--out', out]);
    expect(exitCode).toBe(0);
    expect(logs.at(-1)).toBe(`wrote 3 PNG files to ${out} (${join(out, 'frame-00000.png')} ... ${join(out, 'frame-00002.png')})`);
  });

  it('fails a run whose frame file cannot be written, naming the file and the OS code', async () => {
    const out = join(dir, 'blocked-frame');
    await mkdir(join(out, 'frame-00003.png'), { recursive: true }); // a directory where frame 3 goes
    const { exitCode, errors } = await cli(['--frames', '5', '--rate', '1000', '--out', out]);
    expect(exitCode).toBe(1);
    expect(errors).toEqual([
      `image-pipeline: InvalidArgument: operator png-writer: cannot write '${join(out, 'frame-00003.png')}': EISDIR: illegal operation on a directory`,
    ]);
  });

  it('removes stale frame-NNNNN.png files from an earlier run and nothing else', async () => {
    const out = join(dir, 'stale');
    await mkdir(join(out, 'frame-00007.png'), { recursive: true }); // a directory with a frame name stays
    for (const name of ['frame-00000.png', 'frame-00004.png', 'frame-00009.png', 'frame-1.png', 'frame-00003.png.bak', 'notes.txt', 'frame-000001.png']) {
      await writeFile(join(out, name), 'old');
    }
    const { exitCode, errors } = await cli(['--frames', '2', '--out', out]);
    expect([exitCode, errors]).toEqual([0, []]);
    expect((await readdir(out)).sort()).toEqual(
      ['frame-00000.png', 'frame-00001.png', 'frame-00003.png.bak', 'frame-000001.png', 'frame-00007.png', 'frame-1.png', 'notes.txt'].sort(),
    );
    expect((await stat(join(out, 'frame-00000.png'))).size).toBeGreaterThan(3);
  });

  it.skipIf(process.getuid?.() !== 0)("leaves another user's stale frame files alone (as root: chown needs it)", async () => {
    const out = join(dir, 'shared-frames');
    await mkdir(out, { recursive: true });
    await writeFile(join(out, 'frame-00009.png'), 'theirs');
    await chown(join(out, 'frame-00009.png'), 65534, 65534);
    await writeFile(join(out, 'frame-00008.png'), 'ours');
    const { exitCode, errors } = await cli(['--frames', '2', '--out', out]);
    expect([exitCode, errors]).toEqual([0, []]);
    expect((await readdir(out)).sort()).toEqual(['frame-00000.png', 'frame-00001.png', 'frame-00009.png']);
  });

  it('refuses a symlinked --out and deletes nothing where it points', async () => {
    const real = join(dir, 'someone-elses-frames');
    await mkdir(real, { recursive: true });
    await writeFile(join(real, 'frame-00000.png'), 'theirs');
    const link = join(dir, 'out-link');
    await symlink(real, link);
    const { exitCode, errors } = await cli(['--frames', '2', '--out', link]);
    expect(exitCode).toBe(1);
    expect(errors).toEqual([expect.stringMatching(/^image-pipeline: InvalidArgument: --out: output folder '.*out-link' is a symbolic link/)]);
    expect(await readdir(real)).toEqual(['frame-00000.png']);
    expect(await readFile(join(real, 'frame-00000.png'), 'utf8')).toBe('theirs');
  });

  it('replaces a symlink planted at a frame path (its target untouched) and removes staging files of dead runs', async () => {
    const out = join(dir, 'planted');
    await mkdir(out, { recursive: true });
    const victim = join(dir, 'victim');
    await writeFile(victim, 'precious');
    await symlink(victim, join(out, 'frame-00001.png'));
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const stale = `frame-00000.png.${dead}.0123456789abcdef.hs-staging`;
    await writeFile(join(out, stale), 'half a frame');
    const { exitCode, errors } = await cli(['--frames', '2', '--rate', '1000', '--out', out]);
    expect([exitCode, errors]).toEqual([0, []]);
    expect(await readFile(victim, 'utf8')).toBe('precious');
    expect((await lstat(join(out, 'frame-00001.png'))).isFile()).toBe(true);
    expect((await readdir(out)).sort()).toEqual(['frame-00000.png', 'frame-00001.png']);
  });
});
