import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import {
  AsyncFromSync,
  DeviceResource,
  HostResource,
  MallocResource,
  ManagedResource,
  PinnedResource,
  defaultResource,
  deviceAccessible,
  hostAccessible,
  isAsyncResource,
  isResource,
} from '../src/index.js';

const cuda0 = Device.cuda(0);

describe('resource concept', () => {
  it('detects the tiers; an object with only the async pair is not an async resource', () => {
    const sync = { allocate: () => unwrap({ ok: true, value: null }), deallocate: () => undefined };
    const onlyAsync = { allocateAsync: () => null, deallocateAsync: () => null };
    expect(isResource(sync)).toBe(true);
    expect(isAsyncResource(sync)).toBe(false);
    expect(isResource(onlyAsync)).toBe(false);
    expect(isAsyncResource(onlyAsync)).toBe(false);
    expect(isAsyncResource({ ...sync, ...onlyAsync })).toBe(true);
    expect(isResource(null)).toBe(false);
    expect(isResource('allocate')).toBe(false);
  });

  it('reports accessibility per memory kind; undeclared counts as false', () => {
    const b = new HostBackend();
    expect([hostAccessible(new HostResource(b)), deviceAccessible(new HostResource(b))]).toEqual([true, false]);
    expect([hostAccessible(new PinnedResource(b)), deviceAccessible(new PinnedResource(b))]).toEqual([true, true]);
    expect([hostAccessible(new DeviceResource(b, cuda0)), deviceAccessible(new DeviceResource(b, cuda0))]).toEqual([false, true]);
    expect([hostAccessible(new ManagedResource(b, cuda0)), deviceAccessible(new ManagedResource(b, cuda0))]).toEqual([true, true]);
    expect(hostAccessible({ allocate: () => ({ ok: true, value: null }), deallocate: () => ({ ok: true, value: undefined }) })).toBe(false);
    b.dispose();
  });

  it('defaultResource has stable identity per backend, kind and device, and picks the resource by kind', () => {
    const b = new HostBackend({ deviceCount: 2 });
    const d0 = unwrap(defaultResource(b, MemoryKind.CudaDevice, cuda0));
    expect(unwrap(defaultResource(b, MemoryKind.CudaDevice, cuda0))).toBe(d0);
    expect(unwrap(defaultResource(b, MemoryKind.CudaDevice, Device.cuda(1)))).not.toBe(d0);
    expect(d0).toBeInstanceOf(DeviceResource);
    expect(unwrap(defaultResource(b, MemoryKind.Host, Device.cpu()))).toBeInstanceOf(HostResource);
    expect(unwrap(defaultResource(b, MemoryKind.PinnedHost, Device.cpu()))).toBeInstanceOf(PinnedResource);
    expect(unwrap(defaultResource(b, MemoryKind.CudaManaged, cuda0))).toBeInstanceOf(ManagedResource);
    const other = new HostBackend();
    expect(unwrap(defaultResource(other, MemoryKind.CudaDevice, cuda0))).not.toBe(d0);
    for (const [kind, device] of [[MemoryKind.Host, cuda0], [MemoryKind.CudaDevice, Device.cpu()], [MemoryKind.CudaDevice, Device.cuda(7)]] as const) {
      const r = defaultResource(b, kind, device);
      expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
    }
    const noBackend = defaultResource(null as never, MemoryKind.Host, Device.cpu());
    expect(noBackend.ok ? '' : noBackend.error.message).toBe('InvalidArgument: defaultResource: expected a Backend (for example new HostBackend()), got null');
    b.dispose();
    other.dispose();
  });

  it('MallocResource.allocate(0) gives null and touches nothing', () => {
    const b = new HostBackend();
    expect(unwrap(new MallocResource(b, cuda0).allocate(0))).toBeNull();
    unwrap(new MallocResource(b, cuda0).deallocate(null, 0));
    b.dispose();
  });

  it('DeviceResource fails on a pool-less device with an actionable NotSupported and no fallback', () => {
    const b = new HostBackend({ memoryPools: false });
    const s = unwrap(b.createStream(cuda0));
    const device = new DeviceResource(b, cuda0);
    for (const r of [device.allocate(1024), device.allocateAsync(1024, 256, s)]) {
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe(ErrorCode.NotSupported);
        expect(r.error.message).toContain('new AsyncFromSync(backend, new MallocResource(backend, device))');
      }
    }
    // The opt-in works there.
    const optIn = new AsyncFromSync(b, new MallocResource(b, cuda0));
    const block = unwrap(optIn.allocateAsync(1024, 256, s));
    unwrap(optIn.deallocateAsync(block, 1024, 256, s));
    b.dispose();
  });

  it('refuses a block of another resource kind and a block returned twice', () => {
    const b = new HostBackend();
    const host = new HostResource(b);
    const device = new DeviceResource(b, cuda0);
    const block = unwrap(device.allocate(64));
    const foreign = host.deallocate(block, 64);
    expect(!foreign.ok && foreign.error.code).toBe(ErrorCode.InvalidArgument);
    unwrap(device.deallocate(block, 64));
    const twice = device.deallocate(block, 64);
    expect(!twice.ok && twice.error.code).toBe(ErrorCode.InvalidState);
    b.dispose();
  });

  it('throws HsError for wrong argument types', () => {
    const b = new HostBackend();
    expect(() => new DeviceResource(b, Device.cpu())).toThrow(/CUDA device/);
    expect(() => new HostResource({} as HostBackend)).toThrow(/Backend/);
    b.dispose();
  });
});
