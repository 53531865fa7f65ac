import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, unwrap } from '@hs/streams';
import { DeviceResource, FaultyResource, HostResource, StatisticsResource, isAsyncResource, type MemoryBlock, type SyncResource } from '../src/index.js';

const cuda0 = Device.cuda(0);

/** Runs `count` allocate calls of 64 bytes; returns which numbers (from 1) failed, and frees the rest. */
function faultPattern(resource: SyncResource, count: number): number[] {
  const failed: number[] = [];
  const made: (MemoryBlock | null)[] = [];
  for (let i = 1; i <= count; i++) {
    const r = resource.allocate(64, 256);
    if (r.ok) made.push(r.value);
    else {
      expect(r.error.code).toBe(ErrorCode.OutOfMemory);
      expect(r.error.message).toContain(`injected fault at allocation ${i}`);
      failed.push(i);
    }
  }
  for (const block of made) unwrap(resource.deallocate(block, 64, 256));
  return failed;
}

describe('FaultyResource', () => {
  it('fails exactly the Nth request, before the upstream, and passes every other one through', () => {
    const b = new HostBackend();
    const stats = new StatisticsResource(new HostResource(b));
    const faulty = new FaultyResource(stats, { failAt: 3 });
    expect(faultPattern(faulty, 6)).toEqual([3]);
    expect(faulty.requests).toBe(6);
    expect(faulty.faultsInjected).toBe(1);
    expect(stats.statistics.allocations.total).toBe(5);
    expect(stats.statistics.allocations.current).toBe(0);
    b.dispose();
  });

  it('with repeat, fails every request from the Nth on (a resource that ran dry)', () => {
    const b = new HostBackend();
    const faulty = new FaultyResource(new HostResource(b), { failAt: 2, repeat: true });
    expect(faultPattern(faulty, 5)).toEqual([2, 3, 4, 5]);
    b.dispose();
  });

  it('random faults reproduce from the seed, differ across seeds, and follow the probability', () => {
    const b = new HostBackend();
    const run = (seed: number, probability: number): number[] => faultPattern(new FaultyResource(new HostResource(b), { probability, seed }), 400);
    const a = run(42, 0.25);
    expect(run(42, 0.25)).toEqual(a);
    expect(run(43, 0.25)).not.toEqual(a);
    expect(a.length).toBeGreaterThan(50);
    expect(a.length).toBeLessThan(150);
    expect(run(7, 0)).toEqual([]);
    expect(run(7, 1)).toHaveLength(400);
    b.dispose();
  });

  it('keeps the async tier and injects faults into allocateAsync too', async () => {
    const b = new HostBackend();
    const stream = unwrap(b.createStream(cuda0));
    const faulty = new FaultyResource(new DeviceResource(b, cuda0), { failAt: 1 });
    expect(isAsyncResource(faulty)).toBe(true);
    const first = faulty.allocateAsync(128, 256, stream);
    expect(!first.ok && first.error.code).toBe(ErrorCode.OutOfMemory);
    const second = unwrap(faulty.allocateAsync(128, 256, stream));
    unwrap(faulty.deallocateAsync(second, 128, 256, stream));
    await b.synchronizeStream(stream);
    expect(isAsyncResource(new FaultyResource(new HostResource(b), { failAt: 1 }))).toBe(false);
    b.dispose();
  });

  it('does not count or fault invalid requests: they get InvalidArgument', () => {
    const b = new HostBackend();
    const faulty = new FaultyResource(new HostResource(b), { failAt: 1 });
    const bad = faulty.allocate(-1, 256);
    expect(!bad.ok && bad.error.code).toBe(ErrorCode.InvalidArgument);
    expect(faulty.requests).toBe(0);
    b.dispose();
  });

  it('rejects bad options with InvalidArgument naming the option', () => {
    const b = new HostBackend();
    const up = new HostResource(b);
    expect(() => new FaultyResource(up, {})).toThrow(/exactly one of failAt/);
    expect(() => new FaultyResource(up, { failAt: 1, probability: 0.5 })).toThrow(/exactly one of failAt/);
    expect(() => new FaultyResource(up, { failAt: 0 })).toThrow(/failAt must be a positive/);
    expect(() => new FaultyResource(up, { probability: 1.5 })).toThrow(/probability must be/);
    expect(() => new FaultyResource(up, { probability: Number.NaN })).toThrow(/probability must be/);
    expect(() => new FaultyResource(up, { probability: 0.5, seed: Infinity })).toThrow(/seed must be/);
    expect(() => new FaultyResource({} as SyncResource, { failAt: 1 })).toThrow(/upstream must be a resource/);
    b.dispose();
  });
});
