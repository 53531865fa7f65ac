import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// consume.py's own Python tests (examples/python-consumer/test: HELLO and read timeouts against a fake
// publisher), run from pnpm test so a change to the wire or the script cannot skip them.
const python = spawnSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' }).status === 0;
const tests = fileURLToPath(new URL('../../../examples/python-consumer/test', import.meta.url));

describe.skipIf(!python)('examples/python-consumer unittests (skipped without python3 and NumPy)', () => {
  it('pass', () => {
    const run = spawnSync('python3', ['-m', 'unittest', 'discover', '-s', tests], { encoding: 'utf8', timeout: 120_000 });
    expect(run.stderr).toMatch(/Ran [1-9]\d* tests?/);
    expect(run.status, run.stderr).toBe(0);
  }, 130_000);
});
