import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { NativeResource } from '@hs/nanovdb-mr';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { loadTestAddon } from '../../nanovdb-mr/test/support/test-addon.js';
import { TensorPool } from '../src/index.js';

const { addon, reason } = loadTestAddon();
if (addon === null) console.log(`TensorPool native-resource test skipped: the native test addon is unavailable (${reason})`);

describe.skipIf(addon === null)('TensorPool backing from a native addon’s resource table', () => {
  it('takes its backing from the C allocator and gives it back at dispose (counted on the C side)', () => {
    const backend = new HostBackend({ scheduling: 'manual' });
    const table = addon!.createCountingResource('host', false);
    const resource = unwrap(NativeResource.open(backend, table));
    const pool = unwrap(
      TensorPool.materialize(backend, {
        name: 'native frames',
        memoryKind: MemoryKind.Host,
        device: Device.cpu(),
        slotCount: 4,
        slotByteSpan: 1000,
        maxRank: 1,
        producerStream: null,
        eventDevice: Device.cuda(0),
        resource,
      }),
    );
    expect(pool.resource).toBe(resource);
    const during = addon!.countingResourceStats(table);
    expect([during.allocations, during.liveBlocks]).toEqual([1, 1]);
    expect(during.bytesOutstanding).toBe(pool.backing.byteLength);
    const loan = unwrap(pool.allocateTensor({ shape: [250], dtype: DType.float32 }));
    expect(pool.stats.loaned).toBe(1);
    loan.abandon();
    pool.dispose();
    expect(addon!.countingResourceStats(table)).toMatchObject({ allocations: 1, deallocations: 1, liveBlocks: 0, bytesOutstanding: 0 });
    unwrap(resource.dispose());
    backend.dispose();
  });
});
