import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('./fixtures/session-run-exit.mjs', import.meta.url));

/** Runs the fixture program as a user would (`node program.mjs`): its exit code and output. */
function program(mode: 'try-catch' | 'top-level' | 'floating', outcome: 'fail' | 'pass'): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [script, mode, outcome], { timeout: 60_000 }, (error, stdout, stderr) =>
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
    );
  });
}

// Issue 17: `await session.run()` in a try block must not "succeed" after the run failed.
describe('a failed session.run() reaches the process exit code', () => {
  it('in try/catch: the catch sees the HsError and the process exits 1', async () => {
    const run = await program('try-catch', 'fail');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('run failed: NotFound: operator source: planted: the camera is gone');
    expect(run.stdout).toBe('');
  });

  it('in try/catch, a run that succeeds exits 0', async () => {
    expect(await program('try-catch', 'pass')).toMatchObject({ code: 0, stdout: 'ran 1 frames\n', stderr: '' });
  });

  it.each(['top-level', 'floating'] as const)('%s, uncaught: Node reports the rejection and exits non-zero', async (mode) => {
    const run = await program(mode, 'fail');
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBeNull();
    expect(run.stderr).toContain('NotFound: operator source: planted: the camera is gone');
    expect(run.stdout).toBe('');
  });
});
