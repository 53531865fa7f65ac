// The built example (`node dist/main.js`) against the hs command-line convention (issue 25).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProgram } from '@hs/cli-options/testing';
import { describe, expect, it } from 'vitest';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');

describe('derived-capacity binary: the command-line convention', () => {
  it('takes -- and ends quietly with exit 0 when the reader of standard output goes away after the first line', async () => {
    const { code, stdout, stderr } = await spawnProgram(MAIN, ['--'], { closeStdoutAfterLines: 1 });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout.length).toBeGreaterThan(0);
  });

  it('answers an unknown option with exit 2, the message and the hint', async () => {
    const { code, stderr } = await spawnProgram(MAIN, ['--frames', '3']);
    expect({ code, stderr }).toEqual({ code: 2, stderr: "derived-capacity: unknown option '--frames'\nhint: derived-capacity --help lists the options\n" });
  });
});
