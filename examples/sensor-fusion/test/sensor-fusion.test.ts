import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { checkExactFiveSecondRun } from './exact-run.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-sensor-fusion-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('sensor-fusion on the manual clock', () => {
  it('frame k takes exactly the IMU samples in ((k-1)/60, k/60] s; the recorder drops, the fusion keeps its rate', async () => {
    await checkExactFiveSecondRun('host', dir);
  });
});
