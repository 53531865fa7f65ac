import { Device, ErrorCode, HostBackend, MemoryKind, unwrap, type Result } from '@hs/streams';
import {
  DeviceResource,
  LimitingResource,
  ManagedResource,
  StatisticsResource,
  defaultResource,
  type SyncResource,
} from '@hs/nanovdb-mr';
import { DType } from '@hs/tensor';
import { afterEach, describe, expect, it } from 'vitest';
import { TensorPool, type TensorPoolSpec } from '../src/index.js';

const cuda0 = Device.cuda(0);
const code = <T>(r: Result<T>): ErrorCode | undefined => (r.ok ? undefined : r.error.code);

describe('TensorPool backing from injected resources', () => {
  const backends: HostBackend[] = [];
  const make = (): HostBackend => {
    const b = new HostBackend({ scheduling: 'manual' });
    backends.push(b);
    return b;
  };
  afterEach(() => {
    for (const b of backends.splice(0)) b.dispose();
  });

  const spec = (resource?: SyncResource): TensorPoolSpec => ({
    name: 'frames',
    memoryKind: MemoryKind.CudaManaged,
    device: cuda0,
    slotCount: 3,
    slotByteSpan: 100,
    maxRank: 1,
    producerStream: null,
    eventDevice: cuda0,
    ...(resource === undefined ? {} : { resource }),
  });

  it('defaults to the memory kind’s default resource', () => {
    const backend = make();
    const pool = unwrap(TensorPool.materialize(backend, spec()));
    expect(pool.resource).toBe(unwrap(defaultResource(backend, MemoryKind.CudaManaged, cuda0)));
    expect(pool.backing.byteLength).toBe(3 * 256);
    pool.dispose();
    expect(pool.memory.freed).toBe(true);
  });

  it('takes one block from an injected StatisticsResource and returns it at dispose', () => {
    const backend = make();
    const stats = new StatisticsResource(new ManagedResource(backend, cuda0));
    const pool = unwrap(TensorPool.materialize(backend, spec(stats)));
    expect(stats.statistics.bytes.current).toBe(3 * 256);
    expect(stats.statistics.allocations.total).toBe(1);
    pool.dispose();
    expect(stats.statistics.bytes).toEqual({ current: 0, peak: 768, total: 768 });
  });

  it('places slots at the block’s offset when a plain JS resource sub-allocates', () => {
    const backend = make();
    const arenaMemory = unwrap(backend.allocate({ kind: MemoryKind.CudaManaged, device: cuda0, byteSize: 8192 }));
    let outstanding = 0;
    const arena: SyncResource = {
      allocate: (bytes) => {
        outstanding++;
        return { ok: true, value: { memory: arenaMemory, byteOffset: 4096, byteLength: bytes, label: 'arena tail' } };
      },
      deallocate: () => {
        outstanding--;
        return { ok: true, value: undefined };
      },
    };
    const pool = unwrap(TensorPool.materialize(backend, spec(arena)));
    const loan = unwrap(pool.allocateTensor({ shape: [4], dtype: DType.uint8 }));
    const guard = unwrap(loan.write(null));
    unwrap(guard.tensor.mutableHostView()).set([1, 2, 3, 4]);
    expect([...unwrap(backend.hostView(arenaMemory)).subarray(4096, 4100)]).toEqual([1, 2, 3, 4]);
    unwrap(guard.commit());
    pool.dispose();
    expect(outstanding).toBe(0);
  });

  it('fails with the resource’s OutOfMemory and leaves nothing behind', () => {
    const backend = make();
    const stats = new StatisticsResource(new ManagedResource(backend, cuda0));
    const r = TensorPool.materialize(backend, spec(new LimitingResource(stats, 512)));
    expect(code(r)).toBe(ErrorCode.OutOfMemory);
    expect(stats.statistics.allocations.total).toBe(0);
  });

  it('refuses a resource that declares another memory kind before allocating from it', () => {
    const backend = make();
    const wrongKind = new StatisticsResource(new DeviceResource(backend, cuda0));
    const r = TensorPool.materialize(backend, spec(wrongKind));
    expect(code(r)).toBe(ErrorCode.InvalidArgument);
    if (!r.ok) expect(r.error.message).toContain('hands out cudaDevice memory on cuda:0');
    expect(wrongKind.statistics.allocations.total).toBe(0);
  });

  it('returns the block of an undeclared resource that handed out the wrong memory kind', () => {
    const backend = make();
    const device = new DeviceResource(backend, cuda0);
    let live = 0;
    const plain: SyncResource = {
      allocate: (bytes, alignment) => {
        const made = device.allocate(bytes, alignment);
        if (made.ok) live++;
        return made;
      },
      deallocate: (block, bytes, alignment) => {
        live--;
        return device.deallocate(block, bytes, alignment);
      },
    };
    const r = TensorPool.materialize(backend, spec(plain));
    expect(code(r)).toBe(ErrorCode.InvalidArgument);
    if (!r.ok) expect(r.error.message).toContain('inject a resource of the pool');
    expect(live).toBe(0);
  });

  it('throws for a resource that is not one', () => {
    const backend = make();
    expect(() => TensorPool.materialize(backend, spec({} as SyncResource))).toThrow(/resource must be a resource/);
  });
});
