import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CudaBackend, unwrap } from '@hs/streams';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { checkExactFiveSecondRun } from './exact-run.js';

// The same exact manual-clock run on the CUDA backend: the camera's pinned-host pool is then page-locked
// memory from the CUDA runtime. Registered in tooling/gpu/src/gpu-suites.mjs (`pnpm test:gpu --only sensor-fusion.cuda`).
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-sensor-fusion-cuda-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

if (CudaBackend.available()) {
  describe('sensor-fusion on CudaBackend', () => {
    it('runs the exact 5 s schedule on the CUDA backend with the same counts and integrals as on the host', async () => {
      const backend = unwrap(CudaBackend.create());
      try {
        await checkExactFiveSecondRun(backend, dir);
      } finally {
        backend.dispose();
      }
    });
  });
} else {
  describe('sensor-fusion on CudaBackend', () => {
    it.skip('needs a CUDA device and a built @hs/cuda-native (none here)', () => undefined);
  });
}
