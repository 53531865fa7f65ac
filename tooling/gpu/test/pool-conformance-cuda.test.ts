import { CudaBackend } from '@hs/streams';
import { describe, it } from 'vitest';
import { describePoolConformance } from '../../../packages/pool/test/conformance/pool-conformance.js';
import { makeCudaHarness } from './cuda-pool-harness.js';

// The pool's conformance suite, unchanged, on the CUDA backend.
if (CudaBackend.available()) describePoolConformance('CudaBackend (stream-memory-op gates)', makeCudaHarness);
else {
  describe('TensorPool conformance: CudaBackend', () => {
    it.skip('needs a CUDA device and a built @hs/cuda-native (none here)', () => undefined);
  });
}
