// Sidecar channels and DLPack views over real device memory (issue 24 item 2): a grid with channels copied to the GPU,
// its channel and leaf values imported as device tensors without a copy, and a grid adopted from a device u8 tensor.
import { describe, expect, it } from 'vitest';
import { CudaBackend, Device, MemoryKind, unwrap } from '@hs/streams';
import { DType, Tensor, importDLPack } from '../../../tensor/src/index.js';
import { DeviceResource, GridType, HostResource, attachChannels, channelDLPack, channelValues, gridFromTensorAsync, indexToGrid, pointsToGrid, valuesDLPack } from '../../src/index.js';

if (CudaBackend.available()) {
  describe('sidecar channels on CudaBackend', () => {
    it('channel and values tensors alias device memory; a device u8 tensor becomes a validated grid', async () => {
      const backend = unwrap(CudaBackend.create());
      const host = new HostResource(backend);
      const stream = unwrap(backend.createStream(Device.cuda(0)));
      const device = new DeviceResource(backend, Device.cuda(0));
      const coords = new Int32Array([0, 0, 0, 1, 2, 3, 40, 9, 9, -200, 4, 300]);
      const density = new Float32Array([0.5, 1.5, 2.5, 3.5]);
      const topology = unwrap(pointsToGrid(backend, host, { space: 'index', coords }, { gridType: GridType.OnIndex }));
      const channel = unwrap(channelValues(topology, { coords, values: density }, GridType.Float, -1)) as Float32Array;
      const grid = unwrap(attachChannels(backend, host, topology, [{ name: 'density', type: GridType.Float, values: channel }]));
      const dense = unwrap(indexToGrid(backend, host, grid, 'density'));
      const onDevice = unwrap(grid.copyTo(stream, device));
      const denseOnDevice = unwrap(dense.copyTo(stream, device));
      expect(onDevice.memoryKind).toBe(MemoryKind.CudaDevice);

      const { managed, memory } = unwrap(channelDLPack(onDevice, 'density'));
      expect(managed.dlTensor.device).toEqual({ deviceType: 2, deviceId: 0 });
      const tensor = unwrap(importDLPack(managed, { backend, memory }));
      unwrap(tensor.setReadinessStream(stream));
      const out = new Uint8Array(tensor.byteSize);
      await tensor.copyToHost(out, stream);
      expect(Array.from(new Float32Array(out.buffer))).toEqual(Array.from(channel));
      onDevice.dispose(); // the tensor still holds the device bytes
      const again = new Uint8Array(tensor.byteSize);
      await tensor.copyToHost(again, stream);
      expect(Array.from(again)).toEqual(Array.from(out));
      tensor.dispose();

      const values = unwrap(valuesDLPack(denseOnDevice));
      const leafValues = unwrap(importDLPack(values.managed, { backend, memory: values.memory }));
      expect(leafValues.shape).toEqual([dense.grids[0]!.nodeCount[0], 512]);
      leafValues.dispose();

      const block = denseOnDevice.storage.data!;
      const bytes = unwrap(Tensor.import({ backend, memory: block.memory, byteOffset: block.byteOffset, shape: [denseOnDevice.sizeBytes], dtype: DType.uint8 }));
      const adopted = await gridFromTensorAsync(backend, stream, bytes);
      expect(adopted.memoryKind).toBe(MemoryKind.CudaDevice);
      expect(adopted.grids[0]).toEqual(dense.grids[0]);
      adopted.dispose();
      bytes.dispose();
      denseOnDevice.dispose();
      await backend.synchronizeStream(stream);
      [topology, grid, dense].forEach((g) => g.dispose());
    });
  });
} else {
  describe('sidecar channels on CudaBackend', () => {
    it.skip('needs a CUDA device and a built @hs/cuda-native (none here)', () => undefined);
  });
}
