import { describe, it } from 'vitest';
import { CudaBackend, unwrap } from '@hs/streams';
import { describeEveryResource } from './conformance/every-resource.js';

// The same suite as on the host backend, over real device memory.
if (CudaBackend.available()) {
  describeEveryResource('CudaBackend', () => unwrap(CudaBackend.create()));
} else {
  describe('resource conformance on CudaBackend', () => {
    it.skip('needs a CUDA device and a built @hs/cuda-native (none here)', () => undefined);
  });
}
