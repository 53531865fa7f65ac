import { describe, it } from 'vitest';
import { CudaBackend, unwrap } from '../src/index.js';
import { describeBackendConformance } from '../src/test/index.js';

// The same suite as the host backend's, with its defaults: the hs.test.* kernels it launches are in the
// native registry (hs.test.shape, which records its arguments on the host, is host-staged).
if (CudaBackend.available()) {
  describeBackendConformance('CudaBackend', () => unwrap(CudaBackend.create()));
} else {
  describe('Backend conformance: CudaBackend', () => {
    it.skip('needs a CUDA device and a built @hs/cuda-native (none here)', () => undefined);
  });
}
