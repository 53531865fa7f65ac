import { CudaBackend } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { deviceMemoryFlat, soak } from '../src/soak.js';

const gpu = CudaBackend.available();
if (!gpu) console.log('CUDA soak skipped: no CUDA device or @hs/cuda-native not built');
// Under compute-sanitizer a short run checks slots and handles only: the tool's own allocations move
// device memory and every launch is slowed a hundredfold.
const sanitizer = process.env['HS_GPU_SANITIZER'] === '1';
const frames = Number(process.env['HS_SOAK_FRAMES'] ?? (sanitizer ? 300 : 20_000));

describe.skipIf(!gpu)('soak on the CUDA backend', () => {
  it('returns every slot, keeps stream and event counts constant and device memory flat after warm-up', async () => {
    const outcome = await soak({ frames, seed: 1, sampleEveryMs: 20, backend: 'cuda' });
    const m = outcome.deviceMemory;
    console.log(
      `soak.cuda: ${outcome.frames} frames in ${(outcome.elapsedMs / 1000).toFixed(2)} s; leaked slots ${outcome.leakedSlots}; ` +
        `streams ${outcome.streamCounts.join(',')}, events ${outcome.eventCounts.join(',')}; ` +
        (m === null
          ? 'device memory not sampled'
          : `pool used ${m.poolUsedAfterWarmup} -> ${m.poolUsedAtEnd} B, reserved ${m.poolReservedAfterWarmup} -> ${m.poolReservedAtEnd} B, device free ${m.freeAfterWarmup} -> ${m.freeAtEnd} B of ${m.total}`),
    );
    expect(outcome.backend).toBe('cuda');
    expect(outcome.runError).toBeNull();
    expect(outcome.frames).toBe(frames);
    expect(outcome.leakedSlots).toBe(0);
    expect(outcome.liveAfterDispose).toEqual({ streams: 0, events: 0, allocations: 0 });
    expect(outcome.streamCounts).toHaveLength(1);
    expect(outcome.eventCounts).toHaveLength(1);
    if (!sanitizer) {
      expect(m, 'device memory sampled after warm-up').not.toBeNull();
      expect(deviceMemoryFlat(m!)).toBe(true);
    }
  });
});

describe('deviceMemoryFlat', () => {
  const base = { poolUsedAfterWarmup: 100, poolUsedAtEnd: 100, poolReservedAfterWarmup: 200, poolReservedAtEnd: 200, freeAfterWarmup: 9000, freeAtEnd: 9000, total: 10_000 };
  it('is flat when nothing grew, and when the pool or the device gave memory back', () => {
    expect(deviceMemoryFlat(base)).toBe(true);
    expect(deviceMemoryFlat({ ...base, poolUsedAtEnd: 50, poolReservedAtEnd: 100, freeAtEnd: 9500 })).toBe(true);
  });
  it('is not flat when the pool hands out or holds more, or free memory drops by more than 1% of what was in use', () => {
    expect(deviceMemoryFlat({ ...base, poolUsedAtEnd: 101 })).toBe(false);
    expect(deviceMemoryFlat({ ...base, poolReservedAtEnd: 201 })).toBe(false);
    expect(deviceMemoryFlat({ ...base, freeAtEnd: 8989 })).toBe(false);
    expect(deviceMemoryFlat({ ...base, freeAtEnd: 8990 })).toBe(true);
  });
});
