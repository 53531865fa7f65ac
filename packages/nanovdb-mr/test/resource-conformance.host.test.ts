import { Device, HostBackend } from '@hs/streams';
import { AsyncFromSync, MallocResource } from '../src/index.js';
import { describeEveryResource } from './conformance/every-resource.js';
import { describeResourceConformance } from '../src/test/index.js';

describeEveryResource('HostBackend', () => new HostBackend());
describeEveryResource('HostBackend (seeded interleaving)', () => new HostBackend({ seed: 11 }));
describeResourceConformance('AsyncFromSync(MallocResource) on a pool-less device', () => {
  const backend = new HostBackend({ memoryPools: false });
  return { backend, device: Device.cuda(0), resource: new AsyncFromSync(backend, new MallocResource(backend, Device.cuda(0))) };
});
