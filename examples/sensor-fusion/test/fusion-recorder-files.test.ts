import { spawnSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rate } from '@hs/compiler';
import { ErrorCode } from '@hs/streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FusionRecorder } from '../src/operators/fusion-recorder.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-fusion-recorder-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const recorder = (path: string): FusionRecorder => new FusionRecorder('recorder', { path, rate: Rate.hz(10), entries: 4 });

describe('FusionRecorder in a shared folder', () => {
  it('replaces a symlink planted at its path (the target untouched) and removes staging files of dead runs', async () => {
    const out = join(dir, 'planted');
    await mkdir(out);
    const victim = join(dir, 'victim');
    await writeFile(victim, 'precious');
    await symlink(victim, join(out, 'fusion.jsonl'));
    const stale = `fusion.jsonl.${spawnSync(process.execPath, ['-e', '']).pid}.0123456789abcdef.hs-staging`;
    await writeFile(join(out, stale), 'half');
    const r = recorder(join(out, 'fusion.jsonl'));
    await r.start();
    await r.stop();
    expect(await readFile(victim, 'utf8')).toBe('precious');
    expect((await lstat(join(out, 'fusion.jsonl'))).isFile()).toBe(true);
    expect(await readdir(out)).toEqual(['fusion.jsonl']);
  });

  it('refuses a symlinked folder when the run starts', async () => {
    await mkdir(join(dir, 'real'));
    await symlink(join(dir, 'real'), join(dir, 'linked'));
    await expect(recorder(join(dir, 'linked', 'fusion.jsonl')).start()).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    expect(await readdir(join(dir, 'real'))).toEqual([]);
  });
});
