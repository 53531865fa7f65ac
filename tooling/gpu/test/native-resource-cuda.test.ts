import { ResourceBuffer, NativeAsyncResource, NativeResource, type MemoryBlock } from '@hs/nanovdb-mr';
import { describeResourceConformance } from '@hs/nanovdb-mr/test';
import { TensorPool } from '@hs/pool';
import { CudaBackend, ErrorCode, MemoryKind, unwrap, type Backend, type Device, type MemoryRange } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { loadTestAddon, type CountingResourceAddon } from '../../../packages/nanovdb-mr/test/support/test-addon.js';

const gpu = CudaBackend.available();
const { addon, reason } = loadTestAddon();
const ready = gpu && addon !== null;
if (!ready) console.log(`native-resource CUDA tests skipped: ${gpu ? `the native test addon is unavailable (${reason})` : 'no CUDA device or @hs/cuda-native not built'}`);

/** A conformance fixture over the test addon's device table; its dispose checks the C-side counters. */
function deviceFixture(test: CountingResourceAddon, streamOrdered: boolean) {
  const backend = unwrap(CudaBackend.create());
  const table = test.createCountingResource('device', streamOrdered);
  const resource = unwrap(NativeResource.open(backend, table));
  return {
    backend,
    device: backend.devices[0] as Device,
    resource,
    dispose: () => {
      const c = test.countingResourceStats(table);
      expect(c.allocations, 'C side: every allocation was deallocated').toBe(c.deallocations);
      expect([c.liveBlocks, c.bytesOutstanding, c.badReturns]).toEqual([0, 0, 0]);
      unwrap(resource.dispose());
      expect(test.countingResourceStats(table).destroyCalls).toBe(1);
    },
  };
}

if (ready) {
  describeResourceConformance('NativeAsyncResource (counting device table, cudaMallocAsync pair) on CudaBackend', () => deviceFixture(addon, true));
  describeResourceConformance('NativeResource (counting device table, cudaMalloc) on CudaBackend', () => deviceFixture(addon, false));
}

describe.skipIf(!ready)('NativeResource on the CUDA backend', () => {
  const test = addon as CountingResourceAddon;

  it('is stream-ordered over a table with the async pair: a ResourceBuffer through it holds the bytes the device wrote', async () => {
    const backend = unwrap(CudaBackend.create());
    const device = backend.devices[0] as Device;
    const table = test.createCountingResource('device', true);
    const resource = unwrap(NativeResource.open(backend, table)) as NativeAsyncResource;
    expect(resource).toBeInstanceOf(NativeAsyncResource);
    const stream = unwrap(backend.createStream(device, { label: 'native' }));
    const buffer = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, 1 << 20, { noInit: true }));
    const block = buffer.data as MemoryBlock;
    const range: MemoryRange = { memory: block.memory, byteOffset: 0, byteLength: 1 << 20, label: 'native bytes' };
    unwrap(backend.memsetAsync(stream, range, 0xa5));
    const out = new Uint8Array(1 << 20);
    unwrap(backend.copyToHostAsync(stream, out, range));
    buffer.dispose();
    await backend.synchronizeStream(stream);
    expect(out.every((b) => b === 0xa5)).toBe(true);
    expect(test.countingResourceStats(table)).toMatchObject({ asyncAllocations: 1, asyncDeallocations: 1, liveBlocks: 0 });
    unwrap(resource.dispose());
    backend.dispose();
  });

  it('backs a TensorPool with one block of the table (device memory), returned at dispose', () => {
    const backend = unwrap(CudaBackend.create());
    const device = backend.devices[0] as Device;
    const table = test.createCountingResource('device', true);
    const resource = unwrap(NativeResource.open(backend, table));
    const producer = unwrap(backend.createStream(device, { label: 'producer' }));
    const pool = unwrap(
      TensorPool.materialize(backend, {
        name: 'native device frames',
        memoryKind: MemoryKind.CudaDevice,
        device,
        slotCount: 4,
        slotByteSpan: 1 << 16,
        maxRank: 1,
        producerStream: producer,
        eventDevice: device,
        resource,
      }),
    );
    expect(test.countingResourceStats(table)).toMatchObject({ allocations: 1, liveBlocks: 1, bytesOutstanding: pool.backing.byteLength });
    unwrap(pool.allocateTensor({ shape: [1024], dtype: DType.float32 })).abandon();
    pool.dispose();
    expect(test.countingResourceStats(table)).toMatchObject({ deallocations: 1, liveBlocks: 0, bytesOutstanding: 0 });
    unwrap(resource.dispose());
    backend.dispose();
  });

  it('opens host tables only where the backend can adopt host memory (adoptHostMemory), else NotSupported', () => {
    const backend = unwrap(CudaBackend.create());
    const host = NativeResource.open(backend, test.createCountingResource('host', false));
    if (typeof (backend as Backend).adoptHostMemory === 'function') expect(host.ok).toBe(true);
    else expect(!host.ok && host.error.code).toBe(ErrorCode.NotSupported);
    if (host.ok) unwrap(host.value.dispose());
    backend.dispose();
  });
});
