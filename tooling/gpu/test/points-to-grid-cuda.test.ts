import { CudaBackend, unwrap, type Device, type Stream } from '@hs/streams';
import { loadCudaNative, type CudaNativeBinding } from '@hs/cuda-native';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BoundedPointsToGrid,
  ResourceBuffer,
  BufferView,
  DeviceResource,
  GridType,
  PinnedResource,
  countGridNodes,
  validateGrids,
  type MemoryBlock,
  type PointAttributeGridOptions,
  type PointsToGridOptions,
} from '../../../packages/nanovdb-mr/src/index.js';
import { describeStreamPointsToGrid, expectSameBytes, hostGridBytes, indexPoints, keptVoxels } from '../../../packages/nanovdb-mr/test/nanovdb/stream-points-to-grid-suite.js';
import { describeValueWrite } from '../../../packages/nanovdb-mr/test/nanovdb/points-to-grid-write-values-suite.js';
import { attributeValues, clusteredCloud, hostAttributeGridBytes } from '../../../packages/nanovdb-mr/test/nanovdb/stream-point-attributes-suite.js';

const gpu = CudaBackend.available();
if (!gpu) console.log('PointsToGrid GPU tests skipped: no CUDA device or @hs/cuda-native not built');
// Under compute-sanitizer every access is checked: smaller clouds keep the run short.
const sanitizer = process.env.HS_GPU_SANITIZER === '1';

if (gpu) describeStreamPointsToGrid('CudaBackend', () => unwrap(CudaBackend.create()), sanitizer ? { points: 3000, range: 300 } : { points: 100_000, range: 200 });
// The write stage with per-voxel values (Float, Double, Int32, Vec3f, RGBA8, Mask): device bytes = host write = voxelsToGrid.
if (gpu) describeValueWrite('CudaBackend', () => unwrap(CudaBackend.create()), sanitizer ? { points: 3000, range: 40 } : { points: 100_000, range: 150 });

describe.skipIf(!gpu)('CUDA graphs: capture, instantiate, launch twice', () => {
  let backend: CudaBackend;
  let cuda: CudaNativeBinding;
  let device: Device;
  let stream: Stream;
  let native: bigint;
  beforeAll(() => {
    backend = unwrap(CudaBackend.create());
    const loaded = loadCudaNative();
    if (!loaded.ok) throw new Error(loaded.reason);
    cuda = loaded.binding;
    device = backend.devices[0] as Device;
    stream = unwrap(backend.createStream(device, { label: 'capture' }));
    native = backend.nativeStream(stream);
  });
  afterAll(() => backend?.dispose());

  it('the async ResourceBuffer path (allocate, memset, copy out, free) runs correctly at each launch', async () => {
    const out = unwrap(ResourceBuffer.allocate(backend, new PinnedResource(backend), 1 << 16));
    const view = unwrap(out.hostView());
    const resource = new DeviceResource(backend, device);
    expect(cuda.streamBeginCapture(native)).toBe(0);
    const scratch = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, 1 << 16, { noInit: true }));
    unwrap(backend.memsetAsync(stream, scratch.data as MemoryBlock, 0x5a));
    unwrap(backend.memcpyAsync(stream, out.data as MemoryBlock, scratch.data as MemoryBlock));
    unwrap(scratch.destroy(stream));
    const graph = cuda.streamEndCapture(native);
    const exec = cuda.graphInstantiate(graph);
    for (let launch = 0; launch < 2; launch++) {
      view.fill(0);
      expect(cuda.graphLaunch(exec, native)).toBe(0);
      await backend.synchronizeStream(stream);
      expect(view.every((b) => b === 0x5a)).toBe(true);
    }
    expect(cuda.graphExecDestroy(exec)).toBe(0);
    expect(cuda.graphDestroy(graph)).toBe(0);
    out.dispose();
  });

  it('a bounded PointsToGrid build, relaunched with new points in the same input memory: host grids each time, overflow reported', async () => {
    const n = sanitizer ? 2000 : 200_000;
    const capacity = { points: n, uppers: 16, lowers: 2048, leaves: sanitizer ? 1500 : 60_000 };
    const ORIGIN = [1, 2, 3] as const;
    const options: PointsToGridOptions = { gridType: GridType.OnIndex, voxelSize: 0.25, origin: ORIGIN, name: 'captured' };
    const resource = new DeviceResource(backend, device);
    const build = unwrap(BoundedPointsToGrid.create(backend, stream, resource, capacity, options));
    const input = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, 3 * n, { noInit: true, element: Float32Array }));
    const span = { space: 'world', positions: BufferView.over(input) } as const;
    await backend.synchronizeStream(stream); // the template upload ran before the capture
    expect(cuda.streamBeginCapture(native)).toBe(0);
    unwrap(build.encode(stream, span));
    const graph = cuda.streamEndCapture(native);
    const exec = cuda.graphInstantiate(graph);
    const clouds = [
      indexPoints(n, 'clustered', sanitizer ? 60 : 240, 11),
      indexPoints(n, 'uniform', sanitizer ? 40 : 150, 12),
      indexPoints(n, 'uniform', sanitizer ? 400 : 2000, 13), // more leaves than the capacity: clamped
    ];
    for (const [round, cloud] of clouds.entries()) {
      const points = Float32Array.from(cloud, (c, i) => c * 0.25 + (ORIGIN[i % 3] as number));
      unwrap(backend.copyFromHostAsync(stream, input.data as MemoryBlock, new Uint8Array(points.buffer)));
      expect(cuda.graphLaunch(exec, native)).toBe(0);
      const report = await build.readReport(stream);
      const bytes = new Uint8Array(report.gridSize);
      unwrap(backend.copyToHostAsync(stream, bytes, { ...(build.grid.data as MemoryBlock), byteLength: report.gridSize }));
      await backend.synchronizeStream(stream);
      expect(unwrap(validateGrids(bytes))[0]?.voxelCount).toBe(report.counts.voxels);
      expect(report.overflowed).toBe(round === 2);
      if (round < 2) {
        expectSameBytes(bytes, hostGridBytes(points, options));
      } else {
        expect(report.overflow.leaves).toBe(true);
        expectSameBytes(bytes, hostGridBytes(keptVoxels(cloud, capacity), { ...options }));
      }
    }
    expect(cuda.graphExecDestroy(exec)).toBe(0);
    expect(cuda.graphDestroy(graph)).toBe(0);
    input.dispose();
    build.dispose();
  });

  it('a bounded OnIndex build with a sidecar channel, captured and relaunched: the channel placed on the device each time, pointAttributesToGrid bytes', async () => {
    const n = sanitizer ? 1000 : 20_000;
    const clouds = [clusteredCloud(n, 21), clusteredCloud(n, 22)];
    const needs = clouds.map((c) => unwrap(countGridNodes(Float64Array.from(c))));
    const most = (key: 'uppers' | 'lowers' | 'leaves'): number => Math.max(...needs.map((need) => need[key]));
    const capacity = { points: n, uppers: most('uppers'), lowers: most('lowers'), leaves: most('leaves') };
    const options: PointAttributeGridOptions = {
      gridType: GridType.OnIndex,
      channel: { name: 'colour', type: GridType.Vec3f },
      background: 0.5,
      attributes: { values: undefined as never, channels: 3, reduction: 'mean' },
    };
    const resource = new DeviceResource(backend, device);
    const build = unwrap(BoundedPointsToGrid.create(backend, stream, resource, capacity, { ...options, attributes: { element: Uint8Array, channels: 3, reduction: 'mean' } }));
    const input = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, 3 * n, { noInit: true, element: Int32Array }));
    const colours = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, 3 * n, { noInit: true, element: Uint8Array }));
    await backend.synchronizeStream(stream); // the template uploads ran before the capture
    expect(cuda.streamBeginCapture(native)).toBe(0);
    unwrap(build.encode(stream, { space: 'index', coords: BufferView.over(input) }, undefined, BufferView.over(colours)));
    const graph = cuda.streamEndCapture(native);
    const exec = cuda.graphInstantiate(graph);
    for (const [round, coords] of clouds.entries()) {
      const seed = 21 + round;
      const rgb = attributeValues(Uint8Array, 3 * n, seed) as Uint8Array;
      unwrap(backend.copyFromHostAsync(stream, input.data as MemoryBlock, new Uint8Array(coords.buffer)));
      unwrap(backend.copyFromHostAsync(stream, colours.data as MemoryBlock, rgb));
      expect(cuda.graphLaunch(exec, native)).toBe(0);
      const report = await build.readReport(stream);
      expect(report.overflowed).toBe(false);
      const bytes = new Uint8Array(report.gridSize);
      unwrap(backend.copyToHostAsync(stream, bytes, { ...(build.grid.data as MemoryBlock), byteLength: report.gridSize }));
      await backend.synchronizeStream(stream);
      expectSameBytes(bytes, hostAttributeGridBytes(coords, rgb, options));
      expect(unwrap(validateGrids(bytes, { checksum: true }))[0]?.blindMetadataCount).toBe(1);
    }
    expect(cuda.graphExecDestroy(exec)).toBe(0);
    expect(cuda.graphDestroy(graph)).toBe(0);
    colours.dispose();
    input.dispose();
    build.dispose();
  });
});
