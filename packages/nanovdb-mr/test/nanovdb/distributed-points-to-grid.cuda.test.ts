// distributedPointsToGrid on the GPU (issue 27 item 3): the parts are built by the CUDA kernels on each device
// (two GPUs when there are two, else two and three streams of cuda:0) after the split on the device, and the merged
// grid equals the host build byte for byte.
import { describe, it } from 'vitest';
import { CudaBackend, Device, unwrap } from '@hs/streams';
import { describeDistributedPointsToGrid } from './distributed-points-to-grid-suite.js';

const gpu = CudaBackend.available();
// Under compute-sanitizer every access is checked: smaller clouds keep the run short.
const sanitizer = process.env.HS_GPU_SANITIZER === '1';

if (gpu) {
  const probe = unwrap(CudaBackend.create());
  const two = probe.devices.length >= 2;
  probe.dispose();
  const devices = two ? [Device.cuda(0), Device.cuda(1)] : [Device.cuda(0), Device.cuda(0)];
  describeDistributedPointsToGrid(two ? 'CudaBackend, two GPUs' : 'CudaBackend, two streams of cuda:0', () => unwrap(CudaBackend.create()), devices, sanitizer ? 2000 : 50_000);
  // three parts: the device split's bounds and part copies with one more stream (on one GPU, or two GPUs with cuda:0
  // twice); fewer points (the host reference builds of the wide clouds dominate the suite's time), still above the
  // split's 16384-point sample
  const three = two ? [Device.cuda(0), Device.cuda(1), Device.cuda(0)] : [Device.cuda(0), Device.cuda(0), Device.cuda(0)];
  describeDistributedPointsToGrid(two ? 'CudaBackend, two GPUs and cuda:0 again' : 'CudaBackend, three streams of cuda:0', () => unwrap(CudaBackend.create()), three, sanitizer ? 1000 : 20_000);
} else {
  describe('distributedPointsToGrid on CudaBackend', () => {
    it.skip('needs a CUDA device and a built @hs/cuda-native (none here)', () => undefined);
  });
}
