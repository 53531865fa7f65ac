import { describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, HsError, MemoryKind, unwrap, type Backend, type MemoryRange, type Stream } from '@hs/streams';
import { importDLPack } from '../../../tensor/src/index.js';
import {
  BoundedPointsToGrid,
  BufferView,
  DeviceResource,
  GridHandle,
  GridType,
  HostResource,
  ResourceBuffer,
  channelDLPack,
  countGridNodes,
  gridBlindMetadata,
  pointAttributesToGrid,
  streamGridHandleAsync,
  valuesDLPack,
  pointsToGridAsync,
  validateGrids,
  type AttributeChannelType,
  type AttributeGridType,
  type ElementSpan,
  type PointAttributeElement,
  type PointAttributeLayout,
  type MemoryBlock,
  type PointAttributeArray,
  type PointAttributeGridOptions,
  type PointReduction,
} from '../../src/index.js';
import { storedNaNs } from './stored-nans.js';
import { expectSameBytes, indexPoints, random, useStreamSuiteBackend } from './stream-points-to-grid-suite.js';

type Coords = Int32Array | Float32Array | Float64Array;
type AttributeArrayConstructor = Float32ArrayConstructor | Float64ArrayConstructor | Int8ArrayConstructor | Uint8ArrayConstructor | Int16ArrayConstructor | Uint16ArrayConstructor | Int32ArrayConstructor | Uint32ArrayConstructor;

const DTYPES: readonly AttributeArrayConstructor[] = [Float32Array, Float64Array, Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array, Uint32Array];
const REDUCTIONS: readonly PointReduction[] = ['mean', 'sum', 'min', 'max', 'count', 'last'];
const COMPONENTS: Readonly<Record<number, number>> = { [GridType.Float]: 1, [GridType.Double]: 1, [GridType.Int32]: 1, [GridType.Vec3f]: 3, [GridType.RGBA8]: 4, [GridType.Mask]: 0 };
const CHANNEL_TYPES: readonly AttributeChannelType[] = [GridType.Float, GridType.Double, GridType.Int32, GridType.Vec3f, GridType.RGBA8];

/** A cloud whose voxels hold many points (long segments: a dense core) plus a sparse halo over several tiles. */
export function clusteredCloud(n: number, seed: number): Int32Array {
  const core = indexPoints(Math.ceil((3 * n) / 4), 'uniform', 5, seed);
  const halo = indexPoints(n - core.length / 3, 'clustered', 3000, seed + 1);
  const out = new Int32Array(3 * n);
  out.set(core);
  out.set(halo, core.length);
  return out;
}

/** `count` attribute numbers of `Type`, spread over the type's range (floats with fractions, large integers near the limits). */
export function attributeValues(Type: AttributeArrayConstructor, count: number, seed: number): PointAttributeArray {
  const next = random(seed);
  const out = new Type(count);
  const span = Type === Float32Array || Type === Float64Array ? 2000 : Type === Int32Array || Type === Uint32Array ? 4.2e9 : 2 ** (8 * Type.BYTES_PER_ELEMENT);
  const signed = Type === Float32Array || Type === Float64Array || Type === Int8Array || Type === Int16Array || Type === Int32Array;
  for (let i = 0; i < count; i++) out[i] = (next() - (signed ? 0.5 : 0)) * span * (Type === Float32Array || Type === Float64Array ? 1 : 0.999);
  return out;
}

/** `attributeValues` of `Type` with a NaN at every 7th number: quiet and signalling, with payloads and both signs. */
function withNaNs(Type: Float32ArrayConstructor | Float64ArrayConstructor, count: number, seed: number): Float32Array | Float64Array {
  const out = attributeValues(Type, count, seed) as Float32Array | Float64Array;
  const f32 = [0x7fc00001, 0xffc12345, 0x7f800001, 0xffc00000];
  const f64 = [0x7ff8000000000123n, 0xfff0000000000001n, 0x7ff00000000abcden, 0xfff8000000000000n];
  const words32 = new Uint32Array(out.buffer, out.byteOffset, out.byteLength / 4);
  const words64 = out instanceof Float64Array ? new BigUint64Array(out.buffer, out.byteOffset, count) : undefined;
  for (let i = 3, p = 0; i < count; i += 7, p++) {
    if (words64 === undefined) words32[i] = f32[p % f32.length] as number;
    else words64[i] = f64[p % f64.length] as bigint;
  }
  return out;
}

/** The host builder's bytes for the same points and attributes (the reference). */
export function hostAttributeGridBytes(points: Coords, values: PointAttributeArray, options: PointAttributeGridOptions): Uint8Array {
  const backend = new HostBackend();
  const spec = points instanceof Int32Array ? ({ space: 'index', coords: points } as const) : ({ space: 'world', positions: points } as const);
  const { attributes, ...rest } = options;
  const handle = unwrap(pointAttributesToGrid(backend, new HostResource(backend), spec, { values, channels: attributes.channels, reduction: attributes.reduction }, rest));
  const bytes = unwrap(handle.hostBytes()).slice();
  handle.dispose();
  return bytes;
}

/**
 * `pointsToGridAsync` with point attributes on one backend against the host builder `pointAttributesToGrid`: every
 * attribute grid type x reduction, every attribute dtype, byte for byte; bad attributes refused before any allocation.
 */
export function describeStreamPointAttributes(label: string, make: () => Backend, sizes: { readonly points: number }): void {
  describe(`pointsToGridAsync with point attributes on ${label}`, () => {
    let backend: Backend;
    let device: Device;
    let stream: Stream;
    let deviceResource: DeviceResource;
    useStreamSuiteBackend(make, 'pointAttributes', (setup) => ({ backend, device, stream, deviceResource } = setup));

    function upload<E extends AttributeArrayConstructor>(values: PointAttributeArray | Coords, resource = deviceResource): ResourceBuffer<DeviceResource, E> {
      const element = values.constructor as E;
      const buffer = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, Math.max(values.length, 4), { noInit: true, element }));
      if (values.length > 0) unwrap(backend.copyFromHostAsync(stream, { ...(buffer.data as MemoryBlock), byteLength: values.byteLength }, new Uint8Array(values.buffer, values.byteOffset, values.byteLength)));
      return buffer;
    }

    function pointSpan(buffer: ResourceBuffer<DeviceResource, Int32ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor>, length: number) {
      const view = unwrap(BufferView.of(buffer.data, length, buffer.element));
      return buffer.element === Int32Array ? ({ space: 'index', coords: view as BufferView<Int32ArrayConstructor> } as const) : ({ space: 'world', positions: view as BufferView<Float32ArrayConstructor> } as const);
    }

    async function download(range: MemoryRange, bytes: number): Promise<Uint8Array> {
      const out = new Uint8Array(bytes);
      unwrap(backend.copyToHostAsync(stream, out, { ...range, byteLength: bytes }));
      await backend.synchronizeStream(stream);
      return out;
    }

    async function streamBytes(points: Coords, values: PointAttributeArray, options: PointAttributeGridOptions): Promise<Uint8Array> {
      const input = upload<Int32ArrayConstructor>(points);
      const attr = upload<Float32ArrayConstructor>(values);
      const span = unwrap(BufferView.of(attr.data, values.length, values.constructor as Float32ArrayConstructor));
      const built = await pointsToGridAsync(backend, stream, deviceResource, pointSpan(input, points.length), { ...options, attributes: { ...options.attributes, values: span } });
      const bytes = await download(built.buffer.data as MemoryBlock, built.gridSize);
      built.buffer.dispose();
      attr.dispose();
      input.dispose();
      return bytes;
    }

    const gridTypes: readonly AttributeGridType[] = [GridType.Float, GridType.Double, GridType.Int32, GridType.Vec3f, GridType.RGBA8, GridType.Mask, GridType.OnIndex];
    let seed = 100;
    for (const gridType of gridTypes) {
      for (const [r, reduction] of REDUCTIONS.entries()) {
        const channelType = CHANNEL_TYPES[r % CHANNEL_TYPES.length] as AttributeChannelType;
        const valueType = gridType === GridType.OnIndex ? channelType : gridType;
        const dtype = DTYPES[(gridTypes.indexOf(gridType) + r) % DTYPES.length] as AttributeArrayConstructor;
        const title = `${GridType[gridType]}${gridType === GridType.OnIndex ? ` (${GridType[channelType]} channel)` : ''}, ${reduction} of ${dtype.name}`;
        const s = seed++;
        it(`${title}: the same bytes as pointAttributesToGrid, valid`, async () => {
          const world = s % 3 === 0;
          const coords = clusteredCloud(sizes.points, s);
          const points: Coords = world ? Float64Array.from(coords, (c) => c * 0.05 + 0.01) : coords;
          const components = COMPONENTS[valueType] as number;
          const channels = components === 0 || reduction === 'count' ? 1 + (s % 4) : components;
          const n = coords.length / 3;
          const values = attributeValues(dtype, channels * n, s);
          const options: PointAttributeGridOptions = {
            gridType,
            voxelSize: world ? 0.05 : 1,
            name: title,
            attributes: { values: undefined as never, channels, reduction },
            ...(gridType === GridType.OnIndex ? { channel: { name: `${reduction}_${GridType[channelType]}`, type: channelType }, background: -2 } : gridType === GridType.Mask ? {} : { background: 1 }),
          };
          const expected = hostAttributeGridBytes(points, values, options);
          const bytes = await streamBytes(points, values, options);
          expectSameBytes(bytes, expected);
          expect(unwrap(validateGrids(bytes))[0]?.gridType).toBe(gridType);
        });
      }
    }

    /** The bounded build's grid bytes (capacities that fit `sizing`, default the points, exactly: no overflow). */
    async function boundedBytes(points: Coords, values: PointAttributeArray, options: PointAttributeGridOptions, sizing: Coords = points): Promise<Uint8Array> {
      const input = upload<Int32ArrayConstructor>(points);
      const attr = upload<Float32ArrayConstructor>(values);
      const span = unwrap(BufferView.of(attr.data, values.length, values.constructor as Float32ArrayConstructor));
      const { attributes, ...rest } = options;
      const n = points.length / 3;
      const need = unwrap(countGridNodes(Float64Array.from(sizing), { voxelSize: options.voxelSize ?? 1, origin: options.origin ?? [0, 0, 0] }));
      const build = unwrap(
        BoundedPointsToGrid.create(backend, stream, deviceResource, { points: Math.max(n, 1), uppers: Math.max(need.uppers, 1), lowers: Math.max(need.lowers, 1), leaves: Math.max(need.leaves, 1) }, {
          ...rest,
          attributes: { element: values.constructor as Float32ArrayConstructor, channels: attributes.channels, reduction: attributes.reduction },
        }),
      );
      unwrap(build.encode(stream, pointSpan(input, points.length), undefined, span));
      const report = await build.readReport(stream);
      expect(report.overflow).toEqual({ points: false, uppers: false, lowers: false, leaves: false });
      expect(report.gridSize).toBeLessThanOrEqual(build.gridCapacityBytes);
      const bytes = await download(build.grid.data as MemoryBlock, report.gridSize);
      build.dispose();
      attr.dispose();
      input.dispose();
      return bytes;
    }

    for (const gridType of gridTypes.filter((t) => t !== GridType.OnIndex)) {
      for (const [r, reduction] of REDUCTIONS.entries()) {
        const dtype = DTYPES[(gridTypes.indexOf(gridType) + r + 3) % DTYPES.length] as AttributeArrayConstructor;
        const s = seed++;
        it(`BoundedPointsToGrid, ${GridType[gridType]}, ${reduction} of ${dtype.name}: the same bytes as pointAttributesToGrid`, async () => {
          const coords = clusteredCloud(Math.ceil(sizes.points / 2), s);
          const components = COMPONENTS[gridType] as number;
          const channels = components === 0 || reduction === 'count' ? 1 + (s % 4) : components;
          const values = attributeValues(dtype, (channels * coords.length) / 3, s);
          const options: PointAttributeGridOptions = { gridType, attributes: { values: undefined as never, channels, reduction }, ...(gridType === GridType.Mask ? {} : { background: 4 }) };
          expectSameBytes(await boundedBytes(coords, values, options), hostAttributeGridBytes(coords, values, options));
        });
      }
    }

    // OnIndex with a sidecar channel: the channel (record, slot 0, values) appended on the device after the nodes
    for (const channelType of CHANNEL_TYPES) {
      for (const [r, reduction] of REDUCTIONS.entries()) {
        const dtype = DTYPES[(CHANNEL_TYPES.indexOf(channelType) + r + 5) % DTYPES.length] as AttributeArrayConstructor;
        const s = seed++;
        it(`BoundedPointsToGrid, OnIndex (${GridType[channelType]} channel), ${reduction} of ${dtype.name}: the same bytes as pointAttributesToGrid, valid with its checksum`, async () => {
          const world = s % 2 === 0;
          const coords = clusteredCloud(Math.ceil(sizes.points / 3), s);
          const points: Coords = world ? Float32Array.from(coords, (c) => c * 0.25 - 0.125) : coords;
          const components = COMPONENTS[channelType] as number;
          const channels = reduction === 'count' ? 1 + (s % 4) : components;
          const values = attributeValues(dtype, (channels * coords.length) / 3, s);
          const options: PointAttributeGridOptions = {
            gridType: GridType.OnIndex,
            voxelSize: world ? 0.25 : 1,
            attributes: { values: undefined as never, channels, reduction },
            channel: { name: `bounded_${reduction}`, type: channelType },
            background: s % 3 === 0 ? 0 : 7,
            checksum: s % 2 === 0 ? 'full' : 'partial',
          };
          const bytes = await boundedBytes(points, values, options);
          expectSameBytes(bytes, hostAttributeGridBytes(points, values, options));
          const [grid] = unwrap(validateGrids(bytes, { checksum: true }));
          expect(grid?.gridType).toBe(GridType.OnIndex);
          expect(grid?.blindMetadataCount).toBe(1);
        });
      }
    }

    it('BoundedPointsToGrid OnIndex with a channel: a capacity cut keeps the host builder\'s grid of the kept voxels; no points; requiredBytes', async () => {
      const coords = new Int32Array([0, 0, 0, 1, 0, 0, 0, 0, 0, 5000, 5000, 5000, 5001, 5000, 5000, 1, 0, 0]);
      const values = new Float32Array([1, 2, 3, 4, 5, 6]);
      const channel = { name: 'density', type: GridType.Float } as const;
      const layout = { element: Float32Array, channels: 1, reduction: 'mean' } as const;
      const capacity = { points: 6, uppers: 1, lowers: 1, leaves: 1 };
      const options = { gridType: GridType.OnIndex, channel, background: -1, attributes: layout } as const;
      const required = unwrap(BoundedPointsToGrid.requiredBytes(backend, capacity, options));
      const view = unwrap(ResourceBuffer.allocateAsync(backend, stream, deviceResource, required, { noInit: true }));
      const build = unwrap(BoundedPointsToGrid.create(backend, stream, unwrap(BufferView.of(view.data, required)), capacity, options));
      expect(BoundedPointsToGrid.requiredBytes(backend, capacity, GridType.OnIndex, true).ok).toBe(false);
      // the grid capacity counts the channel of min(points, 512 * leaves) voxels: 288-byte record + 7 f32 padded to 32
      const nodesOnly = unwrap(BoundedPointsToGrid.create(backend, stream, deviceResource, capacity, { gridType: GridType.OnIndex }));
      expect(build.gridCapacityBytes).toBe(nodesOnly.gridCapacityBytes + 288 + 32);
      nodesOnly.dispose();
      const { resource, allocations } = countingResource();
      const capped = BoundedPointsToGrid.create(backend, stream, resource, capacity, { ...options, maxGridBytes: build.gridCapacityBytes - 1 });
      expect(!capped.ok && capped.error.code).toBe(ErrorCode.InvalidArgument);
      expect(allocations()).toBe(0);
      const input = upload<Int32ArrayConstructor>(coords);
      const attr = upload<Float32ArrayConstructor>(values);
      unwrap(build.encode(stream, pointSpan(input, coords.length), undefined, unwrap(BufferView.of(attr.data, values.length, Float32Array))));
      const report = await build.readReport(stream);
      expect(report.overflow.uppers).toBe(true);
      const cut = await download(build.grid.data as MemoryBlock, report.gridSize);
      const keptOptions: PointAttributeGridOptions = { gridType: GridType.OnIndex, channel, background: -1, attributes: { values: undefined as never, channels: 1, reduction: 'mean' } };
      expectSameBytes(cut, hostAttributeGridBytes(new Int32Array([0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0]), new Float32Array([1, 2, 3, 6]), keptOptions));
      unwrap(validateGrids(cut, { checksum: true }));
      // the same block again, no points: slot 0 alone
      unwrap(build.encode(stream, pointSpan(input, coords.length), 0, unwrap(BufferView.of(attr.data, values.length, Float32Array))));
      const empty = await build.readReport(stream);
      expectSameBytes(await download(build.grid.data as MemoryBlock, empty.gridSize), hostAttributeGridBytes(new Int32Array(0), new Float32Array(0), keptOptions));
      build.dispose();
      attr.dispose();
      input.dispose();
      view.dispose();
    });

    it('BoundedPointsToGrid skips NaN points with their attributes: the host builder\'s grid of the other points', async () => {
      const coords = clusteredCloud(800, 31);
      const world = Float32Array.from(coords, (c) => c * 0.1);
      const values = attributeValues(Int16Array, coords.length / 3, 31);
      for (const i of [0, 5, 399, 798]) world[3 * i + (i % 3)] = Number.NaN;
      const keep = [...Array(coords.length / 3).keys()].filter((i) => ![0, 5, 399, 798].includes(i));
      const kept = Float32Array.from(keep.flatMap((i) => [world[3 * i] as number, world[3 * i + 1] as number, world[3 * i + 2] as number]));
      const keptValues = Int16Array.from(keep, (i) => values[i] as number);
      const options: PointAttributeGridOptions = { gridType: GridType.Float, voxelSize: 0.1, attributes: { values: undefined as never, channels: 1, reduction: 'mean' } };
      expectSameBytes(await boundedBytes(world, values, options, kept), hostAttributeGridBytes(kept, keptValues, options));
    });

    it('BoundedPointsToGrid refuses bad attribute layouts before allocating, and bad attribute spans at encode', async () => {
      const layouts: [string, PointAttributeLayout, AttributeGridType][] = [
        ['channels out of range', { element: Float32Array, channels: 0, reduction: 'mean' }, GridType.Float],
        ['wrong dtype', { element: BigInt64Array as never, channels: 1, reduction: 'mean' }, GridType.Float],
        ['channels not matching the grid type', { element: Uint8Array, channels: 3, reduction: 'mean' }, GridType.RGBA8],
        ['an OnIndex build without a channel', { element: Float32Array, channels: 1, reduction: 'mean' }, GridType.OnIndex],
      ];
      const capacity = { points: 16, uppers: 1, lowers: 1, leaves: 4 };
      for (const [name, attributes, gridType] of layouts) {
        const { resource, allocations } = countingResource();
        const made = BoundedPointsToGrid.create(backend, stream, resource, capacity, { gridType: gridType as GridType.Float, attributes });
        expect(made.ok ? 'built' : made.error.code, name).toBe(ErrorCode.InvalidArgument);
        expect(allocations(), name).toBe(0);
      }
      const build = unwrap(BoundedPointsToGrid.create(backend, stream, deviceResource, capacity, { gridType: GridType.Float, attributes: { element: Float32Array, channels: 1, reduction: 'sum' } }));
      const input = upload<Int32ArrayConstructor>(new Int32Array([0, 0, 0, 1, 1, 1, 2, 2, 2]));
      const f64 = upload<Float64ArrayConstructor>(new Float64Array(3));
      const f32 = upload<Float32ArrayConstructor>(new Float32Array(3));
      const points = pointSpan(input, 9);
      const spans: [string, ElementSpan<PointAttributeElement> | undefined][] = [
        ['no span', undefined],
        ['another element type', unwrap(BufferView.of(f64.data, 3, Float64Array))],
        ['too short', unwrap(BufferView.of(f32.data, 2, Float32Array))],
      ];
      for (const [name, span] of spans) {
        const encoded = build.encode(stream, points, undefined, span);
        expect(encoded.ok ? 'encoded' : encoded.error.code, name).toBe(ErrorCode.InvalidArgument);
      }
      expect(build.encode(stream, points, 2, unwrap(BufferView.of(f32.data, 2, Float32Array))).ok).toBe(true);
      await backend.synchronizeStream(stream);
      build.dispose();
      f32.dispose();
      f64.dispose();
      input.dispose();
    });

    it('a voxel of one point, no points, and f32 world points: the host builder\'s bytes', async () => {
      for (const gridType of [GridType.Float, GridType.OnIndex] as const) {
        const extra = gridType === GridType.OnIndex ? { channel: { name: 'v', type: GridType.Float } as const } : {};
        for (const coords of [new Int32Array([1, 2, 3]), new Int32Array(0)]) {
          const values = new Float32Array(coords.length / 3).fill(0.3);
          const options: PointAttributeGridOptions = { gridType, attributes: { values: undefined as never, channels: 1, reduction: 'mean' }, ...extra };
          expectSameBytes(await streamBytes(coords, values, options), hostAttributeGridBytes(coords, values, options));
        }
        const world = Float32Array.from(clusteredCloud(500, 9), (c) => c * 0.1 - 0.3);
        const values = attributeValues(Float32Array, world.length / 3, 9);
        const options: PointAttributeGridOptions = { gridType, voxelSize: 0.1, origin: [0.5, 0, -1], attributes: { values: undefined as never, channels: 1, reduction: 'sum' }, ...extra };
        expectSameBytes(await streamBytes(world, values, options), hostAttributeGridBytes(world, values, options));
      }
    });

    /** The bytes a DLPack export describes, read through an `@hs/tensor` tensor (no copy of the grid made by the export). */
    async function tensorBytes(exported: { managed: Parameters<typeof importDLPack>[0]; memory: Parameters<typeof importDLPack>[1]['memory'] }): Promise<Uint8Array> {
      const tensor = unwrap(importDLPack(exported.managed, { backend, memory: exported.memory }));
      unwrap(tensor.setReadinessStream(stream));
      const out = new Uint8Array(tensor.byteSize);
      await tensor.copyToHost(out, stream);
      tensor.dispose();
      return out;
    }

    it('device-built grids as tensors: channelDLPack and valuesDLPack of streamGridHandleAsync point into the build buffer', async () => {
      const coords = clusteredCloud(600, 41);
      const values = attributeValues(Float32Array, coords.length, 41);
      const options: PointAttributeGridOptions = { gridType: GridType.OnIndex, channel: { name: 'normal', type: GridType.Vec3f }, attributes: { values: undefined as never, channels: 3, reduction: 'mean' } };
      const expected = hostAttributeGridBytes(coords, values, options);
      const [meta] = unwrap(validateGrids(expected));
      const record = gridBlindMetadata(expected, meta!)[0]!;
      const channel = expected.subarray(record.dataOffset, record.dataOffset + record.valueCount * record.valueSize);

      // pointsToGridAsync: the StreamGrid adopted (its buffer freed by the handle's release)
      const input = upload<Int32ArrayConstructor>(coords);
      const attr = upload<Float32ArrayConstructor>(values);
      const span = unwrap(BufferView.of(attr.data, values.length, Float32Array));
      const built = await pointsToGridAsync(backend, stream, deviceResource, pointSpan(input, coords.length), { ...options, attributes: { ...options.attributes, values: span } });
      let released = 0;
      const handle = await streamGridHandleAsync(backend, stream, built, { release: () => (released++, built.buffer.dispose()) });
      expect(handle.memoryKind).toBe(MemoryKind.CudaDevice);
      expect(handle.grids[0]).toEqual(meta);
      const exported = unwrap(channelDLPack(handle, 'normal'));
      const block = built.buffer.data as MemoryBlock;
      expect(exported.memory).toBe(block.memory);
      expect(exported.managed.dlTensor.device.deviceType).toBe(2);
      expect(exported.managed.dlTensor.shape).toEqual([meta!.valueCount, 3]);
      expect(exported.managed.dlTensor.byteOffset).toBe(block.byteOffset + record.dataOffset);
      handle.dispose();
      expect(released).toBe(0); // the export keeps the buffer
      expectSameBytes(await tensorBytes(exported), channel);
      expect(released).toBe(1);

      // a bounded build: its grid region cut to the report's gridSize
      const need = unwrap(countGridNodes(Float64Array.from(coords)));
      const bounded = unwrap(
        BoundedPointsToGrid.create(backend, stream, deviceResource, { points: coords.length / 3, uppers: need.uppers, lowers: need.lowers, leaves: need.leaves }, { ...options, attributes: { element: Float32Array, channels: 3, reduction: 'mean' } }),
      );
      unwrap(bounded.encode(stream, pointSpan(input, coords.length), undefined, span));
      const report = await bounded.readReport(stream);
      const boundedHandle = await streamGridHandleAsync(backend, stream, unwrap(BufferView.of(bounded.grid.data, report.gridSize)));
      const fromBounded = unwrap(channelDLPack(boundedHandle, 0));
      expect(fromBounded.managed.dlTensor.byteOffset).toBe((bounded.grid.data as MemoryBlock).byteOffset + record.dataOffset);
      expectSameBytes(await tensorBytes(fromBounded), channel);
      boundedHandle.dispose();

      // a value grid's leaves
      const floatOptions: PointAttributeGridOptions = { gridType: GridType.Float, background: -3, attributes: { values: undefined as never, channels: 1, reduction: 'max' } };
      const oneChannel = upload<Float32ArrayConstructor>(values.subarray(0, coords.length / 3));
      const floats = await pointsToGridAsync(backend, stream, deviceResource, pointSpan(input, coords.length), {
        ...floatOptions,
        attributes: { ...floatOptions.attributes, values: unwrap(BufferView.of(oneChannel.data, coords.length / 3, Float32Array)) },
      });
      const floatHandle = await streamGridHandleAsync(backend, stream, floats);
      const leaves = unwrap(valuesDLPack(floatHandle));
      const reference = unwrap(GridHandleOf(hostAttributeGridBytes(coords, values.subarray(0, coords.length / 3), floatOptions)));
      const referenceLeaves = unwrap(valuesDLPack(reference));
      expect(leaves.managed.dlTensor.shape).toEqual(referenceLeaves.managed.dlTensor.shape);
      expect(leaves.managed.dlTensor.strides).toEqual(referenceLeaves.managed.dlTensor.strides);
      expectSameBytes(await tensorBytes(leaves), await tensorBytes(referenceLeaves));
      reference.dispose();
      floatHandle.dispose();
      floats.buffer.dispose();
      await expect(streamGridHandleAsync(backend, stream, { buffer: floats.buffer, gridSize: 0 } as never)).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
      bounded.dispose();
      oneChannel.dispose();
      attr.dispose();
      input.dispose();
    });

    /** A host handle of grid bytes (the reference for a tensor export). */
    function GridHandleOf(bytes: Uint8Array) {
      const buffer = unwrap(ResourceBuffer.allocate(backend, new HostResource(backend), bytes.length));
      unwrap(buffer.hostView()).set(bytes);
      return GridHandle.fromHostBytes(backend, buffer);
    }

    /** `deviceResource` with its allocations counted (sync and async). */
    function countingResource(): { resource: DeviceResource; allocations: () => number } {
      const resource = new DeviceResource(backend, device);
      let count = 0;
      const allocate = resource.allocate.bind(resource);
      const allocateAsync = resource.allocateAsync.bind(resource);
      resource.allocate = (...args: Parameters<DeviceResource['allocate']>) => (count++, allocate(...args));
      resource.allocateAsync = (...args: Parameters<DeviceResource['allocateAsync']>) => (count++, allocateAsync(...args));
      return { resource, allocations: () => count };
    }

    // NaN attribute values (quiet and signalling, payloads, both signs): every build stores the one canonical quiet NaN
    const nanCases: readonly [AttributeGridType, AttributeChannelType | undefined][] = [
      [GridType.Float, undefined],
      [GridType.Double, undefined],
      [GridType.Vec3f, undefined],
      [GridType.OnIndex, GridType.Float],
      [GridType.OnIndex, GridType.Double],
    ];
    for (const [gridType, channelType] of nanCases) {
      for (const reduction of ['sum', 'mean', 'min', 'max', 'last'] as const) {
        const s = seed++;
        const dtype = s % 2 === 0 ? Float32Array : Float64Array;
        const title = `${GridType[gridType]}${channelType === undefined ? '' : ` (${GridType[channelType]} channel)`}, ${reduction} of ${dtype.name} with NaNs`;
        it(`${title}: async and bounded builds hold the host builder's bytes, every NaN stored canonical`, async () => {
          const coords = clusteredCloud(sizes.points, s);
          const channels = COMPONENTS[channelType ?? gridType] as number;
          const values = withNaNs(dtype, (channels * coords.length) / 3, s);
          const options: PointAttributeGridOptions = {
            gridType,
            attributes: { values: undefined as never, channels, reduction },
            background: 2,
            ...(channelType === undefined ? {} : { channel: { name: `nan_${reduction}`, type: channelType } }),
          };
          const expected = hostAttributeGridBytes(coords, values, options);
          const nans = storedNaNs(expected);
          expect(nans.other).toBe(0);
          expect(nans.canonical).toBeGreaterThan(0);
          expectSameBytes(await streamBytes(coords, values, options), expected);
          expectSameBytes(await boundedBytes(coords, values, options), expected);
        });
      }
    }

    it('bad attributes are refused with InvalidArgument before anything is allocated', async () => {
      const coords = new Int32Array([0, 0, 0, 1, 1, 1, 9, 9, 9]);
      const input = upload<Int32ArrayConstructor>(coords);
      const f32 = upload<Float32ArrayConstructor>(new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]));
      const bytes = upload<Uint8ArrayConstructor>(new Uint8Array(64));
      const span = (length: number) => unwrap(BufferView.of(f32.data, length, Float32Array));
      const misaligned = unwrap(BufferView.of({ ...(bytes.data as MemoryBlock), byteOffset: (bytes.data as MemoryBlock).byteOffset + 2, byteLength: 12 }, 3, Float32Array));
      const cases: [string, PointAttributeGridOptions][] = [
        ['wrong length', { gridType: GridType.Float, attributes: { values: span(4), channels: 1, reduction: 'mean' } }],
        ['wrong dtype', { gridType: GridType.Float, attributes: { values: { ...span(3), element: BigInt64Array } as never, channels: 1, reduction: 'mean' } }],
        ['channels not matching the grid type', { gridType: GridType.Vec3f, attributes: { values: span(6), channels: 2, reduction: 'mean' } }],
        ['channels out of range', { gridType: GridType.Float, attributes: { values: span(3), channels: 5, reduction: 'count' } }],
        ['unknown reduction', { gridType: GridType.Float, attributes: { values: span(3), channels: 1, reduction: 'median' as never } }],
        ['misaligned span', { gridType: GridType.Float, attributes: { values: misaligned, channels: 1, reduction: 'max' } }],
        ['OnIndex without a channel', { gridType: GridType.OnIndex, attributes: { values: span(3), channels: 1, reduction: 'mean' } }],
        ['a grid type without values', { gridType: GridType.Int64 as never, attributes: { values: span(3), channels: 1, reduction: 'mean' } }],
      ];
      await backend.synchronizeStream(stream);
      for (const [name, options] of cases) {
        const { resource, allocations } = countingResource();
        const error = await pointsToGridAsync(backend, stream, resource, pointSpan(input, coords.length), options).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error, name).toBeInstanceOf(HsError);
        expect((error as HsError).code, name).toBe(ErrorCode.InvalidArgument);
        expect(allocations(), name).toBe(0);
      }
      bytes.dispose();
      f32.dispose();
      input.dispose();
    });
  });
}
