import { expect, it } from 'vitest';
import { soak } from '../src/soak.js';

// The short CI version of `pnpm soak` (which runs 1e6 frames and also checks heap and RSS growth).
it('soak (short): the image-pipeline graph returns every slot and keeps stream and event counts constant', async () => {
  const outcome = await soak({ frames: Number(process.env.HS_SOAK_FRAMES ?? 3000), seed: 1, sampleEveryMs: 20 });
  expect(outcome.runError).toBeNull();
  expect(outcome.frames).toBe(Number(process.env.HS_SOAK_FRAMES ?? 3000));
  expect(outcome.leakedSlots).toBe(0);
  expect(outcome.liveAfterDispose).toEqual({ streams: 0, events: 0, allocations: 0 });
  expect(outcome.streamCounts).toHaveLength(1);
  expect(outcome.eventCounts).toHaveLength(1);
});
