import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addCudaTestKernels, loadCudaNative } from '@hs/cuda-native';
import { CudaBackend, Device, ErrorCode, MemoryKind, unwrap, type CudaBackendOptions, type DeviceMemory, type MemoryRange, type Stream } from '../src/index.js';

// The hs.test.* kernels come from the test addon (the published hs_cuda.node has none).
const kernels = addCudaTestKernels();
const gpu = CudaBackend.available() && kernels.ok;
if (!gpu) console.log(`CudaBackend tests skipped: ${kernels.ok ? 'no CUDA device or @hs/cuda-native not built' : kernels.reason}`);

const whole = (memory: DeviceMemory, label = 'range'): MemoryRange => ({ memory, byteOffset: 0, byteLength: memory.byteSize, label });

describe('CudaBackend.create refuses bad options before it loads CUDA', () => {
  const cases: [string, CudaBackendOptions][] = [
    ['hostArrayRegistration: true', { hostArrayRegistration: true as never }],
    ['hostArrayRegistration.copies 0', { hostArrayRegistration: { copies: 0 } }],
    ['hostArrayRegistration.minBytes -1', { hostArrayRegistration: { minBytes: -1 } }],
    ['hostArrayRegistration.minBytes 1.5', { hostArrayRegistration: { minBytes: 1.5 } }],
    ['hostArrayRegistration.minByte (misspelt)', { hostArrayRegistration: { minByte: 1 } as never }],
  ];
  for (const [name, options] of cases) {
    it(`${name}: InvalidArgument naming the option`, () => {
      const created = CudaBackend.create(options);
      expect(created.ok ? 'created' : created.error.code).toBe(ErrorCode.InvalidArgument);
      expect(created.ok ? '' : created.error.message).toContain('hostArrayRegistration');
    });
  }
  it('a misspelt option: InvalidArgument naming the closest field', () => {
    const created = CudaBackend.create({ memoryPool: false } as never);
    expect(created.ok ? '' : created.error.message).toContain("CudaBackend: unknown option 'memoryPool'; did you mean 'memoryPools'?");
  });
});

describe.skipIf(!gpu)('CudaBackend on a device', () => {
  let backend: CudaBackend;
  let device: Device;
  const stream = (label: string, priority = 0): Stream => unwrap(backend.createStream(device, { label, priority }));
  const deviceMemory = (byteSize: number): DeviceMemory => unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize }));

  beforeEach(() => {
    backend = unwrap(CudaBackend.create());
    device = backend.devices[0] as Device;
  });
  afterEach(() => backend.dispose());

  it('orders a consumer kernel after a long producer kernel through the readiness event, with no host sync', async () => {
    const n = 1 << 16;
    const shared = deviceMemory(n);
    const out = deviceMemory(n);
    const producer = stream('producer');
    const consumer = stream('consumer', -1);
    const ready = unwrap(backend.createEvent(device, { label: 'ready' }));
    unwrap(backend.memsetAsync(producer, whole(shared), 0));
    await backend.synchronizeStream(producer);
    // 200 ms of device time before the producer writes 0x5a.
    unwrap(backend.launchKernel(producer, { name: 'hs.test.spinFill', reads: [], writes: [whole(shared)], params: [200_000_000, 0x5a], host: () => undefined }));
    unwrap(backend.recordEvent(ready, producer));
    unwrap(backend.streamWaitEvent(consumer, ready));
    unwrap(backend.launchKernel(consumer, { name: 'hs.test.copy', reads: [whole(shared)], writes: [whole(out)], params: [], host: () => undefined }));
    const seen = new Uint8Array(n);
    unwrap(backend.copyToHostAsync(consumer, seen, whole(out)));
    await backend.synchronizeStream(consumer);
    expect(seen.every((b) => b === 0x5a)).toBe(true);
  });

  it('shows the race the readiness wait prevents: without it the consumer reads stale bytes', async () => {
    const n = 4096;
    const shared = deviceMemory(n);
    const out = deviceMemory(n);
    const producer = stream('producer');
    const consumer = stream('consumer');
    unwrap(backend.memsetAsync(producer, whole(shared), 0));
    await backend.synchronizeStream(producer);
    unwrap(backend.launchKernel(producer, { name: 'hs.test.spinFill', reads: [], writes: [whole(shared)], params: [200_000_000, 0x5a], host: () => undefined }));
    unwrap(backend.launchKernel(consumer, { name: 'hs.test.copy', reads: [whole(shared)], writes: [whole(out)], params: [], host: () => undefined }));
    const seen = new Uint8Array(n);
    unwrap(backend.copyToHostAsync(consumer, seen, whole(out)));
    await backend.synchronizeStream(consumer);
    await backend.synchronizeStream(producer);
    expect(seen.every((b) => b === 0)).toBe(true);
  });

  it('runs registry kernels by name and refuses unknown names and bad params', async () => {
    const s = stream('s');
    const src = deviceMemory(8);
    const dst = deviceMemory(8);
    unwrap(backend.copyFromHostAsync(s, whole(src), Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 250)));
    const add = { name: 'hs.test.addScalar', reads: [whole(src)], writes: [whole(dst)], params: [8, 10], host: () => undefined };
    unwrap(backend.launchKernel(s, add));
    const out = new Uint8Array(8);
    unwrap(backend.copyToHostAsync(s, out, whole(dst)));
    await backend.synchronizeStream(s);
    expect([...out]).toEqual([11, 12, 13, 14, 15, 16, 17, 4]);
    const unknown = backend.launchKernel(s, { ...add, name: 'hs.nope' });
    expect(!unknown.ok && unknown.error.code).toBe(ErrorCode.NotFound);
    const tooLong = backend.launchKernel(s, { ...add, params: [9, 1] });
    expect(!tooLong.ok && tooLong.error.code).toBe(ErrorCode.InvalidArgument);
  });

  it.skipIf(process.env['HS_CUDA_HOST_FUNCTIONS'] === 'queued')('runs a host-staged kernel on copies of its ranges in stream order and copies the writes back', async () => {
    const s = stream('s');
    const src = deviceMemory(16);
    const dst = deviceMemory(16);
    unwrap(backend.memsetAsync(s, whole(dst), 0xee));
    unwrap(backend.copyFromHostAsync(s, whole(src), Uint8Array.from({ length: 16 }, (_, i) => i)));
    const seen: number[] = [];
    const launch = {
      name: 'hs.test.shape',
      reads: [whole(src)],
      writes: [{ memory: dst, byteOffset: 4, byteLength: 8, label: 'middle' }],
      params: [3],
      host: (reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]) => {
        seen.push(reads[0]!.byteLength, writes[0]!.byteLength, writes[0]![0]!);
        for (let i = 0; i < 8; i++) writes[0]![i] = reads[0]![i]! * params[0]!;
      },
    };
    unwrap(backend.launchKernel(s, launch));
    unwrap(backend.memsetAsync(s, { memory: src, byteOffset: 0, byteLength: 16, label: 'src' }, 1));
    const out = new Uint8Array(16);
    unwrap(backend.copyToHostAsync(s, out, whole(dst)));
    await backend.synchronizeStream(s);
    expect(seen).toEqual([16, 8, 0xee]);
    expect([...out]).toEqual([0xee, 0xee, 0xee, 0xee, 0, 3, 6, 9, 12, 15, 18, 21, 0xee, 0xee, 0xee, 0xee]);
  });

  it('refuses host-staged kernels when host functions are queued', () => {
    const queued = unwrap(CudaBackend.create({ hostFunctions: 'queued' }));
    try {
      const s = unwrap(queued.createStream(queued.devices[0] as Device));
      const m = unwrap(queued.allocate({ kind: MemoryKind.CudaDevice, device: queued.devices[0] as Device, byteSize: 8 }));
      const r = queued.launchKernel(s, { name: 'hs.test.shape', reads: [whole(m)], writes: [], params: [], host: () => undefined });
      expect(!r.ok && r.error.code).toBe(ErrorCode.NotSupported);
    } finally {
      queued.dispose();
    }
  });

  it.skipIf(process.env['HS_CUDA_HOST_FUNCTIONS'] === 'queued')('holds later device work until a host function returned', async () => {
    const s = stream('s');
    const pinned = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 64 }));
    const dev = deviceMemory(64);
    const view = unwrap(backend.hostView(pinned));
    view.fill(0);
    unwrap(backend.launchHostFunc(s, () => view.fill(9)));
    unwrap(backend.memcpyAsync(s, whole(dev), whole(pinned)));
    const out = new Uint8Array(64);
    unwrap(backend.copyToHostAsync(s, out, whole(dev)));
    await backend.synchronizeStream(s);
    expect(out.every((b) => b === 9)).toBe(true);
  });

  describe('copies between JS buffers and device memory', () => {
    const pattern = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
    const host = (kind: MemoryKind.PinnedHost | MemoryKind.CudaManaged, byteSize: number, alignment?: number): DeviceMemory =>
      unwrap(backend.allocate({ kind, device: kind === MemoryKind.PinnedHost ? Device.cpu() : device, byteSize, alignment }));

    for (const kind of [MemoryKind.PinnedHost, MemoryKind.CudaManaged] as const) {
      it(`copyToHostAsync writes into a ${kind} view directly, so later work on the stream sees the bytes`, async () => {
        const n = 3 << 20;
        const s = stream('s');
        const src = deviceMemory(n);
        const later = deviceMemory(n);
        const target = host(kind, n + 4096, 1 << 16);
        const view = unwrap(backend.hostView(target));
        view.fill(0xcc);
        const expected = pattern(n, 5);
        unwrap(backend.copyFromHostAsync(s, whole(src), expected));
        const dst = view.subarray(1000, 1000 + n);
        unwrap(backend.copyToHostAsync(s, dst, whole(src)));
        // A staged copy would fill `dst` on the JS thread after this memcpy ran; the direct copy lands first.
        unwrap(backend.memcpyAsync(s, whole(later), { memory: target, byteOffset: 1000, byteLength: n, label: 'dst' }));
        const seen = new Uint8Array(n);
        unwrap(backend.copyToHostAsync(s, seen, whole(later)));
        await backend.synchronizeStream(s);
        expect(Buffer.from(dst).equals(expected)).toBe(true);
        expect(Buffer.from(seen).equals(expected)).toBe(true);
        expect(view[999]).toBe(0xcc);
        expect(view[1000 + n]).toBe(0xcc);
      });

      it(`copyFromHostAsync reads a ${kind} view directly, in stream order`, async () => {
        const n = 1 << 20;
        const s = stream('s');
        const filled = deviceMemory(n);
        const dst = deviceMemory(n);
        const staging = host(kind, n + 512);
        const view = unwrap(backend.hostView(staging));
        view.fill(0x11);
        const expected = pattern(n, 9);
        unwrap(backend.copyFromHostAsync(s, whole(filled), expected));
        // Fill the pinned/managed bytes in stream order, then copy them on: a staged copy would take the 0x11 bytes now.
        unwrap(backend.memcpyAsync(s, { memory: staging, byteOffset: 512, byteLength: n, label: 'staging' }, whole(filled)));
        unwrap(backend.copyFromHostAsync(s, whole(dst), view.subarray(512, 512 + n)));
        const seen = new Uint8Array(n);
        unwrap(backend.copyToHostAsync(s, seen, whole(dst)));
        await backend.synchronizeStream(s);
        expect(Buffer.from(seen).equals(expected)).toBe(true);
      });
    }

    it('page-locks a JS array at its second copy and copies straight into it; releaseHostArray ends it after the copies in flight', async () => {
      const n = 5 << 20;
      const s = stream('s');
      const first = deviceMemory(n);
      const second = deviceMemory(n);
      const expected = pattern(n, 3);
      const next = pattern(n, 8);
      unwrap(backend.copyFromHostAsync(s, whole(first), expected));
      unwrap(backend.copyFromHostAsync(s, whole(second), next));
      const buffer = new Uint8Array(n + 4096);
      const view = buffer.subarray(4096);
      unwrap(backend.copyToHostAsync(s, view, whole(first)));
      await backend.synchronizeStream(s);
      expect(Buffer.from(view).equals(expected)).toBe(true);
      expect(backend.hostArrayRegistrations()).toMatchObject({ arrays: 0, bytes: 0 }); // the first copy is staged
      view.fill(0);
      unwrap(backend.copyToHostAsync(s, view, whole(first)));
      expect(backend.hostArrayRegistrations()).toMatchObject({ arrays: 1, bytes: n + 4096, refused: 0 });
      expect(backend.hostArrayRegistrations().registerNs).toBeGreaterThan(0);
      await backend.synchronizeStream(s);
      expect(Buffer.from(view).equals(expected)).toBe(true);
      expect(buffer.subarray(0, 4096).every((b) => b === 0)).toBe(true);
      // released right after enqueueing: the copy in flight still lands, and the buffer is no longer registered
      unwrap(backend.copyToHostAsync(s, view, whole(second)));
      expect(unwrap(backend.releaseHostArray(view))).toBe(true);
      expect(unwrap(backend.releaseHostArray(view))).toBe(false);
      expect(backend.hostArrayRegistrations()).toMatchObject({ arrays: 0, bytes: 0 });
      await backend.synchronizeStream(s);
      expect(Buffer.from(view).equals(next)).toBe(true);
      // staged again; a copy right behind a staged one whose JS-thread write is still to come stays staged (a
      // direct copy would land first and be overwritten), so the bytes of the last copy win
      unwrap(backend.copyToHostAsync(s, view, whole(first)));
      unwrap(backend.copyToHostAsync(s, view, whole(second)));
      expect(backend.hostArrayRegistrations().arrays).toBe(0);
      await backend.synchronizeStream(s);
      expect(Buffer.from(view).equals(next)).toBe(true);
      // and the next copy, with no staged copy in flight, registers it again
      unwrap(backend.copyToHostAsync(s, view, whole(first)));
      expect(backend.hostArrayRegistrations().arrays).toBe(1);
      await backend.synchronizeStream(s);
      expect(Buffer.from(view).equals(expected)).toBe(true);
      // arrays below minBytes are never registered
      const small = new Uint8Array(1 << 20);
      const smallSource = deviceMemory(small.byteLength);
      for (let i = 0; i < 3; i++) unwrap(backend.copyToHostAsync(s, small, whole(smallSource)));
      await backend.synchronizeStream(s);
      expect(backend.hostArrayRegistrations().arrays).toBe(1);
    });

    it('hostArrayRegistration: false stages every copy; copies: 1 registers at the first copy', async () => {
      const n = 4 << 20;
      for (const [options, arrays] of [[false, 0], [{ copies: 1, minBytes: 1 << 20 }, 1]] as const) {
        const other = unwrap(CudaBackend.create({ hostArrayRegistration: options }));
        const s = unwrap(other.createStream(other.devices[0] as Device, { label: 's' }));
        const src = unwrap(other.allocate({ kind: MemoryKind.CudaDevice, device: other.devices[0] as Device, byteSize: n }));
        const expected = pattern(n, 4);
        unwrap(other.copyFromHostAsync(s, whole(src), expected));
        const dst = new Uint8Array(n);
        unwrap(other.copyToHostAsync(s, dst, whole(src)));
        expect(other.hostArrayRegistrations().arrays, JSON.stringify(options)).toBe(arrays);
        await other.synchronizeStream(s);
        expect(Buffer.from(dst).equals(expected)).toBe(true);
        other.dispose();
        expect(other.releaseHostArray(dst).ok).toBe(false);
      }
    });

    it('copies overlapping ranges of one pinned allocation like memmove (through staging)', async () => {
      const n = 4096;
      const s = stream('s');
      const pinned = host(MemoryKind.PinnedHost, 2 * n);
      const view = unwrap(backend.hostView(pinned));
      const original = pattern(2 * n, 3);
      view.set(original);
      unwrap(backend.copyToHostAsync(s, view.subarray(0, n), { memory: pinned, byteOffset: n / 2, byteLength: n, label: 'upper' }));
      await backend.synchronizeStream(s);
      expect(Buffer.from(view.subarray(0, n)).equals(original.subarray(n / 2, n / 2 + n))).toBe(true);
      view.set(original);
      unwrap(backend.copyFromHostAsync(s, { memory: pinned, byteOffset: n / 2, byteLength: n, label: 'upper' }, view.subarray(0, n)));
      await backend.synchronizeStream(s);
      expect(Buffer.from(view.subarray(n / 2, n / 2 + n)).equals(original.subarray(0, n))).toBe(true);
    });

    it('stages JS-heap buffers: the source may change right after the call, the destination is filled in stream order', async () => {
      const n = 1 << 20;
      const s = stream('s');
      const dev = deviceMemory(n + 64);
      const expected = pattern(n, 1);
      const src = new Uint8Array(n + 8);
      src.set(expected, 8);
      unwrap(backend.copyFromHostAsync(s, { memory: dev, byteOffset: 64, byteLength: n, label: 'dev' }, src.subarray(8)));
      src.fill(0);
      const out = new Uint8Array(n + 16).fill(0xcc);
      unwrap(backend.copyToHostAsync(s, out.subarray(16), { memory: dev, byteOffset: 64, byteLength: n, label: 'dev' }));
      await backend.synchronizeStream(s);
      expect(Buffer.from(out.subarray(16)).equals(expected)).toBe(true);
      expect(out[15]).toBe(0xcc);
    });

    it('refuses a view of freed pinned memory (detached, so empty) instead of copying into it', () => {
      const s = stream('s');
      const pinned = host(MemoryKind.PinnedHost, 64);
      const view = unwrap(backend.hostView(pinned));
      unwrap(backend.free(pinned));
      const r = backend.copyToHostAsync(s, view, whole(deviceMemory(64)));
      expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
    });
  });

  it('allocates from the memory pool in stream order and frees in stream order', async () => {
    const s = stream('s');
    expect(backend.supportsMemoryPools(device)).toBe(true);
    const m = unwrap(backend.allocateAsync({ kind: MemoryKind.CudaDevice, device, byteSize: 1 << 20, alignment: 4096 }, s));
    expect(m.address % 4096n).toBe(0n);
    unwrap(backend.memsetAsync(s, whole(m), 0x77));
    const out = new Uint8Array(16);
    unwrap(backend.copyToHostAsync(s, out, { memory: m, byteOffset: 1000, byteLength: 16, label: 'slice' }));
    unwrap(backend.freeAsync(m, s));
    await backend.synchronizeStream(s);
    expect(out.every((b) => b === 0x77)).toBe(true);
    const again = backend.memsetAsync(s, whole(m), 0);
    expect(!again.ok && again.error.code).toBe(ErrorCode.InvalidState);
    const wrongKind = backend.allocateAsync({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 8 }, s);
    expect(!wrongKind.ok && wrongKind.error.code).toBe(ErrorCode.InvalidArgument);
  });

  it('adopts device memory another allocator owns: usable in copies, free() only retires the handle', async () => {
    const s = stream('s');
    const owner = deviceMemory(4096);
    unwrap(backend.memsetAsync(s, whole(owner), 0));
    const adopted = unwrap(backend.adoptDeviceMemory({ device, address: owner.address + 1024n, byteSize: 1024, label: 'foreign block' }));
    unwrap(backend.memsetAsync(s, whole(adopted), 0x3c));
    unwrap(backend.free(adopted));
    expect(backend.memsetAsync(s, whole(adopted), 0).ok).toBe(false);
    // The owner's bytes are still there: the backend released nothing.
    const out = new Uint8Array(4096);
    unwrap(backend.copyToHostAsync(s, out, whole(owner)));
    await backend.synchronizeStream(s);
    expect([out[1023], out[1024], out[2047], out[2048]]).toEqual([0, 0x3c, 0x3c, 0]);
    for (const bad of [{ device, address: 0n, byteSize: 8 }, { device, address: 1n, byteSize: 0 }, { device: Device.cpu(), address: 1n, byteSize: 8 }]) {
      const r = backend.adoptDeviceMemory(bad);
      expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
    }
  });

  it('adopts foreign host bytes as pinnedHost (cudaHostRegister): device copies reach them, free unregisters and leaves them to their owner', async () => {
    const native = loadCudaNative();
    if (!native.ok) throw new Error('the addon loaded for CudaBackend.available() but not here');
    const s = stream('s');
    const n = 1 << 20;
    const foreign = new Uint8Array(new ArrayBuffer(n));
    foreign.fill(0x11);
    const address = native.binding.addressOf(foreign);
    for (const bad of [
      { bytes: foreign, kind: MemoryKind.PinnedHost, address: address + 64n },
      { bytes: foreign, kind: MemoryKind.CudaManaged, address },
      { bytes: new Uint8Array(0), kind: MemoryKind.PinnedHost, address },
    ]) {
      const r = backend.adoptHostMemory(bad);
      expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
    }
    const pinned = unwrap(backend.adoptHostMemory({ bytes: foreign, kind: MemoryKind.PinnedHost, address, label: 'segment' }));
    expect([pinned.kind, pinned.device, pinned.address, pinned.byteSize]).toEqual([MemoryKind.PinnedHost, Device.cpu(), address, n]);
    expect(unwrap(backend.hostView(pinned))).toBe(foreign);
    // Device work writes the registered bytes in place; a device copy reads them back.
    const onDevice = deviceMemory(n);
    unwrap(backend.memsetAsync(s, { memory: pinned, byteOffset: 4096, byteLength: 4096, label: 'middle' }, 0x7e));
    unwrap(backend.memcpyAsync(s, whole(onDevice), whole(pinned)));
    const back = new Uint8Array(n);
    unwrap(backend.copyToHostAsync(s, back, whole(onDevice)));
    await backend.synchronizeStream(s);
    expect([back[4095], back[4096], back[8191], back[8192]]).toEqual([0x11, 0x7e, 0x7e, 0x11]);
    expect([foreign[4095], foreign[4096], foreign[8192]]).toEqual([0x11, 0x7e, 0x11]);
    unwrap(backend.free(pinned));
    expect(backend.memsetAsync(s, whole(pinned), 0).ok).toBe(false);
    // The owner's bytes stay attached and readable after the handle is gone.
    expect([foreign.byteLength, foreign[4096]]).toEqual([n, 0x7e]);
    // Bytes their owner page-locked already are adopted as they are and stay locked after free().
    const owned = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 65536 }));
    const ownedView = unwrap(backend.hostView(owned));
    const again = unwrap(backend.adoptHostMemory({ bytes: ownedView, kind: MemoryKind.PinnedHost, address: native.binding.addressOf(ownedView) }));
    unwrap(backend.memsetAsync(s, whole(again), 0x21));
    unwrap(backend.free(again));
    unwrap(backend.memsetAsync(s, whole(owned), 0x22));
    await backend.synchronizeStream(s);
    expect([ownedView[0], ownedView[65535]]).toEqual([0x22, 0x22]);
    unwrap(backend.free(owned));
    const host = unwrap(backend.adoptHostMemory({ bytes: foreign, kind: MemoryKind.Host, address }));
    expect(host.kind).toBe(MemoryKind.Host);
    unwrap(backend.free(host));
    expect(foreign.byteLength).toBe(n);
  });

  // compute-sanitizer reports the intended cudaMalloc failure as an API error.
  it.skipIf(process.env['HS_GPU_SANITIZER'] === '1')('reports an impossible allocation as OutOfMemory', () => {
    const r = backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 2 ** 52 });
    expect(!r.ok && r.error.code).toBe(ErrorCode.OutOfMemory);
  });

  for (const path of ['completion waiter', 'host function'] as const) {
    it(`settles synchronizeStream (${path}) after the host functions enqueued before it ran, and leaves nothing pending`, async () => {
      const native = loadCudaNative();
      if (!native.ok) throw new Error('the CUDA addon loaded for CudaBackend but not for loadCudaNative');
      const previous = process.env['HS_CUDA_COMPLETION'];
      if (path === 'host function') process.env['HS_CUDA_COMPLETION'] = 'host-function';
      const other = unwrap(CudaBackend.create());
      if (previous === undefined) delete process.env['HS_CUDA_COMPLETION'];
      else process.env['HS_CUDA_COMPLETION'] = previous;
      try {
        const d = other.devices[0] as Device;
        const s = unwrap(other.createStream(d, { label: 's' }));
        const memory = unwrap(other.allocate({ kind: MemoryKind.CudaDevice, device: d, byteSize: 4096 }));
        const ran: string[] = [];
        // 20 ms of device time first, so the waits are pending while the waiter polls.
        unwrap(other.launchKernel(s, { name: 'hs.test.spinFill', reads: [], writes: [whole(memory)], params: [20_000_000, 0x33], host: () => undefined }));
        unwrap(other.launchHostFunc(s, () => ran.push('host function 1'), { blocking: false }));
        // What had run when each wait settled (later host functions may have run too: one delivery batch).
        const first = other.synchronizeStream(s).then(() => [...ran]);
        unwrap(other.launchHostFunc(s, () => ran.push('host function 2'), { blocking: false }));
        const second = other.synchronizeStream(s).then(() => [...ran]);
        expect(native.binding.pendingHostCalls()).toBeGreaterThan(0);
        const [atFirst, atSecond] = await Promise.all([first, second]);
        expect(atFirst).toContain('host function 1');
        expect(atSecond).toEqual(['host function 1', 'host function 2']);
        const seen = new Uint8Array(4096);
        unwrap(other.copyToHostAsync(s, seen, whole(memory)));
        await other.synchronizeStream(s);
        expect(seen.every((b) => b === 0x33)).toBe(true);
        if (path === 'completion waiter' && native.binding.completionWaiterStats !== undefined) expect(native.binding.completionWaiterStats().pending).toBe(0);
      } finally {
        other.dispose();
      }
    });
  }

  it('rejects a completion-waiter wait still pending at dispose with InvalidState, and settles later waits of a new backend', async () => {
    const s = stream('s');
    const memory = deviceMemory(4096);
    unwrap(backend.launchKernel(s, { name: 'hs.test.spinFill', reads: [], writes: [whole(memory)], params: [50_000_000, 1], host: () => undefined }));
    const pending = backend.synchronizeStream(s);
    backend.dispose();
    await expect(pending).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState });
    backend = unwrap(CudaBackend.create());
    const again = unwrap(backend.createStream(backend.devices[0] as Device, { label: 'again' }));
    await expect(backend.synchronizeStream(again)).resolves.toBeUndefined();
  });

  it('reports a throwing host function at the next synchronization', async () => {
    const s = stream('s');
    unwrap(backend.launchHostFunc(s, () => {
      throw new Error('boom');
    }));
    await expect(backend.synchronizeStream(s)).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.DeviceError, message: expect.stringMatching(/boom/) });
  });
});

describe.skipIf(!gpu)('CudaBackend capabilities: stream memory operations and CUDA IPC handles', () => {
  let backend: CudaBackend;
  let device: Device;
  const counter = (memory: DeviceMemory, byteOffset = 0, byteLength = 8): MemoryRange => ({ memory, byteOffset, byteLength, label: 'counter' });

  beforeEach(() => {
    backend = unwrap(CudaBackend.create());
    device = backend.devices[0] as Device;
  });
  afterEach(() => backend.dispose());

  it('writes a 64-bit value in stream order and releases a waiting stream only once it is reached', async () => {
    const ops = backend.streamMemoryOps;
    expect(ops, 'the H200 driver exposes 64-bit stream memory operations').toBeDefined();
    if (ops === undefined) return;
    const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 256 }));
    const producer = unwrap(backend.createStream(device, { label: 'producer' }));
    const consumer = unwrap(backend.createStream(device, { label: 'consumer' }));
    const seen = new Uint8Array(16);
    unwrap(backend.memsetAsync(producer, counter(memory, 0, 16), 0));
    await backend.synchronizeStream(producer);
    // The consumer waits for 2^40 + 3 at byte 8, then copies both counters out.
    unwrap(ops.waitValue64(consumer, counter(memory, 8), 2n ** 40n + 3n));
    unwrap(backend.copyToHostAsync(consumer, seen, counter(memory, 0, 16)));
    // 100 ms of device time, then the fence value; the copy must see what the spin wrote before it.
    unwrap(backend.launchKernel(producer, { name: 'hs.test.spinFill', reads: [], writes: [counter(memory, 0)], params: [100_000_000, 0x11], host: () => undefined }));
    unwrap(ops.writeValue64(producer, counter(memory, 8), 2n ** 40n + 3n));
    await backend.synchronizeStream(consumer);
    const view = new DataView(seen.buffer);
    expect(view.getBigUint64(8, true)).toBe(2n ** 40n + 3n);
    expect(Array.from(seen.subarray(0, 8))).toEqual(new Array(8).fill(0x11));
  });

  it('settles one stream\'s wait while another stream\'s earlier wait is still blocked (no head-of-line blocking)', async () => {
    const ops = backend.streamMemoryOps;
    expect(ops, 'the H200 driver exposes 64-bit stream memory operations').toBeDefined();
    if (ops === undefined) return;
    const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 256 }));
    const blocked = unwrap(backend.createStream(device, { label: 'blocked' }));
    const free = unwrap(backend.createStream(device, { label: 'free' }));
    unwrap(backend.memsetAsync(free, counter(memory, 0, 16), 0));
    await backend.synchronizeStream(free);
    unwrap(ops.waitValue64(blocked, counter(memory, 8), 5n));
    let blockedSettled = false;
    const blockedWait = backend.synchronizeStream(blocked).then(() => {
      blockedSettled = true;
    });
    unwrap(backend.memsetAsync(free, counter(memory, 0, 8), 1));
    await backend.synchronizeStream(free);
    expect(blockedSettled).toBe(false);
    // Only JS, after the free stream's wait settled, releases the blocked stream.
    unwrap(ops.writeValue64(free, counter(memory, 8), 5n));
    await blockedWait;
    expect(blockedSettled).toBe(true);
  });

  it('takes pinnedHost targets, its own (cudaHostAlloc) and adopted (cudaHostRegister) ones: written in stream order, waited on by another stream', async () => {
    const ops = backend.streamMemoryOps;
    if (ops === undefined) return;
    const own = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 64 }));
    const native = loadCudaNative();
    if (!native.ok) throw new Error('the addon loaded for CudaBackend.available() but not here');
    const mapping = new Uint8Array(new ArrayBuffer(1 << 16));
    const adopted = unwrap(backend.adoptHostMemory({ bytes: mapping, kind: MemoryKind.PinnedHost, address: native.binding.addressOf(mapping) }));
    const data = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 256 }));
    const producer = unwrap(backend.createStream(device, { label: 'producer' }));
    const consumer = unwrap(backend.createStream(device, { label: 'consumer' }));
    const seen = new Uint8Array(8);
    for (const pinned of [own, adopted]) {
      const view = unwrap(backend.hostView(pinned));
      view.fill(0, 0, 64);
      seen.fill(0);
      unwrap(ops.waitValue64(consumer, counter(pinned, 8), 7n));
      unwrap(backend.copyToHostAsync(consumer, seen, counter(data, 0, 8)));
      unwrap(backend.launchKernel(producer, { name: 'hs.test.spinFill', reads: [], writes: [counter(data, 0)], params: [50_000_000, 0x22], host: () => undefined }));
      unwrap(ops.writeValue64(producer, counter(pinned, 8), 7n));
      await backend.synchronizeStream(consumer);
      expect(new DataView(view.buffer, view.byteOffset).getBigUint64(8, true)).toBe(7n);
      expect(Array.from(seen)).toEqual(new Array(8).fill(0x22));
      // A host write of the mapped counter releases a device wait too (another process writing a segment).
      unwrap(ops.waitValue64(consumer, counter(pinned, 16), 3n));
      const released = backend.synchronizeStream(consumer);
      new DataView(view.buffer, view.byteOffset).setBigUint64(16, 3n, true);
      await released;
    }
    unwrap(backend.free(adopted));
  });

  it('refuses ranges and values a 64-bit memory operation cannot take, naming the problem', () => {
    const ops = backend.streamMemoryOps;
    if (ops === undefined) return;
    const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 256 }));
    const pageable = unwrap(backend.allocate({ kind: MemoryKind.Host, device: Device.cpu(), byteSize: 256 }));
    const s = unwrap(backend.createStream(device));
    const cases: [MemoryRange, bigint, RegExp][] = [
      [counter(memory, 0, 4), 1n, /must be 8 bytes/],
      [counter(memory, 4), 1n, /8-byte aligned/],
      [counter(pageable), 1n, /need cudaDevice or pinnedHost memory/],
      [counter(memory), -1n, /0\.\.2\^64-1/],
      [counter(memory), 2n ** 64n, /0\.\.2\^64-1/],
      [counter(memory, 256), 1n, /does not lie inside/],
    ];
    for (const [range, value, message] of cases) {
      for (const r of [ops.writeValue64(s, range, value), ops.waitValue64(s, range, value)]) {
        expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
        expect(!r.ok && r.error.message).toMatch(message);
      }
    }
    unwrap(backend.free(memory));
    const freed = ops.writeValue64(s, counter(memory), 1n);
    expect(!freed.ok && freed.error.code).toBe(ErrorCode.InvalidState);
  });

  it('exports 64-byte handles of whole cudaMalloc allocations and interprocess events, and refuses the rest', () => {
    const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 1 << 20 }));
    const handle = unwrap(backend.ipc.exportMemory(memory));
    expect(handle).toBeInstanceOf(Uint8Array);
    expect(handle.byteLength).toBe(64);
    expect(handle.some((b) => b !== 0)).toBe(true);
    const s = unwrap(backend.createStream(device));
    const pooled = unwrap(backend.allocateAsync({ kind: MemoryKind.CudaDevice, device, byteSize: 4096 }, s));
    const fromPool = backend.ipc.exportMemory(pooled);
    expect(!fromPool.ok && fromPool.error.message).toMatch(/not a whole cudaDevice allocation/);
    const plain = unwrap(backend.createEvent(device));
    const refused = backend.ipc.exportEvent(plain);
    expect(!refused.ok && refused.error.message).toMatch(/interprocess: true/);
    const shared = unwrap(backend.createEvent(device, { interprocess: true }));
    expect(unwrap(backend.ipc.exportEvent(shared)).byteLength).toBe(64);
  });

  it('refuses to map a handle that is not 64 bytes, or to open an event handle that is not 64 bytes', () => {
    const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 1 << 20 }));
    const handle = unwrap(backend.ipc.exportMemory(memory));
    const short = backend.ipc.importMemory({ device, handle: handle.subarray(0, 32), byteSize: 1 << 20 });
    expect(!short.ok && short.error.code).toBe(ErrorCode.InvalidArgument);
    const badSize = backend.ipc.importMemory({ device, handle, byteSize: 0 });
    expect(!badSize.ok && badSize.error.code).toBe(ErrorCode.InvalidArgument);
    const event = backend.ipc.importEvent(device, new Uint8Array(63));
    expect(!event.ok && event.error.code).toBe(ErrorCode.InvalidArgument);
  });

  // The refusal is a CUDA API error by design, which compute-sanitizer counts as one: it runs plainly only.
  it.skipIf(process.env['HS_GPU_SANITIZER'] === '1')('reports a handle this process exported itself as DeviceError (CUDA opens it only in another process)', () => {
    const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 1 << 20 }));
    const handle = unwrap(backend.ipc.exportMemory(memory));
    const own = backend.ipc.importMemory({ device, handle, byteSize: 1 << 20 });
    expect(!own.ok && own.error.code).toBe(ErrorCode.DeviceError);
  });

  it('opens no native table from a value that is not a tagged external', () => {
    const r = backend.openNativeMemoryTable({});
    expect(!r.ok && r.error.code).toBe(ErrorCode.InvalidArgument);
  });
});
