import { Device, ErrorCode, HostBackend, MemoryKind, unwrap, type Result, type Stream } from '@hs/streams';
import { AsyncFromSync, DeviceResource, MallocResource, StatisticsResource, setCurrentDeviceResource } from '@hs/nanovdb-mr';
import { DType } from '@hs/tensor';
import { afterEach, describe, expect, it } from 'vitest';
import { TensorPool, type TensorPoolSpec } from '../src/index.js';

const cuda0 = Device.cuda(0);
const code = <T>(r: Result<T>): ErrorCode | undefined => (r.ok ? undefined : r.error.code);

describe('a cudaDevice pool takes its backing in stream order', () => {
  const backends: HostBackend[] = [];
  const make = (memoryPools = true): { backend: HostBackend; producer: Stream } => {
    const backend = new HostBackend({ scheduling: 'manual', memoryPools });
    backends.push(backend);
    return { backend, producer: unwrap(backend.createStream(cuda0, { label: 'producer' })) };
  };
  afterEach(() => {
    setCurrentDeviceResource(cuda0, null);
    for (const b of backends.splice(0)) b.dispose();
  });
  const spec = (producer: Stream, resource?: TensorPoolSpec['resource']): TensorPoolSpec => ({
    name: 'frames',
    memoryKind: MemoryKind.CudaDevice,
    device: cuda0,
    slotCount: 2,
    slotByteSpan: 64,
    maxRank: 1,
    producerStream: producer,
    ...(resource === undefined ? {} : { resource }),
  });

  it('uses a synchronous resource through allocate and deallocate (a standalone pool; graph pools require the async tier)', () => {
    const { backend, producer } = make();
    const sync = new StatisticsResource(new MallocResource(backend, cuda0));
    const pool = unwrap(TensorPool.materialize(backend, spec(producer, sync)));
    expect(sync.statistics.allocations.current).toBe(1);
    pool.dispose();
    expect(sync.statistics.allocations.current).toBe(0);
  });

  it('runs without memory pools through AsyncFromSync(MallocResource) and returns the block after the producer stream drained', () => {
    const { backend, producer } = make(false);
    const stats = new StatisticsResource(new MallocResource(backend, cuda0));
    const pool = unwrap(TensorPool.materialize(backend, spec(producer, new AsyncFromSync(backend, stats))));
    expect(stats.statistics.bytes.current).toBe(512);
    const loan = unwrap(pool.allocateTensor({ shape: [8], dtype: DType.uint8 }));
    unwrap(unwrap(loan.write(producer)).commit());
    loan[Symbol.dispose]();
    backend.runUntilIdle();
    pool.retire();
    pool.dispose();
    // AsyncFromSync returns the block from a host function behind the producer stream's work.
    expect(stats.statistics.bytes.current).toBe(512);
    backend.runUntilIdle();
    expect(stats.statistics.bytes.current).toBe(0);
  });

  it('fails with NotSupported naming the opt-in when the default resource meets a pool-less device', () => {
    const { backend, producer } = make(false);
    const r = TensorPool.materialize(backend, spec(producer));
    expect(code(r)).toBe(ErrorCode.NotSupported);
    if (!r.ok) expect(r.error.message).toContain('new AsyncFromSync(backend, new MallocResource(backend, device))');
  });

  it('defaults to the current device resource', () => {
    const { backend, producer } = make();
    const stats = new StatisticsResource(new DeviceResource(backend, cuda0));
    expect(setCurrentDeviceResource(cuda0, stats)).toBeNull();
    const pool = unwrap(TensorPool.materialize(backend, spec(producer)));
    expect(pool.resource).toBe(stats);
    expect(stats.statistics.allocations.current).toBe(1);
    pool.dispose();
    backend.runUntilIdle();
    expect(stats.statistics.allocations.current).toBe(0);
  });

  it('refuses a resource of another backend before allocating', () => {
    const { backend, producer } = make();
    const other = make().backend;
    const foreign = new StatisticsResource(new DeviceResource(other, cuda0));
    const r = TensorPool.materialize(backend, spec(producer, foreign));
    expect(code(r)).toBe(ErrorCode.InvalidArgument);
    if (!r.ok) expect(r.error.message).toContain('another backend');
    expect(foreign.statistics.allocations.total).toBe(0);
  });
});
