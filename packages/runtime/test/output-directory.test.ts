import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '@hs/streams';
import { afterAll, describe, expect, it } from 'vitest';
import { createOutputDirectory } from '../src/output-directory.js';
import { rejectionOf } from './rejection.js';

describe('createOutputDirectory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hs-out-dir-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates missing parents and accepts an existing folder', async () => {
    const target = join(dir, 'a', 'b', 'c');
    await expect(createOutputDirectory(target, '--out')).resolves.toBeUndefined();
    expect(statSync(target).isDirectory()).toBe(true);
    await expect(createOutputDirectory(target, '--out')).resolves.toBeUndefined();
  });

  it('rejects a file, or a path below a file, with ENOTDIR', async () => {
    const file = join(dir, 'file');
    writeFileSync(file, '');
    for (const target of [file, join(file, 'sub')]) {
      const made = await rejectionOf(createOutputDirectory(target, '--out'));
      expect(made.code).toBe(ErrorCode.InvalidArgument);
      expect(made.message).toBe(`InvalidArgument: --out: cannot create ${target}: ENOTDIR`);
      expect((made.cause as NodeJS.ErrnoException).code).toBe('ENOTDIR');
    }
  });

  it('rejects a folder that is not a path with InvalidArgument, not a TypeError', async () => {
    for (const bad of [null, 5, undefined]) {
      const made = await rejectionOf(createOutputDirectory(bad as never, '--out'));
      expect(made.message).toBe(`InvalidArgument: --out: the output folder must be a path (a string), got ${String(bad)}`);
    }
  });

  it('accepts folders another run creates at the same time (two runs into one new --out)', async () => {
    const target = join(dir, 'race', 'x', 'y', 'z');
    const made = await Promise.allSettled(Array.from({ length: 8 }, () => createOutputDirectory(target, '--out')));
    expect(made.map((m) => m.status)).toEqual(Array(8).fill('fulfilled'));
    expect(statSync(target).isDirectory()).toBe(true);
  });

  it('refuses an output folder that is a symbolic link (to a folder of someone else), accepting links above it', async () => {
    const real = join(dir, 'someone-elses');
    mkdirSync(real);
    writeFileSync(join(real, 'keep'), 'x');
    const link = join(dir, 'planted');
    symlinkSync(real, link);
    const made = await rejectionOf(createOutputDirectory(link, '--out'));
    expect(made.code).toBe(ErrorCode.InvalidArgument);
    expect(made.message).toMatch(new RegExp(`^InvalidArgument: --out: output folder '${link}' is a symbolic link`));
    await expect(createOutputDirectory(join(link, 'below'), '--out')).resolves.toBeUndefined();
    expect(readdirSync(real).sort()).toEqual(['below', 'keep']);
  });

  // Node's recursive mkdir spins forever on both (its promise never settles).
  it('rejects with ENOENT below a dangling symbolic link instead of hanging', async () => {
    const link = join(dir, 'dangling');
    symlinkSync(join(dir, 'nowhere'), link);
    const made = await rejectionOf(createOutputDirectory(join(link, 'out'), '--out'));
    expect(made.message).toMatch(/--out: cannot create .*dangling\/out: (ENOENT|EEXIST)$/);
  });

  it.skipIf(process.platform !== 'linux')('rejects with ENOENT under /proc instead of hanging', async () => {
    const made = await rejectionOf(createOutputDirectory('/proc/hs-no-such-folder/out'));
    expect(made.message).toBe('InvalidArgument: cannot create /proc/hs-no-such-folder/out: ENOENT');
  });
});
