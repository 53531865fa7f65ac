import { Device, HostBackend } from '@hs/streams';
import type { SyncResource } from '@hs/nanovdb-mr';
import { describeResourceConformance } from '@hs/nanovdb-mr/test';
import { FirstFitResource } from './first-fit-resource.js';

const ARENA = 32 * 1024 * 1024; // bytes

/** A broken resource the suite must catch: it frees a block by its own size, whatever size the caller gives back. */
describeResourceConformance('lax-size FirstFitResource', () => {
  const backend = new HostBackend();
  const inner = new FirstFitResource(backend, ARENA);
  const resource: SyncResource = {
    hostAccessible: true,
    deviceAccessible: true,
    allocate: (bytes, alignment) => inner.allocate(bytes, alignment),
    deallocate: (block, _bytes, alignment) => inner.deallocate(block, block?.byteLength ?? 0, alignment),
  };
  return { backend, device: Device.cuda(0), resource, maxBytes: ARENA, dispose: () => inner.dispose() };
});
