// Point attributes reduced into voxels on the GPU (issue 24 item 1): the sort keeps each sorted point's input index,
// hs.nanovdb.pointsToGrid.reduce (one thread per voxel segment, float64 sums, -fmad=false) writes the values, and the
// async and bounded builds equal the host builder pointAttributesToGrid byte for byte for every grid type x reduction.
import { describe, it } from 'vitest';
import { CudaBackend, unwrap } from '@hs/streams';
import { describeStreamPointAttributes } from './stream-point-attributes-suite.js';

const gpu = CudaBackend.available();
// Under compute-sanitizer every access is checked: smaller clouds keep the run short.
const sanitizer = process.env.HS_GPU_SANITIZER === '1';

if (gpu) describeStreamPointAttributes('CudaBackend', () => unwrap(CudaBackend.create()), { points: sanitizer ? 1000 : 12_000 });
else {
  describe('pointsToGridAsync with point attributes on CudaBackend', () => {
    it.skip('needs a CUDA device and a built @hs/cuda-native (none here)', () => undefined);
  });
}
