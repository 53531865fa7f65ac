import { Device, ErrorCode, MemoryKind, err, leakTracker, ok, type Backend, type Result, type Stream } from '@hs/streams';
import { ResourceBuffer } from '../../resource-buffer.js';
import type { BufferView } from '../../buffer-view.js';
import { defaultResource } from '../../default-resource.js';
import { currentDeviceResource } from '../../current-device-resource.js';
import { isAsyncResource, type MemoryBlock, type SyncResource } from '../../resource.js';
import { GridAccessor } from './grid-accessor.js';
import { builtGridMetadata } from './grid-metadata.js';
import { validateGrids, type GridMetadata, type ValidateOptions } from './grid-validation.js';
import { gridBlindMetadata, type BlindMetadata } from './grid-blind-data.js';

/** What a `GridHandle` holds its bytes in: an owning `ResourceBuffer` or a non-owning `BufferView` (external memory). */
export type GridStorage = ResourceBuffer<SyncResource, Uint8ArrayConstructor> | BufferView<Uint8ArrayConstructor>;

/** Options of `GridHandle.fromHostBytes`: validation options and a release hook for externally owned bytes. */
export interface GridHandleOptions extends ValidateOptions {
  /**
   * Called once when the handle lets go of its bytes: at `dispose()`, or, while `retain()`ed views (channel tensors,
   * DLPack exports) are alive, when the last of them is released. How a handle over a foreign allocation (a DLPack
   * import, `gridFromTensor`) returns it to its owner.
   */
  readonly release?: () => void;
}

/**
 * Handles collected without `dispose()` are reported; an owned buffer frees itself through its own leak report
 * (`ResourceBuffer`), a view's release hook does not run.
 */
const handleLeaks = leakTracker('GridHandle');

/** Set by `GridHandle`'s static block: the handle over a host builder's own grid (see `handleOfBuiltGrid`). */
let adoptBuilt: (backend: Backend, storage: ResourceBuffer<SyncResource, Uint8ArrayConstructor>, bytes: Uint8Array) => GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>;

/**
 * A single-space handle over one buffer of NanoVDB grids: the bytes live in one memory space (host,
 * pinned, managed or device), held by a `ResourceBuffer` (owned, freed by `dispose`) or a `BufferView`
 * (externally owned memory, wrapped with zero copies, never freed here). Cross-space moves are explicit
 * with `copyTo`, which reuses the validated metadata and runs no kernel.
 * Spec: "Single-space GridHandle (surface)", "GridHandle over BufferView for externally owned blobs",
 * "copyTo adopts validated metadata so it runs no kernel" (nanovdb-memory-resources).
 *
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { DeviceResource, GridHandle, GridType, HostResource, ResourceBuffer, pointsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const built = unwrap(pointsToGrid(backend, host, { space: 'index', coords: new Int32Array([1, 2, 3, 40, 0, -7]) }, { gridType: GridType.Float, name: 'density' }));
 * const received = unwrap(built.hostBytes()).slice(); // grid bytes from a file, a socket, another process
 * built.dispose();
 * const buffer = unwrap(ResourceBuffer.allocate(backend, host, received.length));
 * unwrap(buffer.hostView()).set(received);
 * const handle = unwrap(GridHandle.fromHostBytes(backend, buffer)); // validates the whole chain; the handle owns the buffer
 * console.log(`${handle.gridCount} grid '${handle.grid()?.name}', ${handle.grid()?.voxelCount} voxels, voxel (1,2,3) active: ${unwrap(handle.accessor()).isActive(1, 2, 3)}`);
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * const onDevice = unwrap(handle.copyTo(stream, new DeviceResource(backend, Device.cuda(0)))); // host -> device: one stream-ordered copy, no kernel
 * console.log(`copy: ${onDevice.memoryKind} memory, ${onDevice.sizeBytes} bytes`);
 * onDevice.dispose(); // freed on `stream`
 * handle.dispose(); // frees the buffer
 * await backend.synchronizeStream(stream);
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export class GridHandle<S extends GridStorage = GridStorage> implements Disposable {
  readonly #backend: Backend;
  readonly #storage: S;
  readonly #grids: readonly GridMetadata[];
  readonly #blind: readonly (readonly BlindMetadata[])[];
  readonly #nodeOffsets: readonly (readonly number[])[];
  #release: (() => void) | null;
  #disposed = false;
  #retained = 0;
  /** Unregisters the handle from the leak report at `dispose()`. */
  readonly #leakToken = {};

  private constructor(backend: Backend, storage: S, grids: readonly GridMetadata[], extras: GridExtras, release: (() => void) | null = null) {
    this.#backend = backend;
    this.#storage = storage;
    this.#grids = Object.freeze(grids);
    this.#blind = Object.freeze(extras.blind.map((records) => Object.freeze(records.slice())));
    this.#nodeOffsets = Object.freeze(extras.nodeOffsets.map((o) => Object.freeze(o.slice())));
    this.#release = release;
    handleLeaks.track(this, { label: `grid "${grids[0]?.name ?? ''}" (${storage.sizeBytes} bytes)` }, this.#leakToken);
  }

  /**
   * Wraps grid bytes in host-accessible memory (host, pinned or managed) after validating the whole grid
   * chain (`validateGrids`). Errors: NotSupported when the memory is not host-accessible (validate on the
   * host, then `copyTo`), InvalidArgument for storage that is not a ResourceBuffer or BufferView, an empty span or a bad grid (naming the first bad field),
   * NotSupported for grid types hs does not read. The bytes must not be written by pending device work.
   */
  static fromHostBytes<S extends GridStorage>(backend: Backend, storage: S, options: GridHandleOptions = {}): Result<GridHandle<S>> {
    const bytes = hostBytesOf(backend, storage);
    if (!bytes.ok) return bytes;
    const grids = validateGrids(bytes.value, options);
    if (!grids.ok) return grids;
    return ok(new GridHandle(backend, storage, grids.value, gridExtras(bytes.value, grids.value), options.release ?? null));
  }

  /**
   * Wraps grid bytes in any memory (device memory included) whose host copy `hostCopy` (the same bytes, already read
   * back by the caller) validated; the handle holds `storage`, the metadata come from `hostCopy`. How a device
   * allocation is adopted without a kernel: copy it to the host once, validate, wrap. Errors: those of
   * `fromHostBytes` for `hostCopy`; InvalidArgument when `storage` and `hostCopy` differ in length.
   */
  static fromValidatedCopy<S extends GridStorage>(backend: Backend, storage: S, hostCopy: Uint8Array, options: GridHandleOptions = {}): Result<GridHandle<S>> {
    if (!(hostCopy instanceof Uint8Array)) return err(ErrorCode.InvalidArgument, 'GridHandle.fromValidatedCopy: hostCopy must be a Uint8Array of the grid bytes');
    if (storage?.sizeBytes !== hostCopy.length) {
      return err(ErrorCode.InvalidArgument, `GridHandle.fromValidatedCopy: the storage holds ${String(storage?.sizeBytes)} bytes, its host copy ${hostCopy.length}`);
    }
    const grids = validateGrids(hostCopy, options);
    if (!grids.ok) return grids;
    return ok(new GridHandle(backend, storage, grids.value, gridExtras(hostCopy, grids.value), options.release ?? null));
  }

  static {
    adoptBuilt = (backend, storage, bytes) => {
      const grids = [builtGridMetadata(bytes)];
      return new GridHandle(backend, storage, grids, gridExtras(bytes, grids));
    };
  }

  /** The backend the bytes belong to. */
  get backend(): Backend {
    return this.#backend;
  }

  /** The GridBlindMetaData records of grid `n` (as `gridBlindMetadata` reads them), known for device grids too. */
  blindMetadata(n = 0): readonly BlindMetadata[] {
    return this.#blind[n] ?? [];
  }

  /**
   * Byte offset, from the start of grid `n`, of the first node of `level` (0 leaves, 1 lower nodes, 2 upper nodes,
   * 3 the root), or 0 when the level is empty (TreeData's node offsets, read at validation: known for device grids too).
   */
  nodeOffset(level: 0 | 1 | 2 | 3, n = 0): number {
    return this.#nodeOffsets[n]?.[level] ?? 0;
  }

  /**
   * Keeps the bytes alive for a view that aliases them (a channel or values tensor): `dispose()` before the returned
   * release ran defers the free (and the release hook) until it runs. The release is idempotent.
   * Errors: InvalidState after `dispose()`.
   */
  retain(): Result<() => void> {
    if (this.#disposed) return err(ErrorCode.InvalidState, 'GridHandle.retain: the handle was disposed');
    this.#retained++;
    let released = false;
    return ok(() => {
      if (released) return;
      released = true;
      this.#retained--;
      if (this.#disposed && this.#retained === 0) this.#free();
    });
  }

  /** The buffer or view holding the grids. */
  get storage(): S {
    return this.#storage;
  }
  /** Metadata of every grid, in buffer order. */
  get grids(): readonly GridMetadata[] {
    return this.#grids;
  }
  /** Number of grids in the buffer. */
  get gridCount(): number {
    return this.#grids.length;
  }
  /** Bytes of the buffer. */
  get sizeBytes(): number {
    return this.#storage.sizeBytes;
  }
  /** Memory kind of the bytes. */
  get memoryKind(): MemoryKind {
    return (this.#storage.data as MemoryBlock).memory.kind;
  }

  /** Metadata of grid `n`, `undefined` when out of range. */
  grid(n = 0): GridMetadata | undefined {
    return this.#grids[n];
  }

  /** The bytes as a host view; NotSupported for device memory, InvalidState after `dispose`. */
  hostBytes(): Result<Uint8Array> {
    if (this.#disposed) return err(ErrorCode.InvalidState, 'GridHandle: the handle was disposed');
    return hostBytesOf(this.#backend, this.#storage);
  }

  /** A host accessor of grid `n` (host-accessible memory only). InvalidArgument for a grid index out of range. */
  accessor(n = 0): Result<GridAccessor> {
    const metadata = this.#grids[n];
    if (metadata === undefined) return err(ErrorCode.InvalidArgument, `GridHandle.accessor: grid ${n} does not exist; the buffer holds ${this.#grids.length}`);
    const bytes = this.hostBytes();
    return bytes.ok ? ok(new GridAccessor(bytes.value, metadata)) : bytes;
  }

  /**
   * Copies the grids into memory from `resource` with one stream-ordered copy on `stream` (no kernel; the
   * metadata is reused, not re-validated). Default resource: the current device resource of the stream's device (`setCurrentDeviceResource`) when the
   * bytes are host-accessible, pinned host memory when they are device memory. The new handle owns its
   * buffer (retained on `stream` when the resource is async). Read it on the host only after synchronizing
   * `stream`. Errors: the resource's (`OutOfMemory`, …) and the backend's; nothing leaks on failure.
   * Spec: "cuda::copyTo cross-space transfers" (#2292).
   */
  copyTo(stream: Stream, resource?: SyncResource): Result<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>> {
    if (this.#disposed) return err(ErrorCode.InvalidState, 'GridHandle.copyTo: the handle was disposed');
    const src = this.#storage.data as MemoryBlock;
    let target = resource;
    if (target === undefined) {
      const toDevice = src.memory.kind !== MemoryKind.CudaDevice;
      const made = toDevice ? currentDeviceResource(this.#backend, stream.device) : defaultResource(this.#backend, MemoryKind.PinnedHost, Device.cpu());
      if (!made.ok) return made;
      target = made.value;
    }
    const bytes = this.#storage.size;
    const allocated = isAsyncResource(target)
      ? ResourceBuffer.allocateAsync(this.#backend, stream, target, bytes, { noInit: true })
      : ResourceBuffer.allocate(this.#backend, target, bytes);
    if (!allocated.ok) return allocated;
    const buffer = allocated.value as ResourceBuffer<SyncResource, Uint8ArrayConstructor>;
    const copied = this.#backend.memcpyAsync(stream, buffer.data as MemoryBlock, src);
    if (!copied.ok) {
      buffer.destroy(isAsyncResource(target) ? stream : undefined);
      return copied;
    }
    return ok(new GridHandle(this.#backend, buffer, this.#grids, { blind: this.#blind, nodeOffsets: this.#nodeOffsets }));
  }

  /**
   * Frees an owned buffer (on its retained stream); a view is left alone; the release hook runs. While `retain()`ed
   * views are alive, that happens when the last is released. Idempotent.
   * @throws HsError the buffer's dispose error (its retained stream was destroyed).
   */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    handleLeaks.untrack(this.#leakToken);
    if (this.#retained === 0) this.#free();
  }

  #free(): void {
    const release = this.#release;
    this.#release = null;
    try {
      if (this.#storage instanceof ResourceBuffer) this.#storage.dispose();
    } finally {
      release?.();
    }
  }

  /** Same as `dispose()`. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}

/**
 * The handle over the one grid a host builder has just written into `storage` (host-accessible, the grid at its
 * start), its metadata read from the headers (`builtGridMetadata`) instead of by `validateGrids`: the trusted path
 * of hs's own builders, not exported from the package. Errors: NotSupported when the memory is not host-accessible.
 */
export function handleOfBuiltGrid(backend: Backend, storage: ResourceBuffer<SyncResource, Uint8ArrayConstructor>): Result<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>> {
  const bytes = hostBytesOf(backend, storage);
  if (!bytes.ok) return bytes;
  return ok(adoptBuilt(backend, storage, bytes.value));
}

/** What a handle reads from validated bytes besides `GridMetadata`: each grid's blind records and node offsets. */
interface GridExtras {
  readonly blind: readonly (readonly BlindMetadata[])[];
  readonly nodeOffsets: readonly (readonly number[])[];
}

function gridExtras(bytes: Uint8Array, grids: readonly GridMetadata[]): GridExtras {
  const nodeOffsets = grids.map((g) => {
    const v = new DataView(bytes.buffer, bytes.byteOffset + g.byteOffset, 736);
    return [0, 1, 2, 3].map((level) => {
      const rel = Number(v.getBigInt64(672 + 8 * level, true));
      return rel === 0 ? 0 : 672 + rel;
    });
  });
  return { blind: grids.map((g) => gridBlindMetadata(bytes, g)), nodeOffsets };
}

function hostBytesOf(backend: Backend, storage: GridStorage): Result<Uint8Array> {
  if (typeof storage !== 'object' || storage === null || !('data' in storage) || typeof storage.sizeBytes !== 'number') {
    const got = storage === null ? 'null' : typeof storage;
    return err(ErrorCode.InvalidArgument, `GridHandle: expected the grid storage as a ResourceBuffer or BufferView of bytes, got ${got}; wrap raw bytes with readNvdb or a ResourceBuffer first`);
  }
  const block = storage.data;
  if (block === null) return err(ErrorCode.InvalidArgument, 'GridHandle: the storage is empty; a grid needs at least 736 bytes');
  const view = backend.hostView(block.memory);
  if (!view.ok) {
    return err(ErrorCode.NotSupported, `GridHandle: the grid bytes are ${block.memory.kind} memory, which the host cannot read; validate host bytes, then copyTo the device`, view.error);
  }
  return ok(view.value.subarray(block.byteOffset, block.byteOffset + storage.sizeBytes));
}
