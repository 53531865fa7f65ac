// Channels and leaf values as @hs/tensor tensors through DLPack (no copy, host and device memory), and grids wrapped
// from u8 tensors (issue 24 item 2). @hs/tensor sits above this package, so the test imports its source directly.
import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { DType, Tensor, exportDLPack, importDLPack } from '../../../tensor/src/index.js';
import {
  DeviceResource,
  GridType,
  HostResource,
  ResourceBuffer,
  StatisticsResource,
  attachChannels,
  channelDLPack,
  channelValues,
  gridChannel,
  gridFromDLPack,
  gridFromTensor,
  gridFromTensorAsync,
  indexToGrid,
  pointsToGrid,
  readBlindData,
  valuesDLPack,
  voxelsToGrid,
} from '../../src/index.js';

const backend = new HostBackend();
const host = new StatisticsResource(new HostResource(backend));
const coords = new Int32Array([0, 0, 0, 1, 2, 3, 9, 9, 9, -20, 4, 300, 5000, 1, 1]);
const n = coords.length / 3;
const velocity = new Float32Array(3 * n).map((_, i) => i * 1.5 - 3);
const density = new Float32Array(n).map((_, i) => i + 0.25);

function indexGrid() {
  const topology = unwrap(pointsToGrid(backend, host, { space: 'index', coords }, { gridType: GridType.OnIndex }));
  const grid = unwrap(
    attachChannels(backend, host, topology, [
      { name: 'density', type: GridType.Float, values: unwrap(channelValues(topology, { coords, values: density }, GridType.Float, -1)) },
      { name: 'velocity', type: GridType.Vec3f, values: unwrap(channelValues(topology, { coords, values: velocity }, GridType.Vec3f)) },
    ]),
  );
  topology.dispose();
  return grid;
}

function hostFloats(t: Tensor): Float32Array {
  const bytes = unwrap(t.hostView());
  return new Float32Array(bytes.slice().buffer);
}

describe('channelDLPack', () => {
  it('host: a float32 [valueCount] / [valueCount, 3] tensor aliasing the channel bytes; the grid outlives dispose() until the tensor ends', () => {
    const grid = indexGrid();
    const meta = grid.grids[0]!;
    const before = host.statistics.bytes.current;
    const size = grid.sizeBytes;
    const { managed, memory } = unwrap(channelDLPack(grid, 'velocity'));
    expect(memory).toBe(grid.storage.data!.memory);
    expect(managed.dlTensor.dtype).toEqual({ code: 2, bits: 32, lanes: 1 });
    expect(managed.dlTensor.shape).toEqual([meta.valueCount, 3]);
    expect(managed.dlTensor.device.deviceType).toBe(1);
    const record = unwrap(gridChannel(grid, 'velocity'));
    expect(managed.dlTensor.byteOffset).toBe(grid.storage.data!.byteOffset + record.dataOffset);
    const tensor = unwrap(importDLPack(managed, { backend, memory }));
    expect(tensor.dtype).toBe(DType.float32);
    const expected = new Float32Array(3 * meta.valueCount);
    readBlindData(unwrap(grid.hostBytes()), meta, record, expected);
    expect(Array.from(hostFloats(tensor))).toEqual(Array.from(expected));
    // no copy: the tensor's view is the grid's memory
    const view = unwrap(tensor.hostView());
    expect(view.buffer).toBe(unwrap(grid.hostBytes()).buffer);

    grid.dispose();
    expect(host.statistics.bytes.current).toBe(before); // still held by the tensor
    tensor.dispose();
    expect(host.statistics.bytes.current).toBe(before - size);
    expect(channelDLPack(grid, 'velocity').ok).toBe(false); // disposed: InvalidState
  });

  it('device: the tensor aliases device memory; copyToHost reads the channel', async () => {
    const grid = indexGrid();
    const stream = unwrap(backend.createStream(Device.cuda(0)));
    const deviceResource = new DeviceResource(backend, Device.cuda(0));
    const onDevice = unwrap(grid.copyTo(stream, deviceResource));
    expect(onDevice.memoryKind).toBe(MemoryKind.CudaDevice);
    const { managed, memory } = unwrap(channelDLPack(onDevice, 'density'));
    expect(managed.dlTensor.device).toEqual({ deviceType: 2, deviceId: 0 });
    expect(managed.dlTensor.shape).toEqual([grid.grids[0]!.valueCount]);
    const tensor = unwrap(importDLPack(managed, { backend, memory }));
    unwrap(tensor.setReadinessStream(stream));
    const out = new Uint8Array(tensor.byteSize);
    await tensor.copyToHost(out, stream);
    const values = new Float32Array(out.buffer);
    expect(values[0]).toBe(-1);
    const acc = unwrap(grid.accessor());
    for (let i = 0; i < n; i++) expect(values[acc.getValue(coords[3 * i]!, coords[3 * i + 1]!, coords[3 * i + 2]!)]).toBe(density[i]);
    tensor.dispose();
    // attaching and converting read the grid on the host: a device grid is NotSupported, naming the way round
    const attach = attachChannels(backend, host, onDevice, [{ name: 'more', type: GridType.Float, values: new Float32Array(grid.grids[0]!.valueCount) }]);
    expect(!attach.ok && attach.error.code === ErrorCode.NotSupported && attach.error.message.includes('copyTo')).toBe(true);
    const convert = indexToGrid(backend, host, onDevice, 'density');
    expect(!convert.ok && convert.error.code).toBe(ErrorCode.NotSupported);
    onDevice.dispose();
    grid.dispose();
  });

  it('NotFound for an unknown channel', () => {
    const grid = indexGrid();
    const r = channelDLPack(grid, 'pressure');
    expect(!r.ok && r.error.code).toBe(ErrorCode.NotFound);
    grid.dispose();
  });
});

describe('valuesDLPack', () => {
  it('a valued grid: strided [leaves, 512, 3] over the leaves, element [l, n] the voxel value', () => {
    const grid = unwrap(voxelsToGrid(backend, host, { coords, values: velocity }, { gridType: GridType.Vec3f, background: [7, 8, 9] }));
    const { managed, memory } = unwrap(valuesDLPack(grid));
    const leaves = grid.grids[0]!.nodeCount[0];
    expect(managed.dlTensor.shape).toEqual([leaves, 512, 3]);
    const tensor = unwrap(importDLPack(managed, { backend, memory }));
    const all = new Float32Array(unwrap(grid.hostBytes()).slice().buffer);
    const acc = unwrap(grid.accessor());
    const [s0, s1] = tensor.strides as [number, number, number];
    const base = tensor.byteOffset / 4;
    const seen: number[][] = [];
    const out = new Float32Array(3);
    for (let l = 0; l < leaves; l++) {
      for (let m = 0; m < 512; m++) seen.push([all[base + l * s0 + m * s1]!, all[base + l * s0 + m * s1 + 1]!, all[base + l * s0 + m * s1 + 2]!]);
    }
    for (let i = 0; i < n; i++) {
      acc.getVector(coords[3 * i]!, coords[3 * i + 1]!, coords[3 * i + 2]!, out);
      expect(seen.some((v) => v[0] === out[0] && v[1] === out[1] && v[2] === out[2])).toBe(true);
    }
    expect(seen.filter((v) => v[0] === 7 && v[1] === 8 && v[2] === 9).length).toBe(512 * leaves - n);
    tensor.dispose();
    grid.dispose();
    const index = indexGrid();
    expect(!valuesDLPack(index).ok).toBe(true);
    index.dispose();
  });
});

describe('gridFromTensor', () => {
  function u8Tensor(bytes: Uint8Array): { tensor: Tensor; buffer: ResourceBuffer } {
    const buffer = unwrap(ResourceBuffer.allocate(backend, host, bytes.length));
    unwrap(buffer.hostView()).set(bytes);
    const block = buffer.data!;
    const tensor = unwrap(Tensor.import({ backend, memory: block.memory, byteOffset: block.byteOffset, shape: [bytes.length], dtype: DType.uint8 }));
    return { tensor, buffer: buffer as ResourceBuffer };
  }

  it('wraps a u8 tensor holding a grid (validated), zero copy; the release hook runs at dispose', () => {
    const grid = indexGrid();
    const { tensor, buffer } = u8Tensor(unwrap(grid.hostBytes()));
    let released = 0;
    const wrapped = unwrap(gridFromTensor(backend, tensor, { release: () => released++ }));
    expect(wrapped.grids[0]).toEqual(grid.grids[0]);
    expect(wrapped.storage.data!.memory).toBe(tensor.memory);
    expect(unwrap(gridChannel(wrapped, 'density')).valueCount).toBe(grid.grids[0]!.valueCount);
    wrapped.dispose();
    expect(released).toBe(1);
    // through DLPack: exportDLPack of the tensor, the deleter runs at dispose
    const { deleter, ...rest } = unwrap(exportDLPack(tensor, { releaseStream: null }));
    let deleted = 0;
    const viaDLPack = unwrap(gridFromDLPack(backend, { ...rest, deleter: () => (deleter?.(), deleted++) }, tensor.memory));
    expect(viaDLPack.gridCount).toBe(1);
    viaDLPack.dispose();
    expect(deleted).toBe(1);
    tensor.dispose();
    buffer.dispose();
    grid.dispose();
  });

  it('typed errors: corrupt bytes (the field named), a float32 tensor, device memory without the async path', async () => {
    const grid = indexGrid();
    const bytes = unwrap(grid.hostBytes()).slice();
    bytes[636] = 99; // gridType
    const { tensor, buffer } = u8Tensor(bytes);
    const bad = gridFromTensor(backend, tensor);
    expect(!bad.ok && bad.error.code === ErrorCode.InvalidArgument && bad.error.message.includes('gridType')).toBe(true);
    const floats = unwrap(Tensor.import({ backend, memory: tensor.memory, byteOffset: tensor.byteOffset, shape: [bytes.length / 4], dtype: DType.float32 }));
    const wrongType = gridFromTensor(backend, floats);
    expect(!wrongType.ok && wrongType.error.code === ErrorCode.InvalidArgument && wrongType.error.message.includes('uint8')).toBe(true);
    floats.dispose();
    tensor.dispose();
    buffer.dispose();

    const stream = unwrap(backend.createStream(Device.cuda(0)));
    const onDevice = unwrap(grid.copyTo(stream, new DeviceResource(backend, Device.cuda(0))));
    const block = onDevice.storage.data!;
    const deviceTensor = unwrap(Tensor.import({ backend, memory: block.memory, byteOffset: block.byteOffset, shape: [onDevice.sizeBytes], dtype: DType.uint8 }));
    const sync = gridFromTensor(backend, deviceTensor);
    expect(!sync.ok && sync.error.code).toBe(ErrorCode.NotSupported);
    const wrapped = await gridFromTensorAsync(backend, stream, deviceTensor);
    expect(wrapped.memoryKind).toBe(MemoryKind.CudaDevice);
    expect(wrapped.grids[0]).toEqual(grid.grids[0]);
    const channel = unwrap(channelDLPack(wrapped, 'velocity'));
    expect(channel.managed.dlTensor.device.deviceType).toBe(2);
    channel.managed.deleter();
    wrapped.dispose();
    deviceTensor.dispose();
    onDevice.dispose();
    grid.dispose();
  });
});
