import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CudaBackend } from '@hs/streams';
import { ExitCode } from '../src/index.js';
import { BIN, FIXTURE, FakeTerminal, PACKAGE_DIR, hs, spawnHs } from './run-hs.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-run-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('hs run', () => {
  it('runs a module to the end, draws the bar and status line on a terminal, then prints metrics and the summary', async () => {
    const terminal = new FakeTerminal();
    const { exitCode, out, err } = await hs(['run', FIXTURE, '--interval', '10', '--', '--frames', '40', '--rate', '400'], { progress: terminal });
    expect(err).toEqual([]);
    expect(exitCode).toBe(ExitCode.Success);
    expect(out[0]).toBe('hs run counting-pipeline: Counts frames through a fused add-one chain.');
    expect(out[1]).toBe('backend: host');
    expect(out.join('\n')).toContain('frames: 40 in ');
    expect(out.at(-1)).toBe('checked 40 frames, 0 wrong, source emitted 40');
    // The last redraw is the end-of-run snapshot: full bar, all slots back.
    expect(terminal.text).toMatch(/100% \| 40 frames {2}[0-9.]+ frames\/s {2}latency p50 [0-9.]+ ms p99 [0-9.]+ ms \([a-z-]+\) {2}pools 0\/11 slots/);
    expect(out.join('\n')).not.toContain('frames/s');
  });

  it('exits 1 with one error line when the summary returns an error (a check after the run failed)', async () => {
    const { exitCode, out, err } = await hs(['run', FIXTURE, '--', '--frames', '3', '--fail-summary']);
    expect(exitCode).toBe(ExitCode.Failure);
    expect(out.join('\n')).toContain('frames: 3 in ');
    expect(out.join('\n')).not.toContain('checked 3 frames, 0 wrong');
    expect(err).toEqual(['hs: InvalidArgument: checked 3 frames: planted summary failure']);
  });

  it('stays quiet without a terminal and with --no-progress', async () => {
    const quiet = await hs(['run', FIXTURE, '--interval', '10', '--', '--frames', '20', '--rate', '400']);
    expect(quiet.exitCode).toBe(0);
    expect([...quiet.out, ...quiet.err].join('\n')).not.toContain('frames/s');
    const terminal = new FakeTerminal();
    const off = await hs(['run', FIXTURE, '--no-progress', '--', '--frames', '5'], { progress: terminal });
    expect(off.exitCode).toBe(0);
    expect(terminal.text).toBe('');
  });

  it('stops on Ctrl-C: the graph drains, every slot returns, exit code 130', async () => {
    const terminal = new FakeTerminal();
    const { exitCode, out, err } = await hs(['run', FIXTURE, '--interval', '10', '--', '--frames', '1000000', '--rate', '200'], {
      progress: terminal,
      onInterrupt: (press) => setTimeout(press, 200),
    });
    expect(exitCode).toBe(ExitCode.Interrupted);
    expect(err).toEqual([expect.stringMatching(/^interrupted: stopped after \d+ frames, every slot returned$/)]);
    const text = out.join('\n');
    expect(text).toMatch(/pool:source\.frames +high-water \d\/5 slots {2}outstanding 0/);
    expect(text).toMatch(/checked (\d+) frames, 0 wrong, source emitted \1/);
    expect(terminal.text).toContain('stopping (Ctrl-C): draining the graph');
  });

  it('stops the built bin on SIGINT with exit code 130', async () => {
    let sent = false;
    const { code, stdout, stderr } = await spawnHs(['run', FIXTURE, '--', '--frames', '1000000', '--rate', '200'], {
      whenOutput: (text, signal) => {
        if (!sent && text.includes('backend: host')) {
          sent = true;
          setTimeout(() => signal('SIGINT'), 100);
        }
      },
    });
    expect(stderr).toMatch(/interrupted: stopped after \d+ frames, every slot returned/);
    expect(code).toBe(ExitCode.Interrupted);
    expect(stdout).toMatch(/outstanding 0/);
  });

  it('runs the image-pipeline example by name and passes its options', async () => {
    const outDir = join(dir, 'frames');
    const { exitCode, out } = await hs(['run', 'image-pipeline', '--', '--frames', '3', '--out', outDir]);
    expect(exitCode).toBe(0);
    expect(out.at(-1)).toBe(`wrote 3 PNG files to ${outDir} (${join(outDir, 'frame-00000.png')} ... ${join(outDir, 'frame-00002.png')})`);
    expect((await readdir(outDir)).sort()).toEqual(['frame-00000.png', 'frame-00001.png', 'frame-00002.png']);
  });

  // Where a GPU is usable the cuda backend starts, so the failing start cannot be provoked this way.
  it.skipIf(CudaBackend.available())('a session that cannot start (no CUDA device for --backend cuda) leaves no output folder behind', async () => {
    const outDir = join(dir, 'never-made');
    const { exitCode, err } = await hs(['run', 'scan-to-volume', '--', '--backend', 'cuda', '--out', outDir]);
    expect(exitCode).toBe(ExitCode.Failure);
    expect(err.join('\n')).toMatch(/NotSupported: .*CUDA backend is unavailable/);
    await expect(readdir(outDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('gives exit code 1 for a run that fails and for a build that fails, 2 for usage errors', async () => {
    const failed = await hs(['run', FIXTURE, '--', '--frames', '10', '--fail-at', '3']);
    expect(failed.exitCode).toBe(ExitCode.Failure);
    expect(failed.err.join('\n')).toContain('planted failure at frame 3');
    const build = await hs(['run', FIXTURE, '--', '--fail-build']);
    expect(build).toMatchObject({ exitCode: ExitCode.Failure, err: ['hs: NotFound: input points.ply does not exist'] });
    const interval = await hs(['run', FIXTURE, '--interval', '0']);
    expect(interval.exitCode).toBe(ExitCode.Usage);
    expect(interval.err).toEqual([
      "hs: option '--interval <ms>' argument '0' is invalid. --interval takes a whole number from 10 to 60000 in standard notation (30, 1e3), got '0'",
      'hint: hs run --help lists the options',
    ]);
    const unknown = await hs(['run', FIXTURE, '--frames', '3']);
    expect(unknown.exitCode).toBe(ExitCode.Usage);
    expect(unknown.err[0]).toBe("hs: unknown option '--frames'");
    const help = await hs(['run', FIXTURE, '--', '--help']);
    expect(help).toMatchObject({ exitCode: ExitCode.Success, out: ['counting-pipeline [--frames N] [--rate HZ] [--fail-build] [--fail-at FRAME] [--fail-summary]'] });
    const noCommand = await hs(['launch']);
    expect(noCommand.exitCode).toBe(ExitCode.Usage);
    const manifest = JSON.parse(await readFile(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string };
    expect(await hs(['--version'])).toMatchObject({ exitCode: ExitCode.Success, out: [manifest.version] });
  });

  it('prints the version of the package.json beside the built bin for -V, read when it runs', async () => {
    // A copy of the built package whose package.json says another version: a hard-coded version would not follow it.
    const copy = join(dir, 'cli-copy');
    await cp(join(PACKAGE_DIR, 'dist'), join(copy, 'dist'), { recursive: true });
    await symlink(join(PACKAGE_DIR, 'node_modules'), join(copy, 'node_modules'), 'dir');
    await writeFile(join(copy, 'package.json'), JSON.stringify({ name: '@hs/cli', version: '9.8.7-probe', type: 'module' }));
    const run = spawnSync(process.execPath, [join(copy, 'dist', 'bin.js'), '-V'], { encoding: 'utf8' });
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({ status: 0, stdout: '9.8.7-probe\n', stderr: '' });
    const manifest = JSON.parse(await readFile(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string };
    expect(spawnSync(process.execPath, [BIN, '-V'], { encoding: 'utf8' }).stdout).toBe(`${manifest.version}\n`);
  });
});
