import { addCudaTestKernels, loadCudaTestAddon } from '@hs/cuda-native';
import { CudaBackend, Device, MemoryKind, unwrap, type DeviceMemory, type MemoryRange, type NativeTensorSource } from '@hs/streams';
import { DType, Tensor } from '@hs/tensor';
import { afterAll, describe, expect, it } from 'vitest';

// hs.test.spinFill, the producer, comes from the test addon; the downstream addon is the other test addon.
const kernels = addCudaTestKernels();
const abiAddon = loadCudaTestAddon<AbiTestAddon>('hs_abi_test.node');
const gpu = CudaBackend.available() && kernels.ok && abiAddon.ok;
if (!gpu) console.log(`C ABI GPU tests skipped: ${!kernels.ok ? kernels.reason : !abiAddon.ok ? abiAddon.reason : 'no CUDA device or @hs/cuda-native not built'}`);

interface AbiTestAddon {
  addOne(input: bigint, output: bigint): number;
}

describe.skipIf(!gpu)('C ABI (native/include/hs/hs.h) with a downstream test addon', () => {
  const backend = gpu ? unwrap(CudaBackend.create()) : (null as never);
  const addon = (abiAddon.ok ? abiAddon.addon : null) as AbiTestAddon;
  afterAll(() => backend?.dispose());

  it('the addon waits on the readiness event, runs its kernel on the given stream and names its readiness stream', async () => {
    const device = backend.devices[0] as Device;
    const n = 1 << 16;
    const producer = unwrap(backend.createStream(device, { label: 'producer' }));
    const worker = unwrap(backend.createStream(device, { label: 'addon stream' }));
    const reader = unwrap(backend.createStream(device, { label: 'reader' }));
    const inMemory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: n }));
    const outMemory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: n }));
    const whole = (memory: DeviceMemory): MemoryRange => ({ memory, byteOffset: 0, byteLength: n, label: 'bytes' });
    unwrap(backend.memsetAsync(producer, whole(inMemory), 0));
    await backend.synchronizeStream(producer);
    // The producer is busy for 100 ms before its bytes (41) land: only the readiness wait orders the addon after it.
    unwrap(backend.launchKernel(producer, { name: 'hs.test.spinFill', reads: [], writes: [whole(inMemory)], params: [100_000_000, 41], host: () => undefined }));
    const input = unwrap(Tensor.import({ backend, memory: inMemory, shape: [n], dtype: DType.uint8, name: 'input' }));
    unwrap(input.setReadinessStream(producer));

    const inRecord = unwrap(backend.exportNativeTensor(input, worker));
    const outSource: NativeTensorSource = { memory: outMemory, byteOffset: 0, shape: [n], strides: [1], dtype: DType.uint8, readOnly: false, readinessEvent: null };
    const outRecord = unwrap(backend.exportNativeTensor(outSource, worker));
    expect(() => addon.addOne(inRecord, inRecord)).toThrow(/read-only/);
    expect(addon.addOne(inRecord, outRecord)).toBe(0);

    const named = backend.nativeTensorReadinessStream(outRecord);
    expect(named).toBe(worker);
    const output = unwrap(Tensor.import({ backend, memory: outMemory, shape: [n], dtype: DType.uint8, name: 'addon output' }));
    unwrap(output.setReadinessStream(named!));
    unwrap(backend.streamWaitEvent(reader, output.readinessEvent!));
    const seen = new Uint8Array(n);
    unwrap(backend.copyToHostAsync(reader, seen, whole(outMemory)));
    await backend.synchronizeStream(reader);
    expect(seen.every((b) => b === 42)).toBe(true);
    backend.releaseNativeTensor(inRecord);
    backend.releaseNativeTensor(outRecord);
  });
});
