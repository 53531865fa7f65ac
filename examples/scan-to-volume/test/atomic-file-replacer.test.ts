import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '@hs/streams';
import { afterAll, describe, expect, it } from 'vitest';
import { AtomicFileReplacer } from '../src/operators/atomic-file-replacer.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-atomic-replace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('AtomicFileReplacer', () => {
  it('gives every replacer of one path its own staging file, named with the process id', () => {
    const path = join(dir, 'named.bin');
    const [a, b] = [new AtomicFileReplacer(path), new AtomicFileReplacer(path)];
    expect(a.stagingPath).not.toBe(b.stagingPath);
    for (const r of [a, b]) expect(r.stagingPath.startsWith(`${path}.${process.pid}.`) && r.stagingPath.endsWith('.tmp')).toBe(true);
  });

  it('lets several writers replace the same file at once: every write succeeds, the file is one whole write', async () => {
    const path = join(dir, 'shared.bin');
    const writers = Array.from({ length: 4 }, () => new AtomicFileReplacer(path));
    const contents = writers.map((_, w) => new Uint8Array(64 * 1024).fill(w + 1));
    for (let round = 0; round < 5; round++) {
      const results = await Promise.allSettled(writers.map((writer, w) => writer.write(contents[w]!)));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    }
    const final = readFileSync(path);
    expect(contents.some((c) => Buffer.compare(final, c) === 0)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('rejects a failed write with a typed error and removes its staging file', async () => {
    const folder = join(dir, 'taken');
    mkdirSync(join(folder, 'volume.nvdb'), { recursive: true });
    const target = join(folder, 'volume.nvdb');
    await expect(new AtomicFileReplacer(target).write(new Uint8Array(8))).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: expect.stringMatching(new RegExp(`^InvalidArgument: cannot write ${target.replaceAll('.', '\\.')}: EISDIR`)),
    });
    expect(readdirSync(folder)).toEqual(['volume.nvdb']);
    await expect(new AtomicFileReplacer(join(dir, 'no-such-folder', 'x.bin')).write(new Uint8Array(8))).rejects.toMatchObject({ code: ErrorCode.NotFound });
  });
});
