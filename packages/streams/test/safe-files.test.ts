import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ErrorCode,
  checkOutputFolder,
  createStagingFile,
  openExclusive,
  readRegularFile,
  readRegularFileSync,
  removeStaleStaging,
  writeFileAtomic,
  writeFileAtomicSync,
} from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-safe-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let folders = 0;
function folder(): string {
  folders += 1;
  const path = join(dir, `case-${folders}`);
  mkdirSync(path);
  return path;
}

function mkfifo(path: string): void {
  execFileSync('mkfifo', [path]);
}

/** A pid no process has: a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

const hasMkfifo = process.platform !== 'win32';

describe('writeFileAtomic', () => {
  it('replaces a symlink planted at the target: the file it points to is untouched', async () => {
    const out = folder();
    const victim = join(dir, `victim-${folders}`);
    writeFileSync(victim, 'precious');
    symlinkSync(victim, join(out, 'grid.nvdb'));
    await writeFileAtomic(join(out, 'grid.nvdb'), new Uint8Array([1, 2, 3]));
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    expect(lstatSync(join(out, 'grid.nvdb')).isFile()).toBe(true);
    expect([...readFileSync(join(out, 'grid.nvdb'))]).toEqual([1, 2, 3]);
    expect(readdirSync(out)).toEqual(['grid.nvdb']);
  });

  it('names its staging file <name>.<pid>.<random>.hs-staging and never opens what exists there', async () => {
    const out = folder();
    const staging = await createStagingFile(join(out, 'a.bin'));
    expect(staging.stagingPath).toMatch(new RegExp(`a\\.bin\\.${process.pid}\\.[0-9a-f]{16}\\.hs-staging$`));
    const other = await createStagingFile(join(out, 'a.bin'));
    expect(other.stagingPath).not.toBe(staging.stagingPath);
    await staging.discard();
    await other.discard();
    expect(readdirSync(out)).toEqual([]);
  });

  it('refuses a FIFO at the target with InvalidArgument at once, neither opening nor replacing it', async () => {
    if (!hasMkfifo) return;
    const out = folder();
    mkfifo(join(out, 'frame.png'));
    const started = performance.now();
    await expect(writeFileAtomic(join(out, 'frame.png'), 'png')).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: expect.stringContaining('is a FIFO (named pipe), not a regular file'),
    });
    expect(writeFileAtomicSync(join(out, 'frame.png'), 'png')).toMatchObject({ ok: false, error: { code: ErrorCode.InvalidArgument } });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(lstatSync(join(out, 'frame.png')).isFIFO()).toBe(true);
    expect(readdirSync(out)).toEqual(['frame.png']);
  });

  it('refuses a device at the target (as root, a rename would replace /dev/full)', async () => {
    if (!existsSync('/dev/full')) return;
    await expect(writeFileAtomic('/dev/full', 'x')).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringContaining('a character device') });
    expect(lstatSync('/dev/full').isCharacterDevice()).toBe(true);
  });

  it('refuses a symlinked output folder, writing nothing where it points', async () => {
    const real = folder();
    const link = join(dir, `link-${folders}`);
    symlinkSync(real, link);
    await expect(writeFileAtomic(join(link, 'x.bin'), 'x')).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: expect.stringContaining(`output folder '${link}' is a symbolic link`),
    });
    expect(writeFileAtomicSync(join(link, 'x.bin'), 'x')).toMatchObject({ ok: false, error: { code: ErrorCode.InvalidArgument } });
    await expect(checkOutputFolder(link)).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    await expect(checkOutputFolder(real)).resolves.toBeUndefined();
    expect(readdirSync(real)).toEqual([]);
  });

  it('names a regular file given as the output folder as a regular file', async () => {
    const file = join(folder(), 'plain.txt');
    writeFileSync(file, 'x');
    await expect(checkOutputFolder(file)).rejects.toThrow(`InvalidArgument: output folder '${file}' is a regular file, not a directory`);
    await expect(writeFileAtomic(join(file, 'x.bin'), 'x')).rejects.toThrow(`output folder '${file}' is a regular file, not a directory`);
  });

  it('reports a missing folder as NotFound and a folder at the target as EISDIR, leaving no staging file', async () => {
    const out = folder();
    mkdirSync(join(out, 'taken'));
    await expect(writeFileAtomic(join(out, 'nope', 'x.bin'), 'x')).rejects.toMatchObject({ code: ErrorCode.NotFound });
    await expect(writeFileAtomic(join(out, 'taken'), 'x')).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: expect.stringMatching(/cannot write .*taken: EISDIR/),
    });
    expect(writeFileAtomicSync(join(out, 'taken'), 'x')).toMatchObject({ ok: false, error: { code: ErrorCode.InvalidArgument } });
    expect(readdirSync(out)).toEqual(['taken']);
  });

  it('leaves one whole file when several writers replace one target at once', async () => {
    const out = folder();
    const target = join(out, 'shared.bin');
    const contents = Array.from({ length: 6 }, (_, w) => new Uint8Array(256 * 1024).fill(w + 1));
    for (let round = 0; round < 4; round++) {
      const results = await Promise.allSettled(contents.map((c) => writeFileAtomic(target, c)));
      expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
      const sync = writeFileAtomicSync(target, contents[0]!);
      expect(sync.ok).toBe(true);
    }
    const final = readFileSync(target);
    expect(contents.some((c) => Buffer.compare(final, c) === 0)).toBe(true);
    expect(readdirSync(out)).toEqual(['shared.bin']);
  });
});

describe('openExclusive', () => {
  it('refuses a symlink or a FIFO at the path with AlreadyExists, at once, following neither', async () => {
    const out = folder();
    const victim = join(dir, `victim-${folders}`);
    writeFileSync(victim, 'precious');
    symlinkSync(victim, join(out, 'run.lock'));
    await expect(openExclusive(join(out, 'run.lock'))).rejects.toMatchObject({ code: ErrorCode.AlreadyExists });
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    if (hasMkfifo) {
      mkfifo(join(out, 'fifo.lock'));
      const started = performance.now();
      await expect(openExclusive(join(out, 'fifo.lock'))).rejects.toMatchObject({ code: ErrorCode.AlreadyExists });
      expect(performance.now() - started).toBeLessThan(2000);
    }
    const made = await openExclusive(join(out, 'new.lock'));
    await made.writeFile('1\n');
    await made.close();
    expect(readFileSync(join(out, 'new.lock'), 'utf8')).toBe('1\n');
  });
});

describe('readRegularFile', () => {
  it('refuses a FIFO with InvalidArgument naming it, without waiting for a writer', async () => {
    if (!hasMkfifo) return;
    const out = folder();
    const fifo = join(out, 'input.png');
    mkfifo(fifo);
    const started = performance.now();
    await expect(readRegularFile(fifo)).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringContaining('FIFO') });
    expect(readRegularFileSync(fifo)).toMatchObject({ ok: false, error: { code: ErrorCode.InvalidArgument, message: expect.stringContaining('FIFO') } });
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('reads regular files (sync and async), refuses directories, missing files and files over maxBytes', async () => {
    const out = folder();
    const file = join(out, 'data.bin');
    const bytes = Buffer.alloc(200_000, 7);
    writeFileSync(file, bytes);
    expect(Buffer.compare(await readRegularFile(file), bytes)).toBe(0);
    const sync = readRegularFileSync(file);
    expect(sync.ok && Buffer.compare(sync.value, bytes)).toBe(0);
    await expect(readRegularFile(out)).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringContaining('a directory') });
    await expect(readRegularFile(join(out, 'none'))).rejects.toMatchObject({ code: ErrorCode.NotFound });
    await expect(readRegularFile(file, { maxBytes: 1000 })).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    expect(readRegularFileSync(file, { maxBytes: 1000 })).toMatchObject({ ok: false, error: { code: ErrorCode.InvalidArgument } });
  });
});

describe('removeStaleStaging', () => {
  it("removes a dead pid's staging files and keeps live ones and other names", async () => {
    const out = folder();
    const dead = await deadPid();
    const stale = `grid.nvdb.${dead}.0123456789abcdef.hs-staging`;
    const live = `grid.nvdb.${process.pid}.fedcba9876543210.hs-staging`;
    for (const name of [stale, live, 'grid.nvdb', `grid.nvdb.${dead}.1.tmp`]) writeFileSync(join(out, name), 'x');
    expect(await removeStaleStaging(out)).toEqual([stale]);
    expect(readdirSync(out).sort()).toEqual([`grid.nvdb.${dead}.1.tmp`, 'grid.nvdb', live].sort());
    await expect(removeStaleStaging(join(out, 'none'))).rejects.toMatchObject({ code: ErrorCode.NotFound });
  });
});

// The issue's attack, for real: a second user plants links and FIFOs in a folder it owns; root writes there.
const isRoot = process.getuid?.() === 0;
const hasUseradd = ['/usr/sbin/useradd', '/usr/sbin/userdel', '/usr/sbin/runuser'].every((p) => existsSync(p));
const rootReason = !isRoot ? 'not root: the attack needs a root writer and a second user' : !hasUseradd ? 'useradd, userdel or runuser missing' : '';

describe.skipIf(rootReason !== '')(`as root against a second user's plants${rootReason === '' ? '' : ` (skipped: ${rootReason})`}`, () => {
  const user = `hsi22${process.pid}`;
  let scratch = '';
  afterAll(() => {
    try {
      execFileSync('/usr/sbin/userdel', [user], { stdio: 'ignore' });
    } catch {
      // Never made.
    }
    if (scratch !== '') rmSync(scratch, { recursive: true, force: true });
  });

  it("writes as root into the user's folder without following the user's symlink or blocking on its FIFO", async () => {
    execFileSync('/usr/sbin/useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', user], { stdio: 'ignore' });
    scratch = mkdtempSync(join(tmpdir(), 'hs-safe-files-root-'));
    chmodSync(scratch, 0o755);
    const victim = join(scratch, 'root-only');
    writeFileSync(victim, 'root secret', { mode: 0o600 });
    const shared = join(scratch, 'shared-out');
    mkdirSync(shared);
    execFileSync('chown', [user, shared]);
    const as = (...args: string[]): void => void execFileSync('/usr/sbin/runuser', ['-u', user, '--', ...args]);
    as('ln', '-s', victim, join(shared, 'volume.nvdb'));
    as('mkfifo', join(shared, '.lock'));
    as('ln', '-s', scratch, join(shared, 'out'));

    await writeFileAtomic(join(shared, 'volume.nvdb'), 'grid');
    expect(readFileSync(victim, 'utf8')).toBe('root secret');
    expect(lstatSync(join(shared, 'volume.nvdb')).isFile()).toBe(true);
    const started = performance.now();
    await expect(openExclusive(join(shared, '.lock'))).rejects.toMatchObject({ code: ErrorCode.AlreadyExists });
    await expect(readRegularFile(join(shared, '.lock'))).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    expect(performance.now() - started).toBeLessThan(2000);
    await expect(writeFileAtomic(join(shared, 'out', 'root-only'), 'grid')).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    expect(readFileSync(victim, 'utf8')).toBe('root secret');
  });
});
