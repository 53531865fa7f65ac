import { Device, HostBackend } from '@hs/streams';
import { describeResourceConformance } from '@hs/nanovdb-mr/test';
import { FirstFitResource } from './first-fit-resource.js';

const ARENA = 32 * 1024 * 1024; // bytes

describeResourceConformance('FirstFitResource', () => {
  const backend = new HostBackend();
  const resource = new FirstFitResource(backend, ARENA);
  return { backend, device: Device.cuda(0), resource, maxBytes: ARENA, dispose: () => resource.dispose() };
});
