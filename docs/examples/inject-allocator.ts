// Inject your own allocator from JavaScript: a plain object resource, an adaptor chain over it, and
// the places hs takes it (a ResourceBuffer, a TensorPool, the NanoVDB builder). `pnpm test` runs this file.
import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { TensorPool } from '@hs/pool';
import { ResourceBuffer, GridType, HostResource, LimitingResource, StatisticsResource, pointsToGrid, type SyncResource } from '@hs/nanovdb-mr';

const backend = new HostBackend();

// A resource is any object with allocate/deallocate. This one logs and forwards to hs's host resource.
const upstream = new HostResource(backend);
const logging: SyncResource = {
  hostAccessible: true,
  allocate(bytes, alignment) {
    console.log(`allocate ${bytes} B (alignment ${alignment})`);
    return upstream.allocate(bytes, alignment);
  },
  deallocate(block, bytes, alignment) {
    console.log(`deallocate ${bytes} B`);
    return upstream.deallocate(block, bytes, alignment);
  },
};

// Adaptors wrap an upstream and add one concern each: here a 4 MiB cap, then statistics on top.
const resource = new StatisticsResource(new LimitingResource(logging, 4 << 20));

// 1. A single-space buffer of 1024 float32 elements.
const samples = unwrap(ResourceBuffer.allocate(backend, resource, 1024, { element: Float32Array }));

// 2. A tensor pool: its one backing block comes from the resource when it is materialized.
const pool = unwrap(TensorPool.materialize(backend, {
  name: 'frames', memoryKind: MemoryKind.Host, device: Device.cpu(),
  slotCount: 4, slotByteSpan: 64 * 1024, maxRank: 2, dtype: DType.uint8,
  producerStream: null, resource,
}));

// 3. The NanoVDB builder: scratch and the grid itself come from the resource.
const grid = unwrap(pointsToGrid(backend, resource,
  { space: 'world', positions: new Float32Array([0.1, 0.2, 0.3, 1.5, 0, 0]) },
  { gridType: GridType.OnIndex, voxelSize: 0.5 }));

// A request beyond the cap fails as a value (OutOfMemory), with nothing allocated.
const tooBig = ResourceBuffer.allocate(backend, resource, 8 << 20);
console.log(tooBig.ok ? 'allocated' : `refused: ${tooBig.error.code}`);

const { bytes, allocations } = resource.statistics;
console.log(`live ${bytes.current} B in ${allocations.current} blocks, peak ${bytes.peak} B`);
grid.dispose();
pool.dispose();
samples.dispose();
console.log(`after dispose: ${resource.statistics.bytes.current} B live`);
backend.dispose();
