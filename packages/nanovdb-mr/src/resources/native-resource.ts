import {
  ErrorCode,
  HsError,
  OK_VOID,
  err,
  errWithContext,
  ok,
  isDeviceAccessible,
  isHostAccessible,
  type Backend,
  type Device,
  type DeviceMemory,
  type Err,
  type MemoryKind,
  type NativeMemoryTable,
  type Result,
  type Stream,
} from '@hs/streams';
import { recordAlignment, requestProblem, returnProblem } from '../allocation-checks.js';
import { DEFAULT_ALIGNMENT, type AsyncResource, type MemoryBlock, type SyncResource } from '../resource.js';
import { OK_NULL_BLOCK } from './backend-resource.js';

/** Options for `NativeResource.open`. */
export interface NativeResourceOptions {
  /** Name used in error messages and block labels; default the table's `name`, else `NativeResource`. */
  readonly label?: string;
}

/**
 * A resource whose memory comes from another native addon's allocator, through the C table
 * `hs_memory_resource_v1` of `native/include/hs/hs.h` (handed to JavaScript as a Node-API external tagged
 * `HS_MEMORY_RESOURCE_TYPE_TAG`). The backend opens the table (`Backend.openNativeMemoryTable`: the
 * `@hs/cuda-native` addon validates it once and calls its function pointers) and turns each block into
 * backend memory (host and pinnedHost blocks with their host view, cudaDevice blocks as device memory), so
 * the blocks work wherever a resource is injected: `ResourceBuffer`, `TempPool`, `TensorPool` backing,
 * `pointsToGrid`.
 *
 * `NativeResource.open` gives this synchronous tier, or a `NativeAsyncResource` when the table has the
 * stream-ordered pair and the backend has native streams (the CUDA backend). `allocate(0)` gives `null`
 * without calling the table. Every pointer the table returns is checked (non-null, a multiple of the
 * alignment); a bad one is given back through the table's deallocate and reported, so nothing leaks
 * through hs. The table's entry points run on the JS thread (a synchronous device-wide `cudaFree` there
 * can stall behind an hs host function holding a stream: prefer stream-ordered frees). Errors (Result): `OutOfMemory`, `InvalidArgument`, `NotSupported` and `DeviceError` from the
 * table's status codes (`HS_RESOURCE_OUT_OF_MEMORY`, `_INVALID_ARGUMENT`, `_NOT_SUPPORTED`, `_FAILURE`);
 * `ProtocolError` when the table breaks the C contract (a misaligned or NULL pointer, an unknown status);
 * `InvalidArgument` for bad sizes, alignments or foreign blocks; `InvalidState` for a block already
 * returned or a disposed resource.
 * Spec: "Resource (allocator)": a resource supplied by a downstream native library (nanovdb-memory-resources).
 *
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { HostResource, NativeResource, ResourceBuffer, type SyncResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * // `table`: the hs_memory_resource_v1 external your addon hands over (native/include/hs/hs.h), e.g. myAddon.createResourceTable()
 * function resourceFor(table: unknown): SyncResource {
 *   const opened = NativeResource.open(backend, table);
 *   if (opened.ok) return opened.value; // the addon's allocator, usable wherever hs allocates
 *   console.log(`${opened.error.code}: falling back to host memory`); // not a table, or a backend that cannot open one
 *   return new HostResource(backend);
 * }
 * const resource = resourceFor({});
 * const buffer = unwrap(ResourceBuffer.allocate(backend, resource, 1024)); // with a table: the addon's allocate ran
 * buffer.dispose(); // and its deallocate
 * if (resource instanceof NativeResource) unwrap(resource.dispose()); // the table's destroy
 * ```
 */
export class NativeResource implements SyncResource {
  /** The backend the blocks are adopted into. */
  readonly backend: Backend;
  /** Memory kind the table serves. */
  readonly kind: MemoryKind;
  /** Device of every block (`Device.cpu()` for host and pinned memory). */
  readonly device: Device;
  /** True for host and pinnedHost memory. */
  readonly hostAccessible: boolean;
  /** True for pinnedHost and cudaDevice memory. */
  readonly deviceAccessible: boolean;
  /** Name used in error messages and block labels. */
  readonly label: string;

  /** The addon's external the table came in; kept reachable while the table may be called (its `user` state may depend on it). */
  readonly table: unknown;
  /** @internal The table as the backend opened it. */
  protected readonly opened: NativeMemoryTable;
  #disposed = false;

  /** @internal Use `NativeResource.open`. */
  protected constructor(backend: Backend, table: unknown, opened: NativeMemoryTable, label: string) {
    this.backend = backend;
    this.table = table;
    this.opened = opened;
    this.kind = opened.kind;
    this.device = opened.device;
    this.hostAccessible = isHostAccessible(opened.kind);
    this.deviceAccessible = isDeviceAccessible(opened.kind);
    this.label = label;
  }

  /**
   * Opens the table a native addon handed over as `table` through `backend.openNativeMemoryTable` and
   * wraps it: a `NativeAsyncResource` when the opened table is stream-ordered (it has
   * `allocate_async`/`deallocate_async` and `backend` is a CUDA backend), else a `NativeResource`. Once the
   * table was validated hs owns its `user` state: if this then fails (the memory kind does not suit the
   * backend), the table's `destroy` runs before returning.
   * Errors: `InvalidArgument` when `table` is not a tagged external or the table is invalid (wrong
   * struct_size or version, an unknown device_type, NULL allocate/deallocate, half of the stream-ordered
   * pair, a table already open); `NotSupported` when the backend cannot open native tables (no
   * `openNativeMemoryTable`, or `@hs/cuda-native` is not built), or cannot adopt the table's memory kind
   * (cudaDevice needs the CUDA backend with that device; host and pinnedHost need
   * `Backend.adoptHostMemory`; cudaManaged tables are not supported).
   * @throws HsError InvalidArgument when `backend` is not a Backend or `options` is not an object.
   */
  static open(backend: Backend, table: unknown, options: NativeResourceOptions = {}): Result<NativeResource> {
    if (typeof backend !== 'object' || backend === null || typeof backend.allocate !== 'function') {
      throw new HsError(ErrorCode.InvalidArgument, 'NativeResource.open: expected a Backend (for example new HostBackend())');
    }
    if (typeof options !== 'object' || options === null) throw new HsError(ErrorCode.InvalidArgument, 'NativeResource.open: options must be an object');
    if (typeof backend.openNativeMemoryTable !== 'function') {
      return err(ErrorCode.NotSupported, `NativeResource.open: this ${backend.name} backend cannot open native resource tables (no openNativeMemoryTable)`);
    }
    const opened = backend.openNativeMemoryTable(table);
    if (!opened.ok) return errWithContext(opened.error, 'NativeResource.open');
    const name = opened.value.name;
    const label = options.label ?? (name === '' ? 'NativeResource' : `NativeResource "${name}"`);
    const tier = opened.value.streamOrdered ? NativeAsyncResource : NativeResource;
    return ok(new tier(backend, table, opened.value, label));
  }

  /** Blocks handed out and not yet returned. */
  get liveBlocks(): number {
    return this.opened.liveBlocks;
  }

  /**
   * Allocates `bytes` bytes aligned to `alignment` (default 256) through the table's `allocate`; `null`
   * for 0 bytes. Errors as the class describes.
   */
  allocate(bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<MemoryBlock | null> {
    const problem = this.disposedProblem('allocate') ?? requestProblem(`${this.label}.allocate`, bytes, alignment);
    if (problem !== null) return problem;
    if (bytes === 0) return OK_NULL_BLOCK;
    return this.block('allocate', this.opened.allocate(bytes, alignment, `${this.label} block`), bytes, alignment);
  }

  /**
   * Returns a block from `allocate` (or `null` with 0 bytes) through the table's `deallocate`; the block
   * must be quiescent. The handle is retired before the table is called, so a failing `deallocate` is
   * reported (DeviceError or the mapped status) with the block already forgotten here.
   */
  deallocate(block: MemoryBlock | null, bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<void> {
    const problem = this.returnCheck('deallocate', block, bytes, alignment);
    if (problem !== null || block === null) return problem ?? OK_VOID;
    return this.context('deallocate', this.opened.deallocate(block.memory, bytes, alignment));
  }

  /**
   * Calls the table's `destroy` (once) and refuses every later call with InvalidState. InvalidState, with
   * nothing destroyed, while blocks are still live: return them first. Idempotent once it succeeded.
   */
  dispose(): Result<void> {
    if (this.#disposed) return OK_VOID;
    if (this.opened.liveBlocks > 0) {
      return err(ErrorCode.InvalidState, `${this.label}.dispose: ${this.opened.liveBlocks} block(s) are still live; return them to the resource first`);
    }
    this.#disposed = true;
    this.opened.close();
    return OK_VOID;
  }

  /** `dispose()` for `using`. @throws HsError InvalidState while blocks are live. */
  [Symbol.dispose](): void {
    const r = this.dispose();
    if (!r.ok) throw r.error;
  }

  /** @internal InvalidState once disposed, else null. */
  protected disposedProblem(method: string): Err | null {
    return this.#disposed ? err(ErrorCode.InvalidState, `${this.label}.${method}: the resource was disposed (its table was destroyed)`) : null;
  }

  /** @internal Null when `block` may be returned with `bytes` and `alignment`; otherwise the error. */
  protected returnCheck(method: string, block: MemoryBlock | null, bytes: number, alignment: number): Err | null {
    const who = `${this.label}.${method}`;
    const problem = this.disposedProblem(method) ?? requestProblem(who, bytes, alignment) ?? returnProblem(who, block, bytes, alignment);
    if (problem !== null || block === null) return problem;
    // Live blocks are this resource's to return even when the backend already dropped their handles
    // (disposed): the table gets its memory back either way.
    if (block.byteOffset === 0 && this.opened.owns(block.memory)) return null;
    if (block.memory.freed) return err(ErrorCode.InvalidState, `${who}: block "${block.label}" was already returned`);
    return err(ErrorCode.InvalidArgument, `${who}: block "${block.label}" was not allocated by this ${this.label}`);
  }

  /** @internal The table's answer as a block of `bytes` (its alignment recorded), or the error with this resource's context. */
  protected block(method: string, allocated: Result<DeviceMemory>, bytes: number, alignment: number): Result<MemoryBlock> {
    if (!allocated.ok) return errWithContext(allocated.error, `${this.label}.${method}`);
    const memory = allocated.value;
    recordAlignment(memory, alignment);
    return ok({ memory, byteOffset: 0, byteLength: bytes, label: memory.label });
  }

  /** @internal `result` with this resource's context in front of an error. */
  protected context(method: string, result: Result<void>): Result<void> {
    return result.ok ? result : errWithContext(result.error, `${this.label}.${method}`);
  }
}

/**
 * A `NativeResource` over a table with the stream-ordered pair (`allocate_async`/`deallocate_async`), on
 * the CUDA backend: all four resource methods. `allocateAsync(…, stream)` passes the stream's
 * `cudaStream_t` to the table; the block may be used by work enqueued on `stream` afterwards.
 * `deallocateAsync(…, stream)` hands the block back in stream order (the table frees it after the work
 * enqueued on `stream` so far, like `cudaFreeAsync`). Errors as `NativeResource`, plus InvalidArgument or
 * InvalidState for a stream of another backend or device, or a destroyed one.
 * Spec: "Resource (allocator): two tiers", stream-ordered tier, supplied by a native library.
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { DeviceResource, NativeAsyncResource, NativeResource, type AsyncResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * // a table with allocate_async/deallocate_async, opened on the CUDA backend, gives the stream-ordered tier
 * function streamOrderedFor(table: unknown): AsyncResource {
 *   const opened = NativeResource.open(backend, table);
 *   if (opened.ok && opened.value instanceof NativeAsyncResource) return opened.value;
 *   if (opened.ok) unwrap(opened.value.dispose()); // a synchronous table: not what this caller needs
 *   else console.log(`${opened.error.code}: using the device pool instead`);
 *   return new DeviceResource(backend, Device.cuda(0));
 * }
 * const resource = streamOrderedFor({}); // `{}` is no table: pass your addon's external
 * console.log(`stream-ordered: ${typeof resource.allocateAsync === 'function'}`);
 * ```
 */
export class NativeAsyncResource extends NativeResource implements AsyncResource {
  /** Stream-ordered allocation through `allocate_async` on `stream`'s `cudaStream_t`; `null` for 0 bytes. */
  allocateAsync(bytes: number, alignment: number, stream: Stream): Result<MemoryBlock | null> {
    const problem = this.disposedProblem('allocateAsync') ?? requestProblem(`${this.label}.allocateAsync`, bytes, alignment);
    if (problem !== null) return problem;
    if (bytes === 0) return OK_NULL_BLOCK;
    return this.block('allocateAsync', this.opened.allocateAsync(bytes, alignment, stream, `${this.label} block`), bytes, alignment);
  }

  /** Stream-ordered return through `deallocate_async` on `stream`'s `cudaStream_t`. */
  deallocateAsync(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream): Result<void> {
    const problem = this.returnCheck('deallocateAsync', block, bytes, alignment);
    if (problem !== null) return problem;
    if (block === null) return OK_VOID;
    return this.context('deallocateAsync', this.opened.deallocateAsync(block.memory, bytes, alignment, stream));
  }
}
