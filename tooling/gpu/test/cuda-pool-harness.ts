import { loadCudaNative } from '@hs/cuda-native';
import { CudaBackend, Device, MemoryKind, unwrap, type Stream } from '@hs/streams';
import type { PoolConformanceHarness } from '@hs/pool/test';

/**
 * The CUDA backend as a pool conformance target. `hold` gates a stream behind a device-side wait on a
 * 64-bit flag in pinned memory (a stream memory operation); releasing writes the flag from the host.
 * `settle` synchronizes every stream that is not held. There is no ordering checker on CUDA (0).
 */
export function makeCudaHarness(): PoolConformanceHarness {
  const backend = unwrap(CudaBackend.create());
  const loaded = loadCudaNative();
  if (!loaded.ok) throw new Error(loaded.reason);
  const cuda = loaded.binding;
  const device = backend.devices[0] as Device;
  const streams: Stream[] = [];
  const held = new Map<Stream, BigUint64Array>();
  const open = (flag: BigUint64Array): void => {
    flag[0] = 1n;
  };
  return {
    backend,
    device,
    createStream(label) {
      const stream = unwrap(backend.createStream(device, { label }));
      streams.push(stream);
      return stream;
    },
    hold(stream) {
      const memory = unwrap(backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 8, label: `gate for ${stream.label}` }));
      const view = unwrap(backend.hostView(memory));
      const flag = new BigUint64Array(view.buffer, view.byteOffset, 1);
      flag[0] = 0n;
      const status = cuda.streamWaitValue64(backend.nativeStream(stream), memory.address, 1n);
      if (status !== 0) throw new Error(`cuStreamWaitValue64 failed with CUresult ${status}`);
      held.set(stream, flag);
      return () => {
        open(flag);
        held.delete(stream);
      };
    },
    async settle() {
      await Promise.all(streams.filter((s) => !s.destroyed && !held.has(s)).map((s) => backend.synchronizeStream(s)));
    },
    orderingViolations() {
      return 0;
    },
    dispose() {
      for (const flag of held.values()) open(flag);
      held.clear();
      backend.dispose();
    },
  };
}
