import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import {
  AsyncFromSync,
  ResourceBuffer,
  BufferView,
  DeviceResource,
  HostResource,
  LimitingResource,
  ManagedResource,
  StatisticsResource,
  TempPool,
  type AsyncResource,
  type MemoryBlock,
} from '../src/index.js';
import { plainArenaResource } from './support/plain-arena-resource.js';

const cuda0 = Device.cuda(0);

function setup(options: ConstructorParameters<typeof HostBackend>[0] = {}) {
  const backend = new HostBackend(options);
  const stream = unwrap(backend.createStream(cuda0, { label: 'alloc' }));
  const other = unwrap(backend.createStream(cuda0, { label: 'other' }));
  return { backend, stream, other };
}

describe('ResourceBuffer', () => {
  it('allocates typed elements without filling them; size in elements, sizeBytes in bytes', async () => {
    const { backend, stream } = setup();
    const stats = new StatisticsResource(new ManagedResource(backend, cuda0));
    const lifted = new AsyncFromSync(backend, stats);
    const buf = unwrap(ResourceBuffer.allocateAsync(backend, stream, lifted, 10, { noInit: true, element: Float32Array }));
    expect([buf.size, buf.sizeBytes, buf.empty, buf.stream]).toEqual([10, 40, false, stream]);
    expect(stats.statistics.bytes.current).toBe(40);
    const view = unwrap(buf.hostView());
    expect(view).toBeInstanceOf(Float32Array);
    expect(view.length).toBe(10);
    view.fill(1.5);
    buf.dispose();
    await backend.synchronizeStream(stream);
    expect(stats.statistics.bytes.current).toBe(0);
    expect(buf.empty).toBe(true);
    backend.dispose();
  });

  it('requires the noInit tag and an async resource for the stream-ordered form', () => {
    const { backend, stream } = setup();
    const device = new DeviceResource(backend, cuda0);
    expect(() => ResourceBuffer.allocateAsync(backend, stream, device, 4, {} as { noInit: true })).toThrow(/noInit/);
    expect(() => ResourceBuffer.allocateAsync(backend, stream, new HostResource(backend) as unknown as AsyncResource, 4, { noInit: true })).toThrow(
      /async resource/,
    );
    const bad = ResourceBuffer.allocateAsync(backend, stream, device, -1, { noInit: true });
    expect(!bad.ok && bad.error.code).toBe(ErrorCode.InvalidArgument);
    const huge = ResourceBuffer.allocateAsync(backend, stream, device, 2 ** 52, { noInit: true, element: Float64Array });
    expect(!huge.ok && huge.error.code).toBe(ErrorCode.ArithmeticOverflow);
    backend.dispose();
  });

  it('refuses options that are not an object or hold a misspelt field, instead of a TypeError or a silent default', () => {
    const { backend, stream } = setup();
    const host = new HostResource(backend);
    expect(() => ResourceBuffer.allocate(backend, host, 4, null as never)).toThrow('ResourceBuffer.allocate: options must be an object, not null');
    expect(() => ResourceBuffer.allocate(backend, host, 4, { elemnt: Float32Array } as never)).toThrow("ResourceBuffer.allocate: unknown option 'elemnt'; did you mean 'element'?");
    expect(() => ResourceBuffer.allocateAsync(backend, stream, new DeviceResource(backend, cuda0), 4, { noInit: true, aligment: 512 } as never)).toThrow(
      "ResourceBuffer.allocateAsync: unknown option 'aligment'; did you mean 'alignment'?",
    );
    backend.dispose();
  });

  it('frees on its retained stream, and setStream changes that stream without synchronizing', () => {
    const { backend, stream, other } = setup({ scheduling: 'manual' });
    const lifted = new AsyncFromSync(backend, new ManagedResource(backend, cuda0));
    const buf = unwrap(ResourceBuffer.allocateAsync(backend, stream, lifted, 64, { noInit: true }));
    const block = buf.data as MemoryBlock;
    unwrap(buf.setStream(other));
    expect(buf.stream).toBe(other);
    buf.dispose();
    backend.step(stream);
    expect(block.memory.freed).toBe(false);
    backend.step(other);
    expect(block.memory.freed).toBe(true);
    backend.dispose();
  });

  it('resize copies the prefix and frees the old block on the passed stream', async () => {
    const { backend, stream, other } = setup();
    const stats = new StatisticsResource(new DeviceResource(backend, cuda0));
    const buf = unwrap(ResourceBuffer.allocateAsync(backend, stream, stats, 4, { noInit: true, element: Uint32Array }));
    unwrap(backend.memsetAsync(stream, buf.data as MemoryBlock, 0xab));
    const oldBlock = buf.data as MemoryBlock;
    const ready = unwrap(backend.createEvent(cuda0));
    unwrap(backend.recordEvent(ready, stream));
    unwrap(backend.streamWaitEvent(other, ready));
    unwrap(buf.resize(8, other));
    expect([buf.size, buf.sizeBytes, buf.stream]).toEqual([8, 32, other]);
    expect(oldBlock.memory.freed).toBe(true);
    const out = new Uint8Array(16);
    unwrap(backend.copyToHostAsync(other, out, { ...(buf.data as MemoryBlock), byteLength: 16 }));
    await backend.synchronizeStream(other);
    expect([...out]).toEqual(new Array(16).fill(0xab));
    unwrap(buf.resize(8, other)); // same size: no-op
    expect(stats.statistics.allocations.total).toBe(2);
    buf.dispose();
    expect(stats.statistics.bytes.current).toBe(0);
    backend.dispose();
  });

  it('leaves the buffer unchanged when resize fails', () => {
    const { backend, stream } = setup();
    const limited = new LimitingResource(new DeviceResource(backend, cuda0), 100);
    const buf = unwrap(ResourceBuffer.allocateAsync(backend, stream, limited, 60, { noInit: true }));
    const before = buf.data;
    const r = buf.resize(80, stream);
    expect(!r.ok && r.error.code).toBe(ErrorCode.OutOfMemory);
    expect([buf.data, buf.size]).toEqual([before, 60]);
    expect(limited.allocatedBytes).toBe(60);
    buf.dispose();
    backend.dispose();
  });

  it('copy, swap, destroy(stream) and empty buffers', async () => {
    const { backend, stream, other } = setup();
    const stats = new StatisticsResource(new ManagedResource(backend, cuda0));
    const res = new AsyncFromSync(backend, stats);
    const a = unwrap(ResourceBuffer.allocateAsync(backend, stream, res, 3, { noInit: true, element: Int32Array }));
    unwrap(a.hostView()).set([1, 2, 3]);
    const b = unwrap(a.copy(other));
    await backend.synchronizeStream(other);
    expect([...unwrap(b.hostView())]).toEqual([1, 2, 3]);
    expect(b.stream).toBe(other);
    const c = unwrap(ResourceBuffer.allocateAsync(backend, stream, res, 0, { noInit: true, element: Int32Array }));
    expect([c.empty, c.data]).toEqual([true, null]);
    c.swap(b);
    expect([c.size, b.size, b.empty]).toEqual([3, 0, true]);
    unwrap(c.destroy(stream));
    expect(c.empty).toBe(true);
    unwrap(c.destroy()); // idempotent on an empty buffer
    a.dispose();
    b.dispose();
    await backend.synchronizeStream(stream);
    expect(stats.statistics.allocations.current).toBe(0);
    backend.dispose();
  });

  it('a synchronous buffer has no stream API', () => {
    const { backend, stream } = setup();
    const buf = unwrap(ResourceBuffer.allocate(backend, new HostResource(backend), 16));
    expect(buf.stream).toBeNull();
    // @ts-expect-error setStream needs a buffer over an async resource
    const r = buf.setStream(stream);
    expect(!r.ok && r.error.code).toBe(ErrorCode.NotSupported);
    buf.dispose();
    backend.dispose();
  });

  it('takes its memory from a plain JS resource', () => {
    const { backend } = setup();
    const arena = plainArenaResource(backend, cuda0, 4096);
    const buf = unwrap(ResourceBuffer.allocate(backend, arena, 100, { element: Float64Array, alignment: 64 }));
    expect(arena.live()).toBe(1);
    unwrap(buf.hostView()).fill(3);
    buf.dispose();
    expect(arena.live()).toBe(0);
    arena.dispose();
    backend.dispose();
  });

  it('dispose throws when the retained stream was destroyed first', () => {
    const { backend, stream } = setup();
    const buf = unwrap(ResourceBuffer.allocateAsync(backend, stream, new DeviceResource(backend, cuda0), 8, { noInit: true }));
    unwrap(backend.destroyStream(stream));
    expect(() => buf.dispose()).toThrow(/destroyed/);
    expect(buf.empty).toBe(false);
    backend.dispose();
  });
});

describe('BufferView', () => {
  it('views external bytes without owning them; null with a count is an error', () => {
    const { backend } = setup();
    const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda0, byteSize: 64 }));
    const block: MemoryBlock = { memory, byteOffset: 0, byteLength: 64, label: 'foreign' };
    const view = unwrap(BufferView.of(block, 16, Float32Array));
    expect([view.size, view.sizeBytes, view.empty]).toEqual([16, 64, false]);
    const nullView = BufferView.of(null, 3);
    expect(!nullView.ok && nullView.error.code).toBe(ErrorCode.InvalidArgument);
    expect(unwrap(BufferView.of(null, 0)).empty).toBe(true);
    const tooLong = BufferView.of(block, 17, Float32Array);
    expect(!tooLong.ok && tooLong.error.code).toBe(ErrorCode.InvalidArgument);
    const buf = unwrap(ResourceBuffer.allocate(backend, new HostResource(backend), 8));
    expect(BufferView.over(buf).data).toBe(buf.data);
    buf.dispose();
    backend.dispose();
  });
});

describe('TempPool', () => {
  it('reuses its block, discards on growth and frees on its retained stream', async () => {
    const { backend, stream } = setup({ scheduling: 'manual' });
    const stats = new StatisticsResource(new DeviceResource(backend, cuda0));
    const pool = new TempPool(backend, stats, stream);
    const first = unwrap(pool.reserve(1000)) as MemoryBlock;
    expect(unwrap(pool.reserve(500))).toBe(first);
    const grown = unwrap(pool.reserve(4000)) as MemoryBlock;
    expect(grown).not.toBe(first);
    expect(first.memory.freed).toBe(true);
    expect(pool.size).toBe(4000);
    expect(stats.statistics.allocations).toEqual({ current: 1, peak: 1, total: 2 });
    expect(pool.resource.equals(stats)).toBe(true);
    pool.dispose();
    expect(stats.statistics.bytes.current).toBe(0);
    const after = pool.reserve(1);
    expect(!after.ok && after.error.code).toBe(ErrorCode.InvalidState);
    backend.dispose();
  });
});

