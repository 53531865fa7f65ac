import { addCudaTestKernels } from '@hs/cuda-native';
import { describe, it } from 'vitest';
import { CudaBackend, unwrap } from '../src/index.js';
import { describeBackendConformance } from '../src/test/index.js';

// The same suite as the host backend's, with its defaults: the hs.test.* kernels it launches are added to
// the native registry from the test addon (hs.test.shape, which records its arguments on the host, is
// host-staged), since the published hs_cuda.node carries none.
const kernels = addCudaTestKernels();
if (CudaBackend.available()) {
  if (!kernels.ok) console.log(`CudaBackend conformance: the kernels group is skipped: ${kernels.reason}`);
  describeBackendConformance('CudaBackend', () => unwrap(CudaBackend.create()), { hostKernels: kernels.ok });
} else {
  describe('Backend conformance: CudaBackend', () => {
    it.skip('needs a CUDA device and a built @hs/cuda-native (none here)', () => undefined);
  });
}
