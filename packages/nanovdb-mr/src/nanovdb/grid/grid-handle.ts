import { Device, ErrorCode, MemoryKind, err, ok, type Backend, type Result, type Stream } from '@hs/streams';
import { ResourceBuffer } from '../../resource-buffer.js';
import type { BufferView } from '../../buffer-view.js';
import { defaultResource } from '../../default-resource.js';
import { currentDeviceResource } from '../../current-device-resource.js';
import { isAsyncResource, type MemoryBlock, type SyncResource } from '../../resource.js';
import { GridAccessor } from './grid-accessor.js';
import { validateGrids, type GridMetadata, type ValidateOptions } from './grid-validation.js';

/** What a `GridHandle` holds its bytes in: an owning `ResourceBuffer` or a non-owning `BufferView` (external memory). */
export type GridStorage = ResourceBuffer<SyncResource, Uint8ArrayConstructor> | BufferView<Uint8ArrayConstructor>;

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
 * const handle = unwrap(GridHandle.fromHostBytes(backend, buffer));   // validates the whole chain
 * const onDevice = unwrap(handle.copyTo(stream));                     // host -> device, stream-ordered
 * handle.accessor().value?.getValue(1, 2, 3);
 * ```
 */
export class GridHandle<S extends GridStorage = GridStorage> implements Disposable {
  readonly #backend: Backend;
  readonly #storage: S;
  readonly #grids: readonly GridMetadata[];
  #disposed = false;

  private constructor(backend: Backend, storage: S, grids: readonly GridMetadata[]) {
    this.#backend = backend;
    this.#storage = storage;
    this.#grids = Object.freeze(grids);
  }

  /**
   * Wraps grid bytes in host-accessible memory (host, pinned or managed) after validating the whole grid
   * chain (`validateGrids`). Errors: NotSupported when the memory is not host-accessible (validate on the
   * host, then `copyTo`), InvalidArgument for storage that is not a ResourceBuffer or BufferView, an empty span or a bad grid (naming the first bad field),
   * NotSupported for grid types hs does not read. The bytes must not be written by pending device work.
   */
  static fromHostBytes<S extends GridStorage>(backend: Backend, storage: S, options: ValidateOptions = {}): Result<GridHandle<S>> {
    const bytes = hostBytesOf(backend, storage);
    if (!bytes.ok) return bytes;
    const grids = validateGrids(bytes.value, options);
    if (!grids.ok) return grids;
    return ok(new GridHandle(backend, storage, grids.value));
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
    return ok(new GridHandle(this.#backend, buffer, this.#grids));
  }

  /**
   * Frees an owned buffer (on its retained stream); a view is left alone. Idempotent.
   * @throws HsError the buffer's dispose error (its retained stream was destroyed).
   */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    if (this.#storage instanceof ResourceBuffer) this.#storage.dispose();
  }

  /** Same as `dispose()`. */
  [Symbol.dispose](): void {
    this.dispose();
  }
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
