import { Device, HostBackend, MemoryKind, unwrap, type Stream } from '@hs/streams';
import {
  AsyncFromSync,
  DeviceResource,
  HostResource,
  LimitingResource,
  MallocResource,
  ManagedResource,
  PinnedResource,
  ResourceRef,
  SharedResource,
  StatisticsResource,
  SyncFromAsync,
  TrackingResource,
  defaultResource,
  type MemoryBlock,
} from '../src/index.js';
import { describeResourceConformance, type ResourceFixture } from './conformance/resource-conformance.js';
import { plainArenaResource } from './support/plain-arena-resource.js';

const cuda0 = Device.cuda(0);

/** A custom stream-ordered resource written as two methods over a DeviceResource. */
class TwoMethodResource extends SyncFromAsync {
  constructor(private readonly inner: DeviceResource, stream: Stream) {
    super(stream);
  }
  allocateAsync(bytes: number, alignment: number, stream: Stream) {
    return this.inner.allocateAsync(bytes, alignment, stream);
  }
  deallocateAsync(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream) {
    return this.inner.deallocateAsync(block, bytes, alignment, stream);
  }
}

function fixture(make: (backend: HostBackend) => Omit<ResourceFixture, 'backend' | 'device'>, seed?: number): () => ResourceFixture {
  return () => {
    const backend = new HostBackend(seed === undefined ? {} : { seed });
    return { backend, device: cuda0, ...make(backend) };
  };
}

describeResourceConformance('HostResource', fixture((b) => ({ resource: new HostResource(b) })));
describeResourceConformance('PinnedResource', fixture((b) => ({ resource: new PinnedResource(b) })));
describeResourceConformance('DeviceResource (seeded interleaving)', fixture((b) => ({ resource: new DeviceResource(b, cuda0) }), 11));
describeResourceConformance('MallocResource', fixture((b) => ({ resource: new MallocResource(b, cuda0) })));
describeResourceConformance('ManagedResource', fixture((b) => ({ resource: new ManagedResource(b, cuda0) })));
describeResourceConformance('defaultResource(cudaDevice)', fixture((b) => ({ resource: unwrap(defaultResource(b, MemoryKind.CudaDevice, cuda0)) })));
describeResourceConformance('AsyncFromSync(MallocResource)', fixture((b) => ({ resource: new AsyncFromSync(b, new MallocResource(b, cuda0)) })));
describeResourceConformance(
  'AsyncFromSync(MallocResource) on a pool-less device',
  () => {
    const backend = new HostBackend({ memoryPools: false });
    return { backend, device: cuda0, resource: new AsyncFromSync(backend, new MallocResource(backend, cuda0)) };
  },
);
describeResourceConformance(
  'SyncFromAsync (two-method custom resource)',
  fixture((b) => ({ resource: new TwoMethodResource(new DeviceResource(b, cuda0), unwrap(b.createStream(cuda0, { label: 'sync pair' }))) })),
);
describeResourceConformance('ResourceRef(DeviceResource)', fixture((b) => ({ resource: new ResourceRef(new DeviceResource(b, cuda0)) })));
describeResourceConformance('SharedResource(PinnedResource)', fixture((b) => ({ resource: new SharedResource(new PinnedResource(b)) })));
describeResourceConformance('StatisticsResource(DeviceResource)', fixture((b) => ({ resource: new StatisticsResource(new DeviceResource(b, cuda0)) })));
describeResourceConformance('TrackingResource(ManagedResource)', fixture((b) => ({ resource: new TrackingResource(new ManagedResource(b, cuda0)) })));
describeResourceConformance('LimitingResource(DeviceResource, 2 GiB)', fixture((b) => ({ resource: new LimitingResource(new DeviceResource(b, cuda0), 2 ** 31) })));
describeResourceConformance(
  'plain JS object (bump arena over managed memory)',
  fixture((b) => {
    const arena = plainArenaResource(b, cuda0, 32 * 1024 * 1024);
    return { resource: arena, maxBytes: 16 * 1024 * 1024, dispose: () => arena.dispose() };
  }),
);
describeResourceConformance(
  'AsyncFromSync(plain JS arena)',
  fixture((b) => {
    const arena = plainArenaResource(b, cuda0, 32 * 1024 * 1024);
    return { resource: new AsyncFromSync(b, arena), maxBytes: 16 * 1024 * 1024, dispose: () => arena.dispose() };
  }),
);
