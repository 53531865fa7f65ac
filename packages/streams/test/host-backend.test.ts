import { describe, expect, it, vi } from 'vitest';
import { createRequire } from 'node:module';
import { Device, ErrorCode, HostBackend, HsError, MemoryKind, unwrap, type Backend, type MemoryRange } from '../src/index.js';

const cuda0 = Device.cuda(0);

describe('HostBackend options', () => {
  it('emulates the requested number of CUDA devices', () => {
    const backend = new HostBackend({ deviceCount: 3 });
    expect(backend.devices).toEqual([Device.cuda(0), Device.cuda(1), Device.cuda(2)]);
    expect(backend.name).toBe('host');
    expect(backend.orderingChecker).toBeUndefined();
    expect(unwrap(backend.createStream(Device.cuda(2))).device).toBe(Device.cuda(2));
    const refused = backend.createStream(Device.cuda(3));
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error.message).toContain('cuda:0, cuda:1, cuda:2');
    backend.dispose();
  });

  it('throws HsError for malformed options', () => {
    expect(() => new HostBackend({ deviceCount: -1 })).toThrow(HsError);
    expect(() => new HostBackend({ deviceCount: 1.5 })).toThrow(/deviceCount/);
    expect(() => new HostBackend({ scheduling: 'eager' as 'auto' })).toThrow(/scheduling/);
    expect(() => new HostBackend({ seed: Number.NaN })).toThrow(/seed/);
    expect(() => new HostBackend({ orderingChecker: { maxViolations: -2 } })).toThrow(/maxViolations/);
  });

  it('refuses a misspelt option instead of applying the default, naming the closest field', () => {
    expect(() => new HostBackend({ deviceCont: 2 } as never)).toThrow("HostBackend: unknown option 'deviceCont'; did you mean 'deviceCount'?");
    expect(() => new HostBackend({ gpus: 2 } as never)).toThrow(/unknown option 'gpus'; the options are deviceCount, scheduling, seed/);
    expect(() => new HostBackend({ orderingChecker: { maxViolation: 3 } } as never)).toThrow("HostBackend: orderingChecker: unknown option 'maxViolation'; did you mean 'maxViolations'?");
    // Options that are not an object are a typed error, not a TypeError from deep inside.
    expect(() => new HostBackend(null as never)).toThrow(new HsError(ErrorCode.InvalidArgument, 'HostBackend: options must be an object, not null'));
    expect(() => new HostBackend({ orderingChecker: null } as never)).toThrow('HostBackend: orderingChecker must be true, false or { onViolation?, maxViolations? }, got null');
    const backend = new HostBackend({ deviceCount: 2, peerAccess: false, memoryPools: true, seed: 1, scheduling: 'manual', orderingChecker: { maxViolations: 1 } });
    expect(backend.devices).toHaveLength(2);
    backend.dispose();
  });
});

describe('Device', () => {
  it('refuses an ordinal that is not a whole number >= 0 with a typed InvalidArgument', () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) {
      let thrown: unknown;
      try {
        Device.cuda(bad);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(HsError);
      expect((thrown as HsError).code).toBe(ErrorCode.InvalidArgument);
      expect((thrown as HsError).message).toContain(`got ${String(bad)}`);
    }
    expect(() => Device.cuda('1' as never)).toThrow('got "1" (a string)');
    expect(Device.cuda(1)).toBe(Device.cuda(1));
  });
});

describe('HostBackend memory', () => {
  it('keeps device memory of another device away from a stream', () => {
    const backend = new HostBackend({ deviceCount: 2 });
    const s0 = unwrap(backend.createStream(cuda0));
    const m1 = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(1), byteSize: 8 }));
    const r = backend.memsetAsync(s0, { memory: m1, byteOffset: 0, byteLength: 8, label: 'far' }, 0);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe(ErrorCode.NotSupported);
      expect(r.error.message).toContain('cuda:1');
    }
    // A copy may cross devices.
    const m0 = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 8 }));
    expect(backend.memcpyAsync(s0, { memory: m0, byteOffset: 0, byteLength: 8, label: 'near' }, { memory: m1, byteOffset: 0, byteLength: 8, label: 'far' }).ok).toBe(true);
    backend.dispose();
  });

  it('lets work queued before free() finish on the old bytes', async () => {
    const backend = new HostBackend();
    const s = unwrap(backend.createStream(cuda0));
    const m = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 4 }));
    const out = new Uint8Array(4);
    unwrap(backend.memsetAsync(s, { memory: m, byteOffset: 0, byteLength: 4, label: 't' }, 6));
    unwrap(backend.copyToHostAsync(s, out, { memory: m, byteOffset: 0, byteLength: 4, label: 't' }));
    unwrap(backend.free(m));
    await backend.synchronizeStream(s);
    expect([...out]).toEqual([6, 6, 6, 6]);
    backend.dispose();
  });

  it('names the allocation and the bounds when a range is outside it', () => {
    const backend = new HostBackend();
    const s = unwrap(backend.createStream(cuda0));
    const m = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 16, label: 'gray slot 0' }));
    const r = backend.memsetAsync(s, { memory: m, byteOffset: 8, byteLength: 16, label: 'gray' }, 0);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/memsetAsync: dst range "gray" \(byteOffset 8, byteLength 16\).*"gray slot 0" of 16 bytes/);
    backend.dispose();
  });

  it('says what it expected when free() or hostView() gets no memory at all', () => {
    const backend = new HostBackend();
    expect(() => backend.free(undefined as never)).toThrow('free: expected DeviceMemory, got undefined');
    expect(() => backend.hostView(null as never)).toThrow('hostView: expected DeviceMemory, got null');
    backend.dispose();
  });
});

describe('HostBackend handles', () => {
  it('throws from queryEvent for destroyed or foreign events (a boolean cannot carry the error)', () => {
    const backend = new HostBackend();
    const other = new HostBackend();
    const e = unwrap(backend.createEvent(cuda0));
    unwrap(backend.destroyEvent(e));
    expect(() => backend.queryEvent(e)).toThrow(/InvalidState/);
    expect(() => backend.queryEvent(unwrap(other.createEvent(cuda0)))).toThrow(/InvalidArgument/);
    expect(() => backend.step(unwrap(other.createStream(cuda0)))).toThrow(/InvalidArgument/);
    backend.dispose();
    other.dispose();
  });

  it('refuses to record an event on a stream of another device', () => {
    const backend = new HostBackend({ deviceCount: 2 });
    const e = unwrap(backend.createEvent(Device.cuda(1)));
    const s = unwrap(backend.createStream(cuda0));
    const r = backend.recordEvent(e, s);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe(ErrorCode.InvalidArgument);
    backend.dispose();
  });
});

describe('HostBackend faults', () => {
  it('reports a throwing kernel through synchronization and onFault, and keeps running later work', async () => {
    const onFault = vi.fn();
    const backend = new HostBackend({ onFault });
    const s = unwrap(backend.createStream(cuda0, { label: 'compute' }));
    const before = unwrap(backend.createEvent(cuda0));
    const after = unwrap(backend.createEvent(cuda0));
    const m = unwrap(backend.allocate({ kind: MemoryKind.CudaManaged, device: cuda0, byteSize: 4 }));
    const range: MemoryRange = { memory: m, byteOffset: 0, byteLength: 4, label: 't' };
    unwrap(backend.recordEvent(before, s));
    unwrap(backend.launchKernel(s, { name: 'hs.test.boom', reads: [], writes: [range], params: [], host: () => { throw new Error('bad index'); } }));
    unwrap(backend.recordEvent(after, s));
    unwrap(backend.memsetAsync(s, range, 1));
    const error: unknown = await backend.synchronizeStream(s).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HsError);
    expect(error).toMatchObject({ code: ErrorCode.DeviceError, message: expect.stringContaining('kernel hs.test.boom on stream "compute" threw: bad index') });
    expect((error as HsError).cause).toBeInstanceOf(Error);
    await expect(backend.synchronizeEvent(before)).resolves.toBeUndefined();
    await expect(backend.synchronizeEvent(after)).rejects.toBe(error);
    expect(onFault).toHaveBeenCalledTimes(1);
    expect([...unwrap(backend.hostView(m))]).toEqual([1, 1, 1, 1]);
    backend.dispose();
  });
});

describe('HostBackend dispose', () => {
  it('rejects pending synchronizations with InvalidState and drops queued work', async () => {
    const backend = new HostBackend({ scheduling: 'manual' });
    const s = unwrap(backend.createStream(cuda0));
    const e = unwrap(backend.createEvent(cuda0));
    let ran = false;
    unwrap(backend.launchHostFunc(s, () => (ran = true)));
    unwrap(backend.recordEvent(e, s));
    const pending = backend.synchronizeStream(s);
    const pendingEvent = backend.synchronizeEvent(e);
    backend.dispose();
    await expect(pending).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState, message: expect.stringContaining('disposed') });
    await expect(pendingEvent).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState });
    expect(backend.runUntilIdle()).toBe(0);
    expect(ran).toBe(false);
  });

  it('supports `using`', () => {
    let stream;
    {
      using backend = new HostBackend();
      stream = unwrap(backend.createStream(cuda0));
    }
    expect(stream.destroyed).toBe(true);
  });
});

describe('HostBackend stream-ordered allocation and memory-pool capability', () => {
  it('reports memory pools, allocates cudaDevice memory on a stream and frees it in stream order', async () => {
    const backend = new HostBackend();
    const cuda0 = Device.cuda(0);
    const s = unwrap(backend.createStream(cuda0));
    expect(backend.supportsMemoryPools(cuda0)).toBe(true);
    expect(backend.supportsMemoryPools(Device.cuda(5))).toBe(false);
    const m = unwrap(backend.allocateAsync({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 64 }, s));
    expect(m.address % 256n).toBe(0n);
    unwrap(backend.memsetAsync(s, { memory: m, byteOffset: 0, byteLength: 64, label: 'm' }, 3));
    unwrap(backend.freeAsync(m, s));
    expect(m.freed).toBe(true);
    expect(backend.freeAsync(m, s).ok).toBe(false);
    await expect(backend.synchronizeStream(s)).resolves.toBeUndefined();
    const host = backend.allocateAsync({ kind: MemoryKind.Host, device: Device.cpu(), byteSize: 8 }, s);
    expect(!host.ok && host.error.code).toBe(ErrorCode.InvalidArgument);
    backend.dispose();
  });

  it('emulates a pool-less device: allocateAsync is NotSupported, allocate still works', () => {
    const backend = new HostBackend({ memoryPools: false });
    const cuda0 = Device.cuda(0);
    const s = unwrap(backend.createStream(cuda0));
    expect(backend.supportsMemoryPools(cuda0)).toBe(false);
    const r = backend.allocateAsync({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 64 }, s);
    expect(!r.ok && r.error.code).toBe(ErrorCode.NotSupported);
    expect(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 64 }).ok).toBe(true);
    backend.dispose();
  });

  it('returns OutOfMemory, allocating nothing, when the heap refuses a valid size', () => {
    const backend = new HostBackend();
    const r = backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 2 ** 50 });
    expect(!r.ok && r.error.code).toBe(ErrorCode.OutOfMemory);
    backend.dispose();
  });
});

describe('HostBackend adoptHostMemory', () => {
  it('uses caller-owned bytes in place: copies and host views see the same memory', async () => {
    const backend = new HostBackend();
    const bytes = new Uint8Array(64);
    const adopted = unwrap(backend.adoptHostMemory({ bytes, kind: MemoryKind.PinnedHost, address: 0x1000n, label: 'shm' }));
    expect(adopted.kind).toBe(MemoryKind.PinnedHost);
    expect(adopted.byteSize).toBe(64);
    expect(unwrap(backend.hostView(adopted))).toBe(bytes);
    const stream = unwrap(backend.createStream(Device.cuda(0)));
    unwrap(backend.memsetAsync(stream, { memory: adopted, byteOffset: 8, byteLength: 4, label: 'fill' }, 0x5a));
    await backend.synchronizeStream(stream);
    expect([...bytes.subarray(6, 14)]).toEqual([0, 0, 0x5a, 0x5a, 0x5a, 0x5a, 0, 0]);
    unwrap(backend.free(adopted));
    expect(bytes[8]).toBe(0x5a);
    expect(backend.hostView(adopted).ok).toBe(false);
    backend.dispose();
  });

  it('keeps the real address of adopted bytes (emulated only when the caller passes 0n)', () => {
    const backend = new HostBackend();
    const real = unwrap(backend.adoptHostMemory({ bytes: new Uint8Array(16), kind: MemoryKind.Host, address: 0x7f00_0000_1000n }));
    expect(real.address).toBe(0x7f00_0000_1000n);
    const emulated = unwrap(backend.adoptHostMemory({ bytes: new Uint8Array(16), kind: MemoryKind.Host, address: 0n }));
    expect(emulated.address).toBeGreaterThan(0n);
    backend.dispose();
  });

  it('refuses device kinds and empty views', () => {
    const backend = new HostBackend();
    const device = backend.adoptHostMemory({ bytes: new Uint8Array(8), kind: MemoryKind.CudaDevice, address: 0n });
    expect(device.ok ? null : device.error.code).toBe(ErrorCode.InvalidArgument);
    const empty = backend.adoptHostMemory({ bytes: new Uint8Array(0), kind: MemoryKind.Host, address: 0n });
    expect(empty.ok ? null : empty.error.code).toBe(ErrorCode.InvalidArgument);
    backend.dispose();
  });
});

describe('HostBackend optional capabilities', () => {
  it('has no CUDA IPC, emulates stream memory operations, and refuses interprocess events', () => {
    const backend = new HostBackend();
    const contract: Backend = backend;
    expect(contract.ipc).toBeUndefined();
    expect(contract.streamMemoryOps).toBeDefined();
    expect(contract.streamMemoryOps).toBe(backend.streamMemoryOps);
    const r = backend.createEvent(Device.cuda(0), { interprocess: true });
    expect(!r.ok && r.error.code).toBe(ErrorCode.NotSupported);
    expect(unwrap(backend.createEvent(Device.cuda(0), { interprocess: false })).destroyed).toBe(false);
    backend.dispose();
  });

  it('opens native tables through the addon: a value that is not a tagged external is InvalidArgument, a disposed backend InvalidState', () => {
    const backend = new HostBackend();
    const r = backend.openNativeMemoryTable({});
    // Without the optional addon this is NotSupported naming how to build it.
    expect(!r.ok && r.error.code).toBe(cudaAddonBuilt() ? ErrorCode.InvalidArgument : ErrorCode.NotSupported);
    backend.dispose();
    const late = backend.openNativeMemoryTable({});
    expect(!late.ok && late.error.code).toBe(ErrorCode.InvalidState);
  });
});

function cudaAddonBuilt(): boolean {
  try {
    return (createRequire(import.meta.url)('@hs/cuda-native') as { loadCudaNative: () => { ok: boolean } }).loadCudaNative().ok;
  } catch {
    return false;
  }
}
