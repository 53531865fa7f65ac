import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode, fileSystemError } from '../src/index.js';

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (cause) {
    return cause;
  }
  throw new Error('expected a throw');
}

describe('fileSystemError: one typed line per failed file-system call', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hs-fs-error-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a missing file is NotFound, naming the action, the path and the OS code, and keeps the cause', () => {
    const cause = thrown(() => readFileSync(join(dir, 'nope.ply')));
    const e = fileSystemError('read', 'nope.ply', cause);
    expect(e.error.code).toBe(ErrorCode.NotFound);
    expect(e.error.detail).toBe('cannot read nope.ply: ENOENT: no such file or directory');
    expect(e.error.cause).toBe(cause);
  });

  it('a directory where a file is expected is InvalidArgument with EISDIR', () => {
    const e = fileSystemError('read', `input '${dir}'`, thrown(() => readFileSync(dir)));
    expect(e.error.code).toBe(ErrorCode.InvalidArgument);
    expect(e.error.detail).toBe(`cannot read input '${dir}': EISDIR: illegal operation on a directory`);
  });

  it('EACCES and EPERM are PermissionDenied; a non-errno throw is reported as it is', () => {
    for (const code of ['EACCES', 'EPERM']) {
      const e = fileSystemError('create', 'out', Object.assign(new Error(`${code}: operation not permitted, mkdir 'out'`), { code }));
      expect(e.error.code).toBe(ErrorCode.PermissionDenied);
      expect(e.error.detail).toBe(`cannot create out: ${code}: operation not permitted`);
    }
    const odd = fileSystemError('write', 'x', 'disk on fire');
    expect(odd.error.code).toBe(ErrorCode.InvalidArgument);
    expect(odd.error.detail).toBe('cannot write x: unknown error: disk on fire');
  });
});
