import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode, unwrap } from '@hs/streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.js';
import { OUTPUT_DIR_LOCK_FILE, lockOutputDir } from '../src/output-dir-lock.js';
import imagePipelineModule from '../src/pipeline-module.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-image-lock-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** A pid that belonged to a process that has exited (a child that ran nothing). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  expect(child.status).toBe(0);
  return child.pid;
}

async function freshDir(name: string): Promise<string> {
  const path = join(dir, name);
  await mkdir(path, { recursive: true });
  return path;
}

function cli(args: readonly string[], signal?: AbortSignal) {
  const logs: string[] = [];
  const errors: string[] = [];
  const exitCode = runCli(args, { log: (line) => logs.push(line), error: (line) => errors.push(line) }, { HS_BACKEND: 'host' }, signal);
  return { exitCode, logs, errors };
}

describe('lockOutputDir', () => {
  it('creates the lock file holding this pid, refuses a second lock while held, and removes it on release', async () => {
    const out = await freshDir('basic');
    const lock = await lockOutputDir(out);
    expect(lock.path).toBe(join(out, OUTPUT_DIR_LOCK_FILE));
    expect(await readFile(lock.path, 'utf8')).toBe(`${process.pid}\n`);

    await expect(lockOutputDir(out)).rejects.toMatchObject({
      code: ErrorCode.AlreadyExists,
      message:
        `AlreadyExists: output directory '${out}' is in use by another image-pipeline run (pid ${process.pid}; lock file ${lock.path}); ` +
        `choose another --out, or wait until that run ends (if no run uses the directory, delete ${lock.path})`,
    });

    lock.release();
    lock.release(); // a second release does nothing
    expect(await readdir(out)).toEqual([]);
    (await lockOutputDir(out)).release();
  });

  it('takes over a stale lock whose process has exited', async () => {
    const out = await freshDir('stale');
    await writeFile(join(out, OUTPUT_DIR_LOCK_FILE), `${deadPid()}\n`);
    const lock = await lockOutputDir(out);
    expect(await readFile(lock.path, 'utf8')).toBe(`${process.pid}\n`);
    lock.release();
    expect(await exists(lock.path)).toBe(false);
  });

  it('treats a lock file without a pid (still being written) as held', async () => {
    const out = await freshDir('no-pid');
    await writeFile(join(out, OUTPUT_DIR_LOCK_FILE), '');
    await expect(lockOutputDir(out)).rejects.toMatchObject({
      code: ErrorCode.AlreadyExists,
      message: expect.stringMatching(/in use by another image-pipeline run \(pid unknown: the lock file holds no pid yet; lock file /),
    });
    expect(await readFile(join(out, OUTPUT_DIR_LOCK_FILE), 'utf8')).toBe('');
  });

  it('does not delete a lock file another process has taken over since', async () => {
    const out = await freshDir('taken-over');
    const lock = await lockOutputDir(out);
    const other = deadPid();
    await writeFile(lock.path, `${other}\n`);
    lock.release();
    expect(await readFile(lock.path, 'utf8')).toBe(`${other}\n`);
  });

  it.skipIf(process.platform === 'win32')('answers a FIFO planted at the lock path with a typed error at once, not a hang', async () => {
    const out = await freshDir('fifo');
    expect(spawnSync('mkfifo', [join(out, OUTPUT_DIR_LOCK_FILE)]).status).toBe(0);
    const started = performance.now();
    await expect(lockOutputDir(out)).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: `InvalidArgument: cannot read lock file '${join(out, OUTPUT_DIR_LOCK_FILE)}': it is a FIFO (named pipe), not a regular file; pass a regular file`,
    });
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it.skipIf(process.platform === 'win32')('a run whose --out holds a FIFO at the lock path fails at once with one typed line', async () => {
    const out = await freshDir('fifo-run');
    expect(spawnSync('mkfifo', [join(out, OUTPUT_DIR_LOCK_FILE)]).status).toBe(0);
    const started = performance.now();
    const run = cli(['--frames', '2', '--out', out]);
    expect(await run.exitCode).toBe(1);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(run.errors).toEqual([expect.stringMatching(/^image-pipeline: InvalidArgument: .*lock file '[^']*': it is a FIFO \(named pipe\)/)]);
  });

  it('reports a directory it cannot create the lock file in with the OS code', async () => {
    await expect(lockOutputDir(join(dir, 'no-such-dir'))).rejects.toMatchObject({
      code: ErrorCode.NotFound,
      message: `NotFound: cannot write lock file '${join(dir, 'no-such-dir', OUTPUT_DIR_LOCK_FILE)}': ENOENT: no such file or directory`,
    });
  });
});

describe('one run per output directory', () => {
  it('refuses a run into a directory another run holds, before printing and touching nothing there', async () => {
    const out = await freshDir('held');
    const held = await lockOutputDir(out);
    await writeFile(join(out, 'frame-00000.png'), 'the other run');
    await writeFile(join(out, 'frame-00004.png'), 'the other run');

    const run = cli(['--frames', '2', '--out', out]);
    expect(await run.exitCode).toBe(1);
    expect(run.logs).toEqual([]);
    expect(run.errors).toEqual([
      `image-pipeline: AlreadyExists: --out: output directory '${out}' is in use by another image-pipeline run (pid ${process.pid}; lock file ${held.path}); ` +
        `choose another --out, or wait until that run ends (if no run uses the directory, delete ${held.path})`,
    ]);
    expect((await readdir(out)).sort()).toEqual([OUTPUT_DIR_LOCK_FILE, 'frame-00000.png', 'frame-00004.png']);
    expect(await readFile(join(out, 'frame-00000.png'), 'utf8')).toBe('the other run');
    expect(await readFile(held.path, 'utf8')).toBe(`${process.pid}\n`);
    held.release();
  });

  it('keeps a running run\'s frames when a second run targets its directory, and releases the lock when the first is stopped', async () => {
    const out = join(dir, 'concurrent');
    const stop = new AbortController();
    const first = cli(['--frames', '100000', '--rate', '50', '--out', out], stop.signal);
    while (!(await exists(join(out, 'frame-00001.png')))) await new Promise((resolve) => setTimeout(resolve, 10));

    const second = cli(['--frames', '5', '--out', out]);
    expect(await second.exitCode).toBe(1);
    expect(second.errors[0]).toMatch(/^image-pipeline: AlreadyExists: --out: output directory '.*concurrent' is in use by another image-pipeline run/);

    stop.abort();
    expect(await first.exitCode).toBe(0);
    expect(first.errors).toEqual([]);
    const frames = (await readdir(out)).filter((name) => name !== OUTPUT_DIR_LOCK_FILE).sort();
    expect(await exists(join(out, OUTPUT_DIR_LOCK_FILE))).toBe(false);
    expect(frames.length).toBeGreaterThanOrEqual(2);
    expect(frames).toEqual(Array.from({ length: frames.length }, (_, i) => `frame-${String(i).padStart(5, '0')}.png`));
    expect(first.logs.at(-1)).toMatch(new RegExp(`^wrote ${frames.length} PNG files to `));
  });

  it('releases the lock after a run that failed', async () => {
    const out = await freshDir('failed');
    await mkdir(join(out, 'frame-00001.png')); // frame 1 cannot be written
    const run = cli(['--frames', '3', '--rate', '1000', '--out', out]);
    expect(await run.exitCode).toBe(1);
    expect(run.errors[0]).toMatch(/EISDIR/);
    expect(await exists(join(out, OUTPUT_DIR_LOCK_FILE))).toBe(false);
  });

  it('holds the lock from the pipeline module\'s prepareRun() to its summary', async () => {
    const out = join(dir, 'module');
    const request = unwrap(imagePipelineModule.parseArguments(['--frames', '1', '--out', out], { log: () => undefined, error: () => undefined }));
    if (request.kind !== 'build') throw new Error('expected a build request');
    const build = await imagePipelineModule.build(request.options);
    await build.prepareRun!();
    await expect(lockOutputDir(out)).rejects.toMatchObject({ code: ErrorCode.AlreadyExists });
    build.summary({} as never); // its lines come from the sinks, not from the metrics
    expect(await exists(join(out, OUTPUT_DIR_LOCK_FILE))).toBe(false);
  });
});
