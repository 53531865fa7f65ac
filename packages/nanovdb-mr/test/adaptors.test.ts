import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, unwrap } from '@hs/streams';
import {
  AsyncFromSync,
  DeviceResource,
  HostResource,
  LimitingResource,
  MallocResource,
  ResourceRef,
  SharedResource,
  StatisticsResource,
  TrackingResource,
  isAsyncResource,
  type MemoryBlock,
  type SyncResource,
} from '../src/index.js';

const cuda0 = Device.cuda(0);

describe('adaptors', () => {
  it('AsyncFromSync frees on the stream only after the work enqueued before it ran, without blocking', async () => {
    const b = new HostBackend({ scheduling: 'manual' });
    const s = unwrap(b.createStream(cuda0));
    const malloc = new MallocResource(b, cuda0);
    const lifted = new AsyncFromSync(b, malloc);
    const block = unwrap(lifted.allocateAsync(256, 256, s)) as MemoryBlock;
    unwrap(b.memsetAsync(s, block, 9));
    unwrap(lifted.deallocateAsync(block, 256, 256, s));
    expect(block.memory.freed).toBe(false); // still in use by the queued memset
    b.runUntilIdle();
    expect(block.memory.freed).toBe(true);
    b.dispose();
  });

  it('AsyncFromSync reports an upstream deallocate failure as a stream fault', async () => {
    const b = new HostBackend();
    const s = unwrap(b.createStream(cuda0));
    const lifted = new AsyncFromSync(b, new MallocResource(b, cuda0));
    const block = unwrap(lifted.allocate(256));
    unwrap(lifted.deallocate(block, 256));
    unwrap(lifted.deallocateAsync(block, 256, 256, s)); // enqueued; fails when it runs
    await expect(b.synchronizeStream(s)).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.DeviceError });
    b.dispose();
  });

  it('ResourceRef keeps the tier and compares by identity', () => {
    const b = new HostBackend();
    const device = new DeviceResource(b, cuda0);
    const host = new HostResource(b);
    const dref = new ResourceRef(device);
    const href = new ResourceRef(host);
    expect(isAsyncResource(dref)).toBe(true);
    expect(isAsyncResource(href)).toBe(false);
    expect(href.allocateAsync).toBeUndefined();
    expect(dref.equals(new ResourceRef(device))).toBe(true);
    expect(dref.equals(device)).toBe(true);
    expect(dref.equals(new ResourceRef(new DeviceResource(b, cuda0)))).toBe(false);
    expect(dref.hostAccessible).toBe(false);
    expect(href.hostAccessible).toBe(true);
    b.dispose();
  });

  it('SharedResource shares state across copies and disposes the upstream with the last owner', () => {
    let disposed = 0;
    const b = new HostBackend();
    const host = new HostResource(b);
    const upstream = Object.assign(Object.create(host) as HostResource, { dispose: () => void disposed++ });
    const first = new SharedResource(upstream);
    const second = unwrap(first.share());
    expect(first.useCount).toBe(2);
    expect(second.equals(first)).toBe(true);
    expect(new SharedResource(upstream).equals(first)).toBe(false);
    first.dispose();
    first.dispose();
    expect(second.useCount).toBe(1);
    expect(disposed).toBe(0);
    const refused = first.allocate(8);
    expect(!refused.ok && refused.error.code).toBe(ErrorCode.InvalidState);
    const block = unwrap(second.allocate(8));
    unwrap(second.deallocate(block, 8));
    second.dispose();
    expect(disposed).toBe(1);
    expect(second.useCount).toBe(0);
    b.dispose();
  });

  it('StatisticsResource counts current, peak and total, with nested scopes folded on pop', () => {
    const b = new HostBackend();
    const stats = new StatisticsResource(new HostResource(b));
    const a = unwrap(stats.allocate(100));
    const c = unwrap(stats.allocate(50));
    unwrap(stats.deallocate(c, 50));
    expect(stats.statistics.bytes).toEqual({ current: 100, peak: 150, total: 150 });
    expect(stats.pushCounters()).toBe(2);
    const inner = unwrap(stats.allocate(400));
    unwrap(stats.deallocate(inner, 400));
    const scope = unwrap(stats.popCounters());
    expect(scope.bytes).toEqual({ current: 0, peak: 400, total: 400 });
    expect(scope.allocations).toEqual({ current: 0, peak: 1, total: 1 });
    expect(stats.statistics.bytes).toEqual({ current: 100, peak: 500, total: 550 });
    expect(stats.popCounters().ok).toBe(false);
    const failed = stats.allocate(2 ** 50);
    expect(!failed.ok && failed.error.code).toBe(ErrorCode.OutOfMemory);
    expect(stats.statistics.allocations.total).toBe(3);
    unwrap(stats.deallocate(a, 100));
    b.dispose();
  });

  it('TrackingResource lists outstanding allocations with stacks and reports leaks', () => {
    const b = new HostBackend();
    const tracking = new TrackingResource(new HostResource(b), { captureStacks: true });
    const kept = unwrap(tracking.allocate(64));
    const freed = unwrap(tracking.allocate(32));
    unwrap(tracking.deallocate(freed, 32));
    expect(tracking.outstanding.map((a) => a.bytes)).toEqual([64]);
    expect(tracking.outstandingBytes).toBe(64);
    expect(tracking.outstanding[0]?.stack).toContain('adaptors.test.ts');
    expect(tracking.leakReport()).toMatch(/^1 outstanding allocation\(s\), 64 bytes:\n {2}64 bytes \(alignment 256\) at 0x/);
    unwrap(tracking.deallocate(kept, 64));
    expect(tracking.leakReport()).toBe('no leaks');
    b.dispose();
  });

  it('LimitingResource refuses past its limit with OutOfMemory before reaching the upstream', () => {
    const b = new HostBackend();
    const stats = new StatisticsResource(new HostResource(b));
    const limited = new LimitingResource(stats, 1000);
    const a = unwrap(limited.allocate(600));
    const over = limited.allocate(401);
    expect(!over.ok && over.error.code).toBe(ErrorCode.OutOfMemory);
    expect(stats.statistics.allocations.total).toBe(1);
    const c = unwrap(limited.allocate(400));
    expect(limited.allocatedBytes).toBe(1000);
    unwrap(limited.deallocate(a, 600));
    unwrap(limited.deallocate(c, 400));
    expect(limited.allocatedBytes).toBe(0);
    expect(() => new LimitingResource(stats, -1)).toThrow(/limitBytes/);
    b.dispose();
  });

  it('adaptors compose and reject a non-resource upstream', () => {
    const b = new HostBackend();
    const chain: SyncResource = new StatisticsResource(new TrackingResource(new LimitingResource(new DeviceResource(b, cuda0), 1 << 20)));
    expect(isAsyncResource(chain)).toBe(true);
    expect(() => new StatisticsResource({} as SyncResource)).toThrow(/upstream must be a resource/);
    expect(() => new TrackingResource(new HostResource(b), null as never)).toThrow('TrackingResource: options must be an object, not null');
    expect(() => new TrackingResource(new HostResource(b), { captureStack: true } as never)).toThrow("TrackingResource: unknown option 'captureStack'; did you mean 'captureStacks'?");
    b.dispose();
  });
});
