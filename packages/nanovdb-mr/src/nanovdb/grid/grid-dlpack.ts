/**
 * Grid bytes as tensors and tensors as grids (issue 24 item 2), through DLPack: a channel's values or a valued grid's
 * leaf values are described as a DLPack managed tensor that aliases the grid's memory (host or device, no copy), the
 * shape `@hs/tensor`'s `importDLPack` takes; and a u8 tensor's bytes are wrapped as a grid after validation. This
 * package sits below `@hs/tensor`, so it speaks DLPack's fields (structurally `@hs/tensor`'s `DLPackManagedTensor`)
 * and takes any tensor-shaped object, never importing the Tensor class. A grid built on the device (`pointsToGridAsync`,
 * `BoundedPointsToGrid`) becomes a handle through `streamGridHandleAsync`, whose exports alias the build's buffer. Spec: "Foreign tensors imported through
 * DLPack" (holoscan-5.0-tensors-in-depth); "GridHandle over BufferView for externally owned blobs" (nanovdb-memory-resources).
 */
import { ErrorCode, HsError, MemoryKind, err, ok, type Backend, type DeviceMemory, type Result, type Stream } from '@hs/streams';
import { BufferView } from '../../buffer-view.js';
import { GridHandle, type GridHandleOptions, type GridStorage } from './grid-handle.js';
import { GridType, LeafKind, valueLayoutOf } from './grid-layout.js';
import { gridChannel } from '../build/grid-channels.js';
import type { MemoryBlock } from '../../resource.js';
import type { StreamGrid } from '../build/points-to-grid-async.js';

/** DLPack `DLDataType`: type code (0 int, 1 uint, 2 float), bits per lane, lanes. */
export interface GridDLDataType {
  /** DLPack `DLDataTypeCode`: 0 signed integer, 1 unsigned integer, 2 IEEE float. */
  readonly code: number;
  /** Bits per lane (8, 16, 32 or 64). */
  readonly bits: number;
  /** Lanes per element; 1 (vectors are a trailing dimension). */
  readonly lanes: number;
}

/**
 * A DLPack `DLManagedTensorVersioned` in JavaScript terms, field for field `@hs/tensor`'s `DLPackManagedTensor`
 * (pass it to `importDLPack`): version 1.1, the read-only flag, the tensor fields and the deleter.
 */
export interface GridDLPackTensor {
  /** DLPack version: 1.1. */
  readonly version: {
    /** Major version, 1. */
    readonly major: number;
    /** Minor version, 1. */
    readonly minor: number;
  };
  /** `1`: read-only (DLPack's `DLPACK_FLAG_BITMASK_READ_ONLY`). */
  readonly flags: number;
  /** The tensor fields (DLPack `dl_tensor`). */
  readonly dlTensor: {
    /** Address of byte 0 of the allocation holding the grid. */
    readonly data: bigint;
    /** DLPack device: type 1 CPU, 2 CUDA, 3 CUDA host, 13 CUDA managed; its ordinal. */
    readonly device: {
      /** DLPack `DLDeviceType`: 1 CPU, 2 CUDA, 3 CUDA host, 13 CUDA managed. */
      readonly deviceType: number;
      /** Device ordinal (0 for host memory). */
      readonly deviceId: number;
    };
    /** Number of dimensions, `shape.length`. */
    readonly ndim: number;
    /** Element type. */
    readonly dtype: GridDLDataType;
    /** Elements per dimension. */
    readonly shape: readonly number[];
    /** Elements between neighbours per dimension (always explicit). */
    readonly strides: readonly number[];
    /** Bytes from `data` to the first element. */
    readonly byteOffset: number;
  };
  /** Releases the handle retention this export holds (idempotent); the consumer calls it once when done. */
  readonly deleter: () => void;
}

/** A DLPack export of grid bytes and the allocation it lies in (what `importDLPack` needs besides the backend). */
export interface GridDLPackExport {
  /** The DLPack managed tensor; call its `deleter` once when done (an `importDLPack` tensor does). */
  readonly managed: GridDLPackTensor;
  /** The backend allocation holding the grid (`importDLPack(managed, { backend, memory })`). */
  readonly memory: DeviceMemory;
}

/** Anything tensor-shaped whose bytes may hold grids: an `@hs/tensor` Tensor fits. */
export interface GridTensorSource {
  /** The allocation the bytes lie in. */
  readonly memory: DeviceMemory;
  /** Bytes from the start of `memory` to the first element. */
  readonly byteOffset: number;
  /** Bytes the tensor spans. */
  readonly byteSize: number;
  /** Element type; must be uint8 (code 1, 8 bits, 1 lane). */
  readonly dtype: GridDLDataType;
  /** Elements per dimension. */
  readonly shape: readonly number[];
  /** Elements between neighbours per dimension; packed row-major required. */
  readonly strides: readonly number[];
}

const DEVICE_TYPE: Record<MemoryKind, number> = {
  [MemoryKind.Host]: 1,
  [MemoryKind.CudaDevice]: 2,
  [MemoryKind.PinnedHost]: 3,
  [MemoryKind.CudaManaged]: 13,
};

/** DLPack element types of the grid and blind-data value types: [code, bits, components]. */
const ELEMENTS: ReadonlyMap<number, readonly [number, number, number]> = new Map([
  [GridType.Float, [2, 32, 1]],
  [GridType.Double, [2, 64, 1]],
  [GridType.Half, [2, 16, 1]],
  [GridType.Int16, [0, 16, 1]],
  [GridType.Int32, [0, 32, 1]],
  [GridType.Int64, [0, 64, 1]],
  [GridType.UInt32, [1, 32, 1]],
  [GridType.UInt8, [1, 8, 1]],
  [GridType.Vec3f, [2, 32, 3]],
  [GridType.Vec3d, [2, 64, 3]],
  [GridType.Vec4f, [2, 32, 4]],
  [GridType.Vec4d, [2, 64, 4]],
  [GridType.RGBA8, [1, 8, 4]],
  [GridType.Vec3u8, [1, 8, 3]],
  [GridType.Vec3u16, [1, 16, 3]],
]);

function exportOf(handle: GridHandle, byteOffset: number, dtype: GridDLDataType, shape: readonly number[], strides: readonly number[]): Result<GridDLPackExport> {
  const block = handle.storage.data as MemoryBlock;
  const retained = handle.retain();
  if (!retained.ok) return retained;
  const memory = block.memory;
  return ok({
    memory,
    managed: {
      version: { major: 1, minor: 1 },
      flags: 1,
      dlTensor: {
        data: memory.address,
        device: { deviceType: DEVICE_TYPE[memory.kind], deviceId: memory.device.id },
        ndim: shape.length,
        dtype,
        shape: Object.freeze(shape.slice()),
        strides: Object.freeze(strides.slice()),
        byteOffset: block.byteOffset + byteOffset,
      },
      deleter: retained.value,
    },
  });
}

/**
 * A sidecar channel (by name or record position, see `gridChannel`) of grid `grid` of `handle` as a read-only DLPack
 * tensor over the grid's own bytes, no copy, in whatever memory the handle holds (host, pinned, managed or device):
 * shape `[valueCount]` for scalar types, `[valueCount, components]` for vectors (Vec3f: float32 `[n, 3]`, RGBA8: uint8
 * `[n, 4]`, Vec3u8/Vec3u16: uint8/uint16 `[n, 3]`), row `i` the value of index `i` (0: background); a record of another
 * type is uint8 `[valueCount, valueSize]`. Lifetime: the export retains the handle (`retain()`); the handle's bytes
 * outlive `dispose()` until `managed.deleter` runs, which `importDLPack`'s tensor calls when it is done. Order reads
 * after whatever wrote the grid (DLPack carries no events; set the tensor's readiness stream).
 * Errors: NotFound for an unknown channel; InvalidArgument for a grid out of range; InvalidState for a disposed handle.
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { importDLPack } from '@hs/tensor';
 * import { GridType, HostResource, attachChannels, channelDLPack, channelValues, pointsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const coords = new Int32Array([0, 0, 0, 1, 2, 3, 9, 9, 9]);
 * const topology = unwrap(pointsToGrid(backend, host, { space: 'index', coords }, { gridType: GridType.OnIndex }));
 * const density = unwrap(channelValues(topology, { coords, values: [0.5, 1, 2] }, GridType.Float));
 * const grid = unwrap(attachChannels(backend, host, topology, [{ name: 'density', type: GridType.Float, values: density }]));
 * topology.dispose();
 * const { managed, memory } = unwrap(channelDLPack(grid, 'density'));
 * const tensor = unwrap(importDLPack(managed, { backend, memory })); // float32 [valueCount], aliasing the grid's bytes
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * unwrap(tensor.setReadinessStream(stream)); // DLPack carries no events: order reads after the grid's writer
 * await backend.synchronizeStream(stream);
 * const bytes = unwrap(tensor.hostView());
 * console.log(`${tensor.dtype} [${tensor.shape.join(', ')}]: ${Array.from(new Float32Array(bytes.slice().buffer))}`); // the background, then one value per voxel
 * grid.dispose(); // the bytes stay alive until the tensor is done with them
 * tensor.dispose();
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export function channelDLPack(handle: GridHandle<GridStorage>, channel: string | number, options: { readonly grid?: number } = {}): Result<GridDLPackExport> {
  if (!(handle instanceof GridHandle)) throw new HsError(ErrorCode.InvalidArgument, 'channelDLPack: handle must be a GridHandle');
  const n = options.grid ?? 0;
  const record = gridChannel(handle, channel, n);
  if (!record.ok) return record;
  const r = record.value;
  const el = ELEMENTS.get(r.dataType);
  const [code, bits, components] = el !== undefined && (el[1] / 8) * el[2] === r.valueSize ? el : [1, 8, r.valueSize];
  const shape = components === 1 ? [r.valueCount] : [r.valueCount, components];
  const strides = components === 1 ? [1] : [components, 1];
  return exportOf(handle, (handle.grid(n)?.byteOffset ?? 0) + r.dataOffset, { code, bits, lanes: 1 }, shape, strides);
}

/**
 * The leaf values of a valued grid (Float, Double, Half, Int16/32/64, UInt32, UInt8, Vec3f/d, Vec4f/d, RGBA8) as a
 * read-only strided DLPack tensor over the grid's bytes, no copy, any memory: shape `[leafCount, 512]` (scalars) or
 * `[leafCount, 512, components]`, element `[l, n]` voxel `n = (x&7)<<6 | (y&7)<<3 | (z&7)` of leaf `l` in buffer
 * order (inactive voxels hold what the grid stores there, usually the background); the leaf stride is the leaf's size
 * in elements. Tiles and the root are not included. Lifetime as `channelDLPack`.
 * Errors: InvalidArgument for another grid type (index, Mask, Boolean, quantized, PointIndex) or a grid out of range;
 * InvalidState for a disposed handle.
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { importDLPack } from '@hs/tensor';
 * import { GridType, HostResource, valuesDLPack, voxelsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const coords = new Int32Array([0, 0, 0, 1, 0, 0, 64, 0, 0]);
 * const grid = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords, values: new Float32Array([1, 2, 3]) }, { gridType: GridType.Float }));
 * const { managed, memory } = unwrap(valuesDLPack(grid)); // [leafCount, 512]: every leaf's voxels, no copy
 * const values = unwrap(importDLPack(managed, { backend, memory }));
 * console.log(`${values.dtype} [${values.shape.join(', ')}] over ${grid.grids[0]?.nodeCount[0]} leaves`);
 * values.dispose();
 * grid.dispose();
 * ```
 */
export function valuesDLPack(handle: GridHandle<GridStorage>, options: { readonly grid?: number } = {}): Result<GridDLPackExport> {
  if (!(handle instanceof GridHandle)) throw new HsError(ErrorCode.InvalidArgument, 'valuesDLPack: handle must be a GridHandle');
  const n = options.grid ?? 0;
  const metadata = handle.grid(n);
  if (metadata === undefined) return err(ErrorCode.InvalidArgument, `valuesDLPack: grid ${String(n)} does not exist; the handle holds ${handle.gridCount}`);
  const layout = valueLayoutOf(metadata.gridType);
  const el = ELEMENTS.get(metadata.gridType);
  if (layout === undefined || layout.leafKind !== LeafKind.Values || el === undefined) {
    return err(ErrorCode.InvalidArgument, `valuesDLPack: a ${GridType[metadata.gridType] ?? String(metadata.gridType)} grid has no plain leaf values; use channelDLPack for index grids`);
  }
  const [code, bits, components] = el;
  const element = bits / 8;
  const leaves = metadata.nodeCount[0];
  const shape = components === 1 ? [leaves, 512] : [leaves, 512, components];
  const strides = components === 1 ? [layout.leafSize / element, 1] : [layout.leafSize / element, components, 1];
  const first = leaves === 0 ? 0 : handle.nodeOffset(0, n) + layout.leafValues;
  return exportOf(handle, metadata.byteOffset + first, { code, bits, lanes: 1 }, shape, strides);
}

/** The tensor's bytes as a block, or the reason they cannot hold grids. */
function tensorBlock(who: string, tensor: GridTensorSource): Result<MemoryBlock> {
  if (tensor === null || typeof tensor !== 'object' || tensor.memory === undefined) throw new HsError(ErrorCode.InvalidArgument, `${who}: expected a tensor (memory, byteOffset, byteSize, dtype, shape, strides)`);
  const { dtype, shape, strides, byteSize, byteOffset, memory } = tensor;
  if (dtype?.code !== 1 || dtype.bits !== 8 || dtype.lanes !== 1) {
    return err(ErrorCode.InvalidArgument, `${who}: grid bytes come as a uint8 tensor; got dtype code ${String(dtype?.code)}, ${String(dtype?.bits)} bits, ${String(dtype?.lanes)} lanes`);
  }
  let expect = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    if ((shape[d] as number) !== 1 && strides[d] !== expect) return err(ErrorCode.InvalidArgument, `${who}: the tensor is strided (shape [${shape.join(', ')}], strides [${strides.join(', ')}]); grid bytes must be packed`);
    expect *= shape[d] as number;
  }
  if (expect !== byteSize || byteSize === 0) return err(ErrorCode.InvalidArgument, `${who}: the tensor spans ${byteSize} bytes for ${expect} elements; a grid needs at least 736 packed bytes`);
  if (memory.freed) return err(ErrorCode.InvalidState, `${who}: the tensor's memory was freed`);
  return ok({ memory, byteOffset, byteLength: byteSize, label: `grid in ${memory.label}` });
}

/**
 * Wraps the bytes of a uint8 tensor (an `@hs/tensor` Tensor, or anything of its shape) as a `GridHandle` over a
 * `BufferView`, no copy, after validating every grid in it (`validateGrids`). Host-accessible memory (host, pinned,
 * managed); for device memory use `gridFromTensorAsync`. The tensor must stay alive (and unwritten) while the handle is
 * used: the handle never frees it, and `options.release` (for example the tensor's `dispose`) runs at the handle's
 * `dispose()`. Order it after the tensor's producer first (`await tensor.synchronizeForHost()`).
 * Errors: InvalidArgument for a dtype other than uint8, strided or empty bytes, or invalid grid bytes (naming the first
 * bad field, as `validateGrids`); NotSupported for device memory or grid types hs does not read; InvalidState for freed memory.
 * @throws HsError InvalidArgument when `tensor` is not tensor-shaped.
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { DType, Tensor } from '@hs/tensor';
 * import { GridType, HostResource, ResourceBuffer, gridFromTensor, pointsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const built = unwrap(pointsToGrid(backend, host, { space: 'index', coords: new Int32Array([3, 4, 5]) }, { gridType: GridType.Float }));
 * // a uint8 tensor [gridBytes] in host memory that holds a grid (e.g. one received from a pipeline stage)
 * const buffer = unwrap(ResourceBuffer.allocate(backend, host, built.sizeBytes));
 * unwrap(buffer.hostView()).set(unwrap(built.hostBytes()));
 * const block = buffer.data;
 * if (block === null) throw new Error('empty buffer');
 * const tensor = unwrap(Tensor.import({ backend, memory: block.memory, byteOffset: block.byteOffset, shape: [buffer.size], dtype: DType.uint8 }));
 * const grid = unwrap(gridFromTensor(backend, tensor, { release: () => tensor.dispose() })); // validated, zero copy
 * console.log(`voxel (3,4,5) active: ${unwrap(grid.accessor()).isActive(3, 4, 5)}`);
 * grid.dispose(); // runs release: the tensor is disposed
 * buffer.dispose();
 * built.dispose();
 * ```
 */
export function gridFromTensor(backend: Backend, tensor: GridTensorSource, options: GridHandleOptions = {}): Result<GridHandle<BufferView<Uint8ArrayConstructor>>> {
  const block = tensorBlock('gridFromTensor', tensor);
  if (!block.ok) return block;
  const view = BufferView.of(block.value, block.value.byteLength);
  if (!view.ok) return view;
  if (block.value.memory.kind === MemoryKind.CudaDevice) {
    return err(ErrorCode.NotSupported, 'gridFromTensor: the tensor is in device memory, which the host cannot validate; use gridFromTensorAsync (one copy to the host to validate)');
  }
  return GridHandle.fromHostBytes(backend, view.value, options);
}

/**
 * `gridFromTensor` for any memory, device memory included: copies the bytes to the host once on `stream` (after
 * `stream` is ordered after the tensor's producer), validates that copy, and wraps the tensor's own bytes (no copy
 * kept). Resolves with the handle; rejects with an HsError: InvalidArgument as `gridFromTensor` (bad dtype, layout
 * or grid bytes, naming the field), the backend's copy and wait errors.
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { DType, Tensor } from '@hs/tensor';
 * import { DeviceResource, GridType, HostResource, gridFromTensorAsync, pointsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * const built = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords: new Int32Array([0, 0, 0]) }, { gridType: GridType.Float }));
 * const onDevice = unwrap(built.copyTo(stream, new DeviceResource(backend, Device.cuda(0))));
 * // deviceTensor: uint8 [gridBytes] on cuda:0, e.g. the output of a kernel
 * const block = onDevice.storage.data;
 * if (block === null) throw new Error('empty grid');
 * const deviceTensor = unwrap(Tensor.import({ backend, memory: block.memory, byteOffset: block.byteOffset, shape: [onDevice.sizeBytes], dtype: DType.uint8 }));
 * const grid = await gridFromTensorAsync(backend, stream, deviceTensor); // one copy to the host to validate, then wraps the device bytes
 * console.log(`${grid.memoryKind} grid, ${grid.grid()?.voxelCount} voxel`);
 * grid.dispose();
 * deviceTensor.dispose();
 * onDevice.dispose();
 * built.dispose();
 * await backend.synchronizeStream(stream);
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export async function gridFromTensorAsync(backend: Backend, stream: Stream, tensor: GridTensorSource, options: GridHandleOptions = {}): Promise<GridHandle<BufferView<Uint8ArrayConstructor>>> {
  const block = tensorBlock('gridFromTensorAsync', tensor);
  if (!block.ok) throw block.error;
  const view = BufferView.of(block.value, block.value.byteLength);
  if (!view.ok) throw view.error;
  const host = new Uint8Array(block.value.byteLength);
  const copied = backend.copyToHostAsync(stream, host, block.value);
  if (!copied.ok) throw copied.error;
  await backend.synchronizeStream(stream);
  const handle = GridHandle.fromValidatedCopy(backend, view.value, host, options);
  if (!handle.ok) throw handle.error;
  return handle.value;
}

/**
 * A `GridHandle` over a grid built in stream order, wherever its bytes are (device memory included): a `StreamGrid`
 * from `pointsToGridAsync`, or a byte view of exactly the grid (a bounded build's `grid` cut to its report's
 * `gridSize`: `BufferView.of(build.grid.data, report.gridSize)`). Enqueues one copy of the grid to the host on
 * `stream` (after the build's work, which it follows in stream order), validates that copy (`validateGrids`; the
 * checksum too unless `options.checksum` is false) and wraps the grid's own bytes, no copy kept: `channelDLPack` and
 * `valuesDLPack` of the handle are tensors pointing into the build's buffer (DLPack device type 2 for device memory).
 * The handle does not own the bytes: keep the `StreamGrid`'s buffer (or the bounded build, not re-encoded) alive
 * while the handle and its exports are used; `options.release` (say `() => grid.buffer.dispose()`) runs when the
 * handle and its last export let go, which hands the buffer over. Rejects with an HsError: InvalidArgument for a
 * source that is neither, or invalid grid bytes (naming the field); the backend's copy and wait errors.
 * @example
 * ```ts
 * import { BufferView, DeviceResource, GridType, ResourceBuffer, channelDLPack, pointsToGridAsync, streamGridHandleAsync, type MemoryBlock } from '@hs/nanovdb-mr';
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const device = Device.cuda(0);
 * const stream = unwrap(backend.createStream(device));
 * const resource = new DeviceResource(backend, device);
 * const host = new Int32Array([0, 0, 0, 0, 0, 0, 9, 0, 0]);
 * const coords = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, host.length, { noInit: true, element: Int32Array }));
 * unwrap(backend.copyFromHostAsync(stream, coords.data as MemoryBlock, new Uint8Array(host.buffer)));
 * const points = { space: 'index', coords: unwrap(BufferView.of(coords.data, host.length, Int32Array)) } as const;
 * const ones = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, 3, { noInit: true, element: Float32Array })); // 'count' reads no values
 * const built = await pointsToGridAsync(backend, stream, resource, points, { gridType: GridType.OnIndex, channel: { name: 'count', type: GridType.Int32 }, attributes: { values: ones, channels: 1, reduction: 'count' } });
 * const grid = await streamGridHandleAsync(backend, stream, built, { release: () => built.buffer.dispose() });
 * const { managed } = unwrap(channelDLPack(grid, 'count')); // int32 [voxels + 1], pointing into the build's device buffer
 * console.log(`count channel: shape [${managed.dlTensor.shape}], DLPack device type ${managed.dlTensor.device.deviceType}`);
 * managed.deleter?.();
 * grid.dispose();
 * coords.dispose();
 * ones.dispose();
 * ```
 */
export async function streamGridHandleAsync(
  backend: Backend,
  stream: Stream,
  grid: StreamGrid | BufferView<Uint8ArrayConstructor>,
  options: GridHandleOptions = {},
): Promise<GridHandle<BufferView<Uint8ArrayConstructor>>> {
  const who = 'streamGridHandleAsync';
  let view: BufferView<Uint8ArrayConstructor>;
  if (grid instanceof BufferView) {
    if (grid.element !== Uint8Array || grid.data === null) throw new HsError(ErrorCode.InvalidArgument, `${who}: the view must hold the grid's bytes (a non-empty byte view)`);
    view = grid;
  } else {
    const block = (grid as StreamGrid | null)?.buffer?.data;
    if (block === undefined || block === null || !Number.isSafeInteger(grid.gridSize) || grid.gridSize < 1 || grid.gridSize > block.byteLength) {
      throw new HsError(ErrorCode.InvalidArgument, `${who}: expected a StreamGrid (buffer and gridSize) or a byte BufferView of the grid`);
    }
    const made = BufferView.of(block, grid.gridSize);
    if (!made.ok) throw made.error;
    view = made.value;
  }
  const block = view.data as MemoryBlock;
  const host = new Uint8Array(view.sizeBytes);
  const copied = backend.copyToHostAsync(stream, host, { ...block, byteLength: view.sizeBytes });
  if (!copied.ok) throw copied.error;
  await backend.synchronizeStream(stream);
  const handle = GridHandle.fromValidatedCopy(backend, view, host, options);
  if (!handle.ok) throw handle.error;
  return handle.value;
}

/**
 * `gridFromTensor` for a DLPack managed tensor (DLPack's fields, as `@hs/tensor`'s `exportDLPack` gives them) in
 * `memory`: the managed tensor's deleter runs at the handle's `dispose()`. Errors: as `gridFromTensor`; InvalidArgument
 * when the data does not lie in `memory`.
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { DType, Tensor, exportDLPack } from '@hs/tensor';
 * import { GridType, HostResource, ResourceBuffer, gridFromDLPack, pointsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const built = unwrap(pointsToGrid(backend, host, { space: 'index', coords: new Int32Array([0, 0, 0]) }, { gridType: GridType.Float }));
 * const buffer = unwrap(ResourceBuffer.allocate(backend, host, built.sizeBytes));
 * unwrap(buffer.hostView()).set(unwrap(built.hostBytes()));
 * const block = buffer.data;
 * if (block === null) throw new Error('empty buffer');
 * const tensor = unwrap(Tensor.import({ backend, memory: block.memory, byteOffset: block.byteOffset, shape: [buffer.size], dtype: DType.uint8 }));
 * // a producer hands over a DLPack managed tensor of the grid's bytes
 * const managed = unwrap(exportDLPack(tensor, { releaseStream: null }));
 * const grid = unwrap(gridFromDLPack(backend, { ...managed, deleter: () => (console.log('deleter ran'), managed.deleter?.()) }, tensor.memory));
 * console.log(`${grid.gridCount} grid, ${grid.grid()?.voxelCount} voxel, zero copy: ${grid.storage.data?.memory === tensor.memory}`);
 * grid.dispose(); // runs the managed tensor's deleter
 * tensor.dispose();
 * buffer.dispose();
 * built.dispose();
 * ```
 */
export function gridFromDLPack(
  backend: Backend,
  managed: { readonly dlTensor: { readonly data: bigint; readonly dtype: GridDLDataType; readonly shape: readonly number[]; readonly strides: readonly number[] | null; readonly byteOffset: number }; readonly deleter: (() => void) | null },
  memory: DeviceMemory,
): Result<GridHandle<BufferView<Uint8ArrayConstructor>>> {
  const t = managed?.dlTensor;
  if (t === undefined) throw new HsError(ErrorCode.InvalidArgument, 'gridFromDLPack: expected a DLPack managed tensor');
  const start = t.data - memory.address + BigInt(t.byteOffset);
  const bytes = t.shape.reduce((a, b) => a * b, 1);
  if (start < 0n || start + BigInt(bytes) > BigInt(memory.byteSize)) return err(ErrorCode.InvalidArgument, `gridFromDLPack: the data does not lie in memory "${memory.label}"`);
  let strides = t.strides;
  if (strides === null) {
    const s: number[] = [];
    let e = 1;
    for (let d = t.shape.length - 1; d >= 0; d--) {
      s[d] = e;
      e *= t.shape[d] as number;
    }
    strides = s;
  }
  return gridFromTensor(backend, { memory, byteOffset: Number(start), byteSize: bytes, dtype: t.dtype, shape: t.shape, strides }, managed.deleter === null ? {} : { release: managed.deleter });
}
