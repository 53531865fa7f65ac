import { Device, MemoryKind, unwrap, type Backend, type Stream } from '@hs/streams';
import {
  AsyncFromSync,
  DeviceResource,
  FaultyResource,
  HostResource,
  LimitingResource,
  MallocResource,
  ManagedResource,
  PinnedResource,
  RegionResource,
  ResourceRef,
  SharedResource,
  StatisticsResource,
  SyncFromAsync,
  TrackingResource,
  defaultResource,
  type MemoryBlock,
  type SyncResource,
} from '../../src/index.js';
import { describeResourceConformance } from '../../src/test/index.js';
import { plainArenaResource } from '../support/plain-arena-resource.js';

/** A custom stream-ordered resource written as two methods over a DeviceResource. */
class TwoMethodResource extends SyncFromAsync {
  constructor(
    private readonly inner: DeviceResource,
    stream: Stream,
  ) {
    super(stream);
  }
  allocateAsync(bytes: number, alignment: number, stream: Stream) {
    return this.inner.allocateAsync(bytes, alignment, stream);
  }
  deallocateAsync(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream) {
    return this.inner.deallocateAsync(block, bytes, alignment, stream);
  }
}

type Make = (backend: Backend, device: Device) => { resource: SyncResource; maxBytes?: number; dispose?: () => void };

const ARENA = 32 * 1024 * 1024;

/** Bytes of the region a RegionResource cuts its blocks from (inside a larger allocation, at a 4 KiB offset). */
const REGION = 16 * 1024 * 1024;

/** A RegionResource over bytes 4096..4096+REGION of one allocation of `kind` that the fixture owns. */
function regionFixture(b: Backend, kind: MemoryKind, device: Device): { resource: SyncResource; maxBytes: number; dispose: () => void } {
  const memory = unwrap(b.allocate({ kind, device, byteSize: REGION + 8192, alignment: 256, label: 'region fixture' }));
  const resource = new RegionResource({ memory, byteOffset: 4096, byteLength: REGION, label: 'conformance region' });
  return { resource, maxBytes: REGION, dispose: () => void b.free(memory) };
}

/** Every resource and adaptor hs ships (and two plain JS ones), each as a conformance fixture. */
const RESOURCES: readonly (readonly [string, Make])[] = [
  ['HostResource', (b) => ({ resource: new HostResource(b) })],
  ['PinnedResource', (b) => ({ resource: new PinnedResource(b) })],
  ['DeviceResource', (b, d) => ({ resource: new DeviceResource(b, d) })],
  ['MallocResource', (b, d) => ({ resource: new MallocResource(b, d) })],
  ['ManagedResource', (b, d) => ({ resource: new ManagedResource(b, d) })],
  ['defaultResource(cudaDevice)', (b, d) => ({ resource: unwrap(defaultResource(b, MemoryKind.CudaDevice, d)) })],
  ['AsyncFromSync(MallocResource)', (b, d) => ({ resource: new AsyncFromSync(b, new MallocResource(b, d)) })],
  ['SyncFromAsync (two-method custom resource)', (b, d) => ({ resource: new TwoMethodResource(new DeviceResource(b, d), unwrap(b.createStream(d, { label: 'sync pair' }))) })],
  ['ResourceRef(DeviceResource)', (b, d) => ({ resource: new ResourceRef(new DeviceResource(b, d)) })],
  ['SharedResource(PinnedResource)', (b) => ({ resource: new SharedResource(new PinnedResource(b)) })],
  ['StatisticsResource(DeviceResource)', (b, d) => ({ resource: new StatisticsResource(new DeviceResource(b, d)) })],
  ['TrackingResource(ManagedResource)', (b, d) => ({ resource: new TrackingResource(new ManagedResource(b, d)) })],
  ['LimitingResource(DeviceResource, 2 GiB)', (b, d) => ({ resource: new LimitingResource(new DeviceResource(b, d), 2 ** 31) })],
  ['FaultyResource(DeviceResource, probability 0)', (b, d) => ({ resource: new FaultyResource(new DeviceResource(b, d), { probability: 0, seed: 5 }) })],
  ['RegionResource (16 MiB of device memory)', (b, d) => regionFixture(b, MemoryKind.CudaDevice, d)],
  ['RegionResource (16 MiB of pinned host memory)', (b) => regionFixture(b, MemoryKind.PinnedHost, Device.cpu())],
  [
    'plain JS object (bump arena over managed memory)',
    (b, d) => {
      const arena = plainArenaResource(b, d, ARENA);
      return { resource: arena, maxBytes: ARENA / 2, dispose: () => arena.dispose() };
    },
  ],
  [
    'AsyncFromSync(plain JS arena)',
    (b, d) => {
      const arena = plainArenaResource(b, d, ARENA);
      return { resource: new AsyncFromSync(b, arena), maxBytes: ARENA / 2, dispose: () => arena.dispose() };
    },
  ],
];

/** Runs the resource conformance suite over every resource on backends made by `makeBackend`. */
export function describeEveryResource(backendName: string, makeBackend: () => Backend): void {
  for (const [name, make] of RESOURCES) {
    describeResourceConformance(`${name} on ${backendName}`, () => {
      const backend = makeBackend();
      const device = backend.devices[0] as Device;
      return { backend, device, ...make(backend, device) };
    });
  }
}
