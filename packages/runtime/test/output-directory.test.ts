import { mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createOutputDirectory } from '../src/output-directory.js';

describe('createOutputDirectory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hs-out-dir-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates missing parents and accepts an existing folder', async () => {
    const target = join(dir, 'a', 'b', 'c');
    expect((await createOutputDirectory(target, '--out')).ok).toBe(true);
    expect(statSync(target).isDirectory()).toBe(true);
    expect((await createOutputDirectory(target, '--out')).ok).toBe(true);
  });

  it('refuses a file, or a path below a file, with ENOTDIR', async () => {
    const file = join(dir, 'file');
    writeFileSync(file, '');
    for (const target of [file, join(file, 'sub')]) {
      const made = await createOutputDirectory(target, '--out');
      expect(made.ok).toBe(false);
      if (!made.ok) expect(made.error.message).toBe(`InvalidArgument: --out: cannot create ${target}: ENOTDIR`);
    }
  });

  it('accepts folders another run creates at the same time (two runs into one new --out)', async () => {
    const target = join(dir, 'race', 'x', 'y', 'z');
    const made = await Promise.all(Array.from({ length: 8 }, () => createOutputDirectory(target, '--out')));
    expect(made.map((m) => (m.ok ? 'ok' : m.error.message))).toEqual(Array(8).fill('ok'));
    expect(statSync(target).isDirectory()).toBe(true);
  });

  // Node's recursive mkdir spins forever on both (its promise never settles).
  it('returns ENOENT below a dangling symbolic link instead of hanging', async () => {
    const link = join(dir, 'dangling');
    symlinkSync(join(dir, 'nowhere'), link);
    const made = await createOutputDirectory(join(link, 'out'), '--out');
    expect(made.ok).toBe(false);
    if (!made.ok) expect(made.error.message).toMatch(/--out: cannot create .*dangling\/out: (ENOENT|EEXIST)$/);
  });

  it.skipIf(process.platform !== 'linux')('returns ENOENT under /proc instead of hanging', async () => {
    const made = await createOutputDirectory('/proc/hs-no-such-folder/out');
    expect(made.ok).toBe(false);
    if (!made.ok) expect(made.error.message).toBe('InvalidArgument: cannot create /proc/hs-no-such-folder/out: ENOENT');
  });
});
