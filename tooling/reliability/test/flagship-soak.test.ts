import { expect, it } from 'vitest';
import { flagshipSoak } from '../src/flagship-soak.js';

// The short CI version of the flagship part of `pnpm soak` (HS_SOAK_FLAGSHIP_FRAMES frames there).
it('flagship soak (short): scan-to-volume returns every slot and every resource byte, counts stay constant', async () => {
  const outcome = await flagshipSoak({ frames: Number(process.env.HS_SOAK_FLAGSHIP_FRAMES ?? 72), seed: 1, sampleEveryMs: 20 });
  expect(outcome.runError).toBeNull();
  expect(outcome.frames).toBe(72);
  expect(outcome.leakedSlots).toBe(0);
  expect(outcome.liveAfterDispose).toEqual({ streams: 0, events: 0, allocations: 0 });
  expect(outcome.streamCounts).toHaveLength(1);
  expect(outcome.eventCounts).toHaveLength(1);
  expect(outcome.voxelCount).toBe(outcome.expectedVoxelCount);
  expect(outcome.resourceBytesOutstanding).toBe(0);
  expect([outcome.nvdbWrites, outcome.previews]).toEqual([72, 18]);
}, 120_000);
