import { describe, expect, it } from 'vitest';
import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { runChaos } from '../src/chaos.js';

describe('chaos: seeded stream interleavings over every example, ordering checker on', () => {
  it('runs every example workload for each seed with zero ordering violations', async () => {
    const outcome = await runChaos([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(outcome.problems).toEqual([]);
    expect(outcome.runs).toBe(outcome.workloads.length * 8);
    expect(outcome.violations).toBe(0);
  });

  it('the checker is live under seeded scheduling: an unordered cross-stream read is reported', async () => {
    const backend = new HostBackend({ seed: 3, orderingChecker: true });
    const cuda0 = Device.cuda(0);
    const a = unwrap(backend.createStream(cuda0));
    const b = unwrap(backend.createStream(cuda0));
    const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 64 }));
    const range = { memory, byteOffset: 0, byteLength: 64, label: 'racy' };
    unwrap(backend.memsetAsync(a, range, 1));
    unwrap(backend.copyToHostAsync(b, new Uint8Array(64), range));
    await backend.synchronizeStream(a);
    await backend.synchronizeStream(b);
    expect(backend.orderingChecker?.violations.length).toBeGreaterThan(0);
    backend.dispose();
  });
});
