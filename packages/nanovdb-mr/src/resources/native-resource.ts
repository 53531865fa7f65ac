import { ResourceStatus, loadCudaNative, type CudaNativeBinding, type OpenedMemoryResource } from '@hs/cuda-native';
import {
  CudaBackend,
  Device,
  ErrorCode,
  HsError,
  MemoryKind,
  OK_VOID,
  err,
  ok,
  isDeviceAccessible,
  isHostAccessible,
  type Backend,
  type DeviceMemory,
  type Err,
  type Result,
  type Stream,
} from '@hs/streams';
import { recordAlignment, requestProblem, returnProblem } from '../allocation-checks.js';
import { DEFAULT_ALIGNMENT, type AsyncResource, type MemoryBlock, type SyncResource } from '../resource.js';
import { OK_NULL_BLOCK } from './backend-resource.js';

/** DLPack device types an `hs_memory_resource_v1` table declares, as hs memory kinds. */
const KIND_OF_DEVICE_TYPE: ReadonlyMap<number, MemoryKind> = new Map([
  [1, MemoryKind.Host],
  [3, MemoryKind.PinnedHost],
  [2, MemoryKind.CudaDevice],
  [13, MemoryKind.CudaManaged],
]);

/** What the resource keeps per live block: the native pointer and, for host-accessible memory, its host view's buffer. */
interface LiveBlock {
  readonly address: bigint;
  readonly buffer: ArrayBuffer | null;
}

/** Options for `NativeResource.open`. */
export interface NativeResourceOptions {
  /** Name used in error messages and block labels; default the table's `name`, else `NativeResource`. */
  readonly label?: string;
}

/**
 * A resource whose memory comes from another native addon's allocator, through the C table
 * `hs_memory_resource_v1` of `native/include/hs/hs.h` (handed to JavaScript as a Node-API external tagged
 * `HS_MEMORY_RESOURCE_TYPE_TAG`). `@hs/cuda-native` validates the table once and calls its function
 * pointers; this class turns each block into backend memory (`Backend.adoptHostMemory` for pageable and
 * pinned host memory, `Backend.adoptDeviceMemory` for CUDA device memory), so the blocks work wherever a
 * resource is injected: `ResourceBuffer`, `TempPool`, `TensorPool` backing, `pointsToGrid`.
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
 * const resource = unwrap(NativeResource.open(backend, myAddon.createResourceTable()));
 * const buffer = unwrap(ResourceBuffer.allocate(resource, 1024));   // the addon's allocate ran
 * buffer.dispose();                                          // the addon's deallocate ran
 * unwrap(resource.dispose());                                // the table's destroy ran
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
  readonly #opened: OpenedMemoryResource;
  /** @internal */
  protected readonly binding: CudaNativeBinding;
  readonly #live = new Map<DeviceMemory, LiveBlock>();
  /** Receives the address of each allocation (no allocation per call). */
  readonly #out = new BigUint64Array(1);
  #disposed = false;

  /** @internal Use `NativeResource.open`. */
  protected constructor(backend: Backend, binding: CudaNativeBinding, table: unknown, opened: OpenedMemoryResource, kind: MemoryKind, device: Device, label: string) {
    this.backend = backend;
    this.binding = binding;
    this.table = table;
    this.#opened = opened;
    this.kind = kind;
    this.device = device;
    this.hostAccessible = isHostAccessible(kind);
    this.deviceAccessible = isDeviceAccessible(kind);
    this.label = label;
  }

  /**
   * Opens the table a native addon handed over as `table` and wraps it for `backend`: a
   * `NativeAsyncResource` when the table has `allocate_async`/`deallocate_async` and `backend` is a
   * `CudaBackend`, else a `NativeResource`. Once the table was validated hs owns its `user` state: if this
   * then fails (the memory kind does not suit the backend), the table's `destroy` runs before returning.
   * Errors: `InvalidArgument` when `table` is not a tagged external or the table is invalid (wrong
   * struct_size or version, an unknown device_type, NULL allocate/deallocate, half of the stream-ordered
   * pair, a table already open); `NotSupported` when `@hs/cuda-native` is not built, or the backend cannot
   * adopt the table's memory kind (cudaDevice needs the CUDA backend with that device; host and pinnedHost
   * need `Backend.adoptHostMemory`; cudaManaged tables are not supported).
   * @throws HsError InvalidArgument when `backend` is not a Backend or `options` is not an object.
   */
  static open(backend: Backend, table: unknown, options: NativeResourceOptions = {}): Result<NativeResource> {
    if (typeof backend !== 'object' || backend === null || typeof backend.allocate !== 'function') {
      throw new HsError(ErrorCode.InvalidArgument, 'NativeResource.open: expected a Backend (for example new HostBackend())');
    }
    if (typeof options !== 'object' || options === null) throw new HsError(ErrorCode.InvalidArgument, 'NativeResource.open: options must be an object');
    const loaded = loadCudaNative();
    if (!loaded.ok) return err(ErrorCode.NotSupported, `NativeResource.open: resource tables are called through @hs/cuda-native, which is unavailable: ${loaded.reason}`);
    const binding = loaded.binding;
    let opened: OpenedMemoryResource;
    try {
      opened = binding.memoryResourceOpen(table);
    } catch (cause) {
      return err(ErrorCode.InvalidArgument, `NativeResource.open: ${(cause as Error).message}`, cause);
    }
    const kind = KIND_OF_DEVICE_TYPE.get(opened.deviceType) as MemoryKind;
    const device = kind === MemoryKind.Host || kind === MemoryKind.PinnedHost ? Device.cpu() : Device.cuda(opened.deviceId);
    const label = options.label ?? (opened.name === '' ? 'NativeResource' : `NativeResource "${opened.name}"`);
    const unsuitable = adoptionProblem(backend, kind, device, label);
    if (unsuitable !== null) {
      binding.memoryResourceClose(opened.resource);
      return unsuitable;
    }
    const tier = opened.streamOrdered && backend instanceof CudaBackend ? NativeAsyncResource : NativeResource;
    return ok(new tier(backend, binding, table, opened, kind, device, label));
  }

  /** Blocks handed out and not yet returned. */
  get liveBlocks(): number {
    return this.#live.size;
  }

  /**
   * Allocates `bytes` bytes aligned to `alignment` (default 256) through the table's `allocate`; `null`
   * for 0 bytes. Errors as the class describes.
   */
  allocate(bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<MemoryBlock | null> {
    const problem = this.disposedProblem('allocate') ?? requestProblem(`${this.label}.allocate`, bytes, alignment);
    if (problem !== null) return problem;
    if (bytes === 0) return OK_NULL_BLOCK;
    const status = this.binding.memoryResourceAllocate(this.#opened.resource, bytes, alignment, this.#out);
    return this.adopt('allocate', status, bytes, alignment, null);
  }

  /**
   * Returns a block from `allocate` (or `null` with 0 bytes) through the table's `deallocate`; the block
   * must be quiescent. The handle is retired before the table is called, so a failing `deallocate` is
   * reported (DeviceError or the mapped status) with the block already forgotten here.
   */
  deallocate(block: MemoryBlock | null, bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<void> {
    const problem = this.returnCheck('deallocate', block, bytes, alignment);
    if (problem !== null || block === null) return problem ?? OK_VOID;
    const live = this.retire(block);
    // The memory goes back to the table even when the backend refuses to retire the handle (disposed).
    const freed = this.backend.free(block.memory);
    const status = this.binding.memoryResourceDeallocate(this.#opened.resource, live.address, bytes, alignment);
    return freed.ok ? this.statusResult('deallocate', status) : freed;
  }

  /**
   * Calls the table's `destroy` (once) and refuses every later call with InvalidState. InvalidState, with
   * nothing destroyed, while blocks are still live: return them first. Idempotent once it succeeded.
   */
  dispose(): Result<void> {
    if (this.#disposed) return OK_VOID;
    if (this.#live.size > 0) {
      return err(ErrorCode.InvalidState, `${this.label}.dispose: ${this.#live.size} block(s) are still live; return them to the resource first`);
    }
    this.#disposed = true;
    this.binding.memoryResourceClose(this.#opened.resource);
    return OK_VOID;
  }

  /** `dispose()` for `using`. @throws HsError InvalidState while blocks are live. */
  [Symbol.dispose](): void {
    const r = this.dispose();
    if (!r.ok) throw r.error;
  }

  /** @internal The opened table's handle for the stream-ordered calls. */
  protected get handle(): object {
    return this.#opened.resource;
  }

  /** @internal Scratch for the stream-ordered calls' address. */
  protected get out(): BigUint64Array {
    return this.#out;
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
    if (block.byteOffset === 0 && this.#live.has(block.memory)) return null;
    if (block.memory.freed) return err(ErrorCode.InvalidState, `${who}: block "${block.label}" was already returned`);
    return err(ErrorCode.InvalidArgument, `${who}: block "${block.label}" was not allocated by this ${this.label}`);
  }

  /** @internal Forgets a checked block (detaching its host view) and returns what the table needs to free it. */
  protected retire(block: MemoryBlock): LiveBlock {
    const live = this.#live.get(block.memory) as LiveBlock;
    this.#live.delete(block.memory);
    if (live.buffer !== null) this.binding.detachArrayBuffer(live.buffer);
    return live;
  }

  /**
   * @internal Turns the result of an allocate call into a block: the table's memory adopted by the
   * backend. On any failure after the table allocated, the pointer goes back through the matching
   * deallocate (`stream` non-null: the stream-ordered one).
   */
  protected adopt(method: string, status: number, bytes: number, alignment: number, stream: { readonly native: bigint; readonly stream: Stream } | null): Result<MemoryBlock> {
    if (status !== ResourceStatus.Ok) return this.statusResult(method, status, bytes, alignment) as Err;
    const address = this.#out[0] as bigint;
    const blockLabel = `${this.label} block`;
    let buffer: ArrayBuffer | null = null;
    let adopted: Result<DeviceMemory>;
    if (this.kind === MemoryKind.CudaDevice) {
      adopted = (this.backend.adoptDeviceMemory as NonNullable<Backend['adoptDeviceMemory']>)({ device: this.device, address, byteSize: bytes, label: blockLabel });
    } else {
      try {
        buffer = this.binding.externalArrayBuffer(address, bytes);
        adopted = (this.backend.adoptHostMemory as NonNullable<Backend['adoptHostMemory']>)({ bytes: new Uint8Array(buffer), kind: this.kind, address, label: blockLabel });
      } catch (cause) {
        adopted = err(ErrorCode.NotSupported, `${this.label}.${method}: this runtime gives no host view of native memory (${(cause as Error).message})`, cause);
      }
    }
    if (!adopted.ok) {
      if (buffer !== null) this.binding.detachArrayBuffer(buffer);
      if (stream === null) this.binding.memoryResourceDeallocate(this.#opened.resource, address, bytes, alignment);
      else this.binding.memoryResourceDeallocateAsync(this.#opened.resource, address, bytes, alignment, stream.native);
      return adopted;
    }
    const memory = adopted.value;
    recordAlignment(memory, alignment);
    this.#live.set(memory, { address, buffer });
    return ok({ memory, byteOffset: 0, byteLength: bytes, label: blockLabel });
  }

  /** @internal OK_VOID for status 0, else the typed error naming the table and what it did. */
  protected statusResult(method: string, status: number, bytes?: number, alignment?: number): Result<void> {
    if (status === ResourceStatus.Ok) return OK_VOID;
    const request = bytes === undefined ? '' : ` for ${bytes} bytes aligned to ${String(alignment)}`;
    const what = `${this.label}.${method}: the native table ${this.binding.memoryResourceStatusName(status)} (status ${status})${request}`;
    switch (status) {
      case ResourceStatus.OutOfMemory:
        return err(ErrorCode.OutOfMemory, `${what}; nothing was allocated`);
      case ResourceStatus.InvalidArgument:
      case ResourceStatus.BadArguments:
        return err(ErrorCode.InvalidArgument, what);
      case ResourceStatus.NotSupported:
      case ResourceStatus.NoStreamEntryPoints:
        return err(ErrorCode.NotSupported, what);
      case ResourceStatus.Destroyed:
        return err(ErrorCode.InvalidState, what);
      case ResourceStatus.Misaligned:
      case ResourceStatus.NullPointer:
      case ResourceStatus.GiveBackFailed:
      case ResourceStatus.UnknownStatus:
        return err(ErrorCode.ProtocolError, `${what}; the addon's allocator breaks the hs_memory_resource_v1 contract`);
      default:
        return err(ErrorCode.DeviceError, what);
    }
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
 */
export class NativeAsyncResource extends NativeResource implements AsyncResource {
  /** Stream-ordered allocation through `allocate_async` on `stream`'s `cudaStream_t`; `null` for 0 bytes. */
  allocateAsync(bytes: number, alignment: number, stream: Stream): Result<MemoryBlock | null> {
    const problem = this.disposedProblem('allocateAsync') ?? requestProblem(`${this.label}.allocateAsync`, bytes, alignment);
    if (problem !== null) return problem;
    const native = this.nativeStream('allocateAsync', stream);
    if (!native.ok) return native;
    if (bytes === 0) return OK_NULL_BLOCK;
    const status = this.binding.memoryResourceAllocateAsync(this.handle, bytes, alignment, native.value, this.out);
    return this.adopt('allocateAsync', status, bytes, alignment, { native: native.value, stream });
  }

  /** Stream-ordered return through `deallocate_async` on `stream`'s `cudaStream_t`. */
  deallocateAsync(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream): Result<void> {
    const problem = this.returnCheck('deallocateAsync', block, bytes, alignment);
    if (problem !== null) return problem;
    const native = this.nativeStream('deallocateAsync', stream);
    if (!native.ok) return native;
    if (block === null) return OK_VOID;
    const live = this.retire(block);
    const freed = this.backend.freeAsync(block.memory, stream);
    const status = this.binding.memoryResourceDeallocateAsync(this.handle, live.address, bytes, alignment, native.value);
    return freed.ok ? this.statusResult('deallocateAsync', status) : freed;
  }

  /** The `cudaStream_t` of a live stream of this resource's backend and device. */
  private nativeStream(method: string, stream: Stream): Result<bigint> {
    let handle: bigint;
    try {
      handle = (this.backend as CudaBackend).nativeStream(stream);
    } catch (cause) {
      if (cause instanceof HsError) return { ok: false, error: cause };
      throw cause;
    }
    if (stream.device !== this.device) {
      return err(ErrorCode.InvalidArgument, `${this.label}.${method}: the stream is on ${stream.device.toString()} but the table serves ${this.device.toString()}`);
    }
    return ok(handle);
  }
}

/** Null when `backend` can adopt blocks of `kind` on `device`; otherwise the NotSupported to return. */
function adoptionProblem(backend: Backend, kind: MemoryKind, device: Device, label: string): Err | null {
  if (kind === MemoryKind.CudaManaged) {
    return err(ErrorCode.NotSupported, `NativeResource.open: ${label} serves cudaManaged memory, which native tables cannot provide yet; serve cudaDevice or host memory`);
  }
  if (kind === MemoryKind.CudaDevice) {
    if (typeof backend.adoptDeviceMemory !== 'function' || !backend.devices.includes(device)) {
      return err(
        ErrorCode.NotSupported,
        `NativeResource.open: ${label} serves cudaDevice memory on ${device.toString()}, which this ${backend.name} backend cannot use; open it on a CudaBackend with that device`,
      );
    }
    return null;
  }
  if (typeof backend.adoptHostMemory !== 'function') {
    return err(ErrorCode.NotSupported, `NativeResource.open: ${label} serves ${kind} memory, but this ${backend.name} backend cannot adopt host memory (no adoptHostMemory)`);
  }
  return null;
}
