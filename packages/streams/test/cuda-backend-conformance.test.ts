import { describe, it } from 'vitest';
import { CudaBackend, unwrap } from '../src/index.js';
import { describeBackendConformance } from './conformance/backend-conformance.js';

// The same suite as the host backend's. Native kernels are looked up by name, so the suite's kernel
// cases (which check the `host` callbacks' arguments) are skipped; the CUDA kernels have their own tests.
if (CudaBackend.available()) {
  describeBackendConformance('CudaBackend', () => unwrap(CudaBackend.create()), { hostKernels: false });
} else {
  describe('Backend conformance: CudaBackend', () => {
    it.skip('needs a CUDA device and a built @hs/cuda-native (none here)', () => undefined);
  });
}
