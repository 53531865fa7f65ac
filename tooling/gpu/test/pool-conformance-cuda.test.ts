import { CudaBackend } from '@hs/streams';
import { describe, it } from 'vitest';
import { describePoolConformance } from '@hs/pool/test';
import { makeCudaHarness } from './cuda-pool-harness.js';

// The pool's conformance suite, unchanged, on the CUDA backend. Under compute-sanitizer's initcheck the one
// test that parks a stream behind a host-released gate (cuStreamWaitValue64 on pinned memory) ran past 40 s
// on the H200 while every other test of the suite passed there in about 1 s; it is skipped under initcheck only.
const holdUnavailable =
  process.env['HS_GPU_SANITIZER_TOOL'] === 'initcheck' ? 'under initcheck a stream waiting on a host-written gate value (cuStreamWaitValue64) did not resume within 40 s on the H200; memcheck, racecheck and synccheck run this test' : undefined;
if (CudaBackend.available()) describePoolConformance('CudaBackend (stream-memory-op gates)', makeCudaHarness, holdUnavailable === undefined ? {} : { holdUnavailable });
else {
  describe('TensorPool conformance: CudaBackend', () => {
    it.skip('needs a CUDA device and a built @hs/cuda-native (none here)', () => undefined);
  });
}
