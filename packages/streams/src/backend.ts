import type { Device } from './device.js';
import type { Result } from './errors.js';
import type { MemoryKind } from './memory-kind.js';
import type { IpcHandleOperations, NativeMemoryTable, PeerCopyOperations, StreamMemoryOperations } from './backend-capabilities.js';
import type { OrderingChecker } from './ordering/ordering-checker.js';

/**
 * An ordered queue of device work, owned by the backend that created it. Work enqueued on one stream
 * runs in order; work on different streams is ordered only through events.
 * Spec: "One stream per active execution partition and device".
 */
export interface Stream {
  /** Backend-unique id, stable for the stream's life. */
  readonly id: number;
  /** Device the stream submits to. */
  readonly device: Device;
  /** Human-readable name used in diagnostics and ordering-checker reports. */
  readonly label: string;
  /** Priority; lower numbers run first where the backend supports priorities (CUDA convention). */
  readonly priority: number;
  /** True after `Backend.destroyStream`. */
  readonly destroyed: boolean;
}

/**
 * A marker recorded on a stream; it completes when all work enqueued on that stream before the record
 * has completed. Timing is disabled. An event never recorded counts as complete (CUDA semantics).
 */
export interface Event {
  /** Backend-unique id. */
  readonly id: number;
  /** Device the event belongs to. */
  readonly device: Device;
  /** Human-readable name for diagnostics. */
  readonly label: string;
  /** True after `Backend.destroyEvent`. */
  readonly destroyed: boolean;
}

/**
 * One allocation made through a backend: a typed handle, never a fake ArrayBuffer. `address` is the
 * device (or emulated) address of byte 0.
 */
export interface DeviceMemory {
  /** Backend-unique id. */
  readonly id: number;
  /** Owning device (`cpu` for host and pinned host memory). */
  readonly device: Device;
  /** Memory kind. */
  readonly kind: MemoryKind;
  /** Address of the first byte. */
  readonly address: bigint;
  /** Size in bytes. */
  readonly byteSize: number;
  /** Name for diagnostics (for example `pool gray.out slot backing`). */
  readonly label: string;
  /** True after `Backend.free`. */
  readonly freed: boolean;
}

/** A byte range inside one allocation. `label` names what lives there (a tensor) in checker reports. */
export interface MemoryRange {
  /** The allocation the range lies in; the range must fit inside its `byteSize`. */
  readonly memory: DeviceMemory;
  /** Offset from the start of `memory`, in bytes. */
  readonly byteOffset: number;
  /** Length in bytes. */
  readonly byteLength: number;
  /** What the range holds, for diagnostics (for example `grayscale.gray[slot 2]`). */
  readonly label: string;
}

/** Request for `Backend.allocate`. */
export interface AllocationRequest {
  /** Memory kind to allocate (`host`, `pinnedHost`, `cudaDevice`, `cudaManaged`). */
  readonly kind: MemoryKind;
  /** Device for CUDA kinds; `Device.cpu()` for host kinds. */
  readonly device: Device;
  /** Size in bytes; must be a positive safe integer. */
  readonly byteSize: number;
  /** Alignment in bytes, a power of two; default 256. */
  readonly alignment?: number;
  /** Name for diagnostics, kept on the returned `DeviceMemory`; default `<kind> allocation <id>`. */
  readonly label?: string;
}

/**
 * Request for `Backend.adoptHostMemory`: host bytes the backend did not allocate (a shared-memory mapping
 * made by `@hs/ipc`), to be used like one of its own host or pinnedHost allocations.
 */
export interface HostMemoryAdoption {
  /** The bytes; the caller keeps them mapped until it frees the adopted handle. */
  readonly bytes: Uint8Array;
  /** `host` or `pinnedHost`. */
  readonly kind: MemoryKind;
  /** Address of `bytes[0]` in this process (a backend that registers pages with a driver needs it). */
  readonly address: bigint;
  /** Name for diagnostics, kept on the returned `DeviceMemory`. */
  readonly label?: string;
}

/**
 * Request for `Backend.adoptDeviceMemory`: CUDA device memory the backend did not allocate (a block from a
 * downstream addon's allocator, `@hs/nanovdb-mr`'s `NativeResource`), used like one of its own
 * cudaDevice allocations.
 */
export interface DeviceMemoryAdoption {
  /** Device the memory lives on; one of the backend's CUDA devices. */
  readonly device: Device;
  /** Device address of byte 0 (a `cudaMalloc`/`cudaMallocAsync`-style pointer). */
  readonly address: bigint;
  /** Size in bytes, a positive safe integer. */
  readonly byteSize: number;
  /** Name for diagnostics, kept on the returned `DeviceMemory`. */
  readonly label?: string;
}

/** Options of `Backend.launchHostFunc`. */
export interface HostFuncOptions {
  /** Whether later work on the stream waits until the callback returned; default true. */
  readonly blocking?: boolean;
}

/**
 * A kernel launch. The backend runs it in stream order. `reads` and `writes` declare the ranges the
 * kernel touches (the ordering checker uses them). `host` is the host implementation, which the host
 * backend calls with views of the declared ranges in the same order; the CUDA backend looks the kernel
 * up by `name` in its native registry.
 */
export interface KernelLaunch {
  /** Stable kernel name, for example `hs.rgbaToGray`. */
  readonly name: string;
  /** Ranges the kernel reads, in the order the host implementation receives their views. */
  readonly reads: readonly MemoryRange[];
  /** Ranges the kernel writes, in the order the host implementation receives their views. */
  readonly writes: readonly MemoryRange[];
  /** Scalar parameters (element counts, dimensions). */
  readonly params: readonly number[];
  /** Host implementation: views of `reads` and `writes` (same order), then `params`. */
  readonly host: (reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]) => void;
}

/** Options for `Backend.createStream`. */
export interface StreamOptions {
  /** Name shown in diagnostics and ordering-checker reports; default `stream <id>`. */
  readonly label?: string;
  /** Priority (lower runs first); default 0. */
  readonly priority?: number;
}

/** Options for `Backend.createEvent`. */
export interface EventOptions {
  /** Name shown in diagnostics; default `event <id>`. */
  readonly label?: string;
  /**
   * True for an event another process may open (`cudaEventInterprocess`, see `Backend.ipc`); default
   * false. Backends without `ipc` refuse it with NotSupported.
   */
  readonly interprocess?: boolean;
}

/**
 * The device contract every package above `@hs/streams` speaks to. Two implementations: `HostBackend`
 * (pure TypeScript, always available) and the CUDA backend (`@hs/cuda-native`).
 *
 * No method blocks the JS thread: enqueue methods return at once; `queryEvent` never waits;
 * `synchronizeEvent`/`synchronizeStream` return promises (the explicit host waits).
 * The synchronous methods return failures as `Result` errors: `InvalidArgument` (bad sizes, ranges outside
 * their allocation, foreign handles), `InvalidState` (destroyed stream/event, freed memory),
 * `NotSupported` (host view of device-only memory), `DeviceError` (the device refused). The two host waits
 * resolve with nothing and reject with an `HsError` of the same codes (hs's rule: every Promise rejects).
 */
export interface Backend {
  /** `host` or `cuda`. */
  readonly name: 'host' | 'cuda';
  /** CUDA devices this backend exposes (emulated ones on the host backend). */
  readonly devices: readonly Device[];
  /**
   * The stream-ordering race detector, when this backend has one enabled (the host backend with
   * `orderingChecker: true`); undefined otherwise.
   */
  readonly orderingChecker?: OrderingChecker | undefined;

  /**
   * Creates a stream on `device`. Errors: `InvalidArgument` (a device this backend does not expose, a
   * non-integer priority), `InvalidState` (the backend was disposed), `DeviceError` (the device refused). Spec: "One stream per active execution partition
   * and device".
   */
  createStream(device: Device, options?: StreamOptions): Result<Stream>;
  /**
   * Destroys a stream: no new work is accepted; work already enqueued still runs and events captured on
   * it still complete (nothing waits). Errors: `InvalidArgument` (a stream of another backend), `InvalidState` (already destroyed).
   */
  destroyStream(stream: Stream): Result<void>;

  /**
   * Creates a timing-disabled event on `device`; until recorded it counts as complete. Errors:
   * `InvalidArgument` (a device this backend does not expose), `InvalidState` (the backend was disposed),
   * `DeviceError` (the device refused).
   */
  createEvent(device: Device, options?: EventOptions): Result<Event>;
  /**
   * Destroys an event; waits already enqueued on it keep their captured position. Errors:
   * `InvalidArgument` (an event of another backend), `InvalidState` (already destroyed).
   */
  destroyEvent(event: Event): Result<void>;
  /** Records `event` on `stream`; re-recording replaces the previous capture. */
  recordEvent(event: Event, stream: Stream): Result<void>;
  /** True when the event's last capture has completed (or it was never recorded). Never blocks. */
  queryEvent(event: Event): boolean;
  /**
   * Queries many events in one call (for retirement polling). Writes 1 (complete) or 0 into
   * `completed[i]` for `events[i]`, `i < count`, and returns the number complete. `count` (default
   * `events.length`, at most that) lets a caller query the first entries of a reused, preallocated list
   * without making a shorter array. Never blocks.
   */
  queryEvents(events: readonly Event[], completed: Uint8Array, count?: number): number;
  /** Makes future work on `stream` wait for the event's current capture. Never blocks the host. */
  streamWaitEvent(stream: Stream, event: Event): Result<void>;
  /**
   * The explicit host wait on an event: resolves (with nothing) when the event's capture at the time of
   * the call completes, at once when it was never recorded. Rejects with an `HsError`: `InvalidArgument`
   * for an event of another backend, `InvalidState` for a destroyed event or when the backend is disposed
   * before the work ran, `DeviceError` when work before the capture faulted (a kernel or host function
   * threw, the device refused). Never blocks the JS thread.
   * @throws HsError InvalidArgument (synchronously) when `event` is not an object.
   * @example
   * ```ts
   * unwrap(backend.recordEvent(done, producer));
   * await backend.synchronizeEvent(done); // the producer's work before `done` completed; a fault rejects (DeviceError)
   * ```
   */
  synchronizeEvent(event: Event): Promise<void>;
  /**
   * The explicit host wait on a stream: resolves (with nothing) when all work enqueued on `stream` so far
   * completes. Rejects with an `HsError`: `InvalidArgument` for a stream of another backend,
   * `InvalidState` for a destroyed stream or when the backend is disposed before the work ran,
   * `DeviceError` when that work faulted (a kernel or host function threw, the device refused). Never
   * blocks the JS thread.
   * @throws HsError InvalidArgument (synchronously) when `stream` is not an object.
   * @example
   * ```ts
   * unwrap(backend.copyToHostAsync(stream, host, range)); // synchronous: a Result
   * try {
   *   await backend.synchronizeStream(stream);            // a Promise: rejects with an HsError
   * } catch (error) {
   *   if (error instanceof HsError && error.code === ErrorCode.DeviceError) console.error(`the copy faulted: ${error.message}`);
   *   throw error;
   * }
   * // host now holds the bytes
   * ```
   */
  synchronizeStream(stream: Stream): Promise<void>;

  /**
   * Allocates memory that is valid on every stream and for the host once this returns (the synchronous
   * tier, like `cudaMalloc`). `OutOfMemory` when a valid size cannot be satisfied.
   */
  allocate(request: AllocationRequest): Result<DeviceMemory>;
  /** Frees memory; the caller guarantees no later work uses it (work already enqueued still completes). */
  free(memory: DeviceMemory): Result<void>;
  /**
   * True when `device` supports stream-ordered allocation from a memory pool (`allocateAsync`/`freeAsync`,
   * CUDA's `cudaDevAttrMemoryPoolsSupported`). Never blocks. False for devices this backend does not have.
   */
  supportsMemoryPools(device: Device): boolean;
  /**
   * Stream-ordered allocation of cudaDevice memory on `stream`'s device (`cudaMallocAsync`): the memory may
   * be used by work enqueued on `stream` after this call, and by other streams ordered after it through an
   * event. `request.device` must be the stream's device and `request.kind` cudaDevice (InvalidArgument);
   * NotSupported when the device has no memory-pool support; `OutOfMemory` when the size cannot be met.
   */
  allocateAsync(request: AllocationRequest, stream: Stream): Result<DeviceMemory>;
  /**
   * Stream-ordered free (`cudaFreeAsync`): the memory returns to its pool once the work enqueued on `stream`
   * before this call completes. The handle refuses new use at once (InvalidState). Accepts memory from
   * `allocate` or `allocateAsync`.
   */
  freeAsync(memory: DeviceMemory, stream: Stream): Result<void>;
  /**
   * Optional: wraps host bytes this backend did not allocate (for example a shared-memory segment of a
   * process boundary) as `host`/`pinnedHost` memory usable in copies, kernels and host views. `free()`
   * drops the handle and never releases the bytes. InvalidArgument for another kind or an empty view.
   * The CUDA backend page-locks a `pinnedHost` adoption with `cudaHostRegister` (NotSupported when CUDA
   * refuses the range) and unregisters it after the work enqueued before `free()`; the owner keeps the
   * bytes mapped until then. Backends without it cannot back tensors with foreign host memory (`@hs/ipc`
   * returns NotSupported).
   * Spec: "Crossing process boundaries: the generation fence".
   */
  adoptHostMemory?(request: HostMemoryAdoption): Result<DeviceMemory>;
  /**
   * Optional: wraps cudaDevice memory this backend did not allocate as a `DeviceMemory` usable in copies,
   * fills and kernels. `free()`/`freeAsync()` drop the handle at once and never release the memory (its
   * allocator does). InvalidArgument for a device the backend does not have, a zero address or a size
   * that is not a positive safe integer; InvalidState once disposed. Backends without device memory of
   * their own (the host backend) do not have it.
   */
  adoptDeviceMemory?(request: DeviceMemoryAdoption): Result<DeviceMemory>;
  /**
   * A view of host-accessible memory (host, pinnedHost, cudaManaged). `NotSupported` for cudaDevice.
   * Reading it is safe only after the writes were synchronized for the host.
   */
  hostView(memory: DeviceMemory): Result<Uint8Array>;

  /** Enqueues a copy of `src.byteLength` bytes; lengths must match. */
  memcpyAsync(stream: Stream, dst: MemoryRange, src: MemoryRange): Result<void>;
  /** Enqueues a fill of `dst` with the byte `value` (0..255). */
  memsetAsync(stream: Stream, dst: MemoryRange, value: number): Result<void>;
  /** Enqueues a copy from a JS buffer into device memory; `src` must stay unchanged until the copy ran. */
  copyFromHostAsync(stream: Stream, dst: MemoryRange, src: Uint8Array): Result<void>;
  /** Enqueues a copy from device memory into a JS buffer; read `dst` only after synchronizing. */
  copyToHostAsync(stream: Stream, dst: Uint8Array, src: MemoryRange): Result<void>;
  /**
   * Enqueues a host callback that runs in stream order: after earlier work and, unless
   * `options.blocking` is false, before later work. Non-blocking suits callbacks that nothing later on the
   * stream depends on (returning a block to a synchronous allocator): the stream never waits for the JS
   * thread, so a JS-thread CUDA call that synchronizes the device cannot deadlock against it.
   */
  launchHostFunc(stream: Stream, fn: () => void, options?: HostFuncOptions): Result<void>;
  /**
   * Enqueues a kernel. Every field of `kernel` (name, ranges, params, host implementation) is captured
   * when the call returns, like CUDA kernel arguments, so a caller may refill one record for each launch
   * instead of allocating a new one per frame.
   */
  launchKernel(stream: Stream, kernel: KernelLaunch): Result<void>;
  /**
   * Declares that the host thread itself reads or writes `range` now, through a host view. The host
   * backend's ordering checker checks the access against the last device write; other backends ignore it.
   */
  noteHostAccess(range: MemoryRange, access: 'read' | 'write'): void;

  /**
   * Optional capability: 64-bit stream memory operations (the generation fence's device-side write and
   * wait). Present on the CUDA backend when the driver has them; the host backend emulates them on its
   * stream queues.
   */
  readonly streamMemoryOps?: StreamMemoryOperations | undefined;
  /** Optional capability: CUDA IPC handles of memory and events. Present on the CUDA backend only. */
  readonly ipc?: IpcHandleOperations | undefined;
  /**
   * Optional capability: stream-ordered copies of cudaDevice memory between devices (peer where the
   * devices allow it, staged through pinned host memory otherwise). Present on both backends (on CUDA
   * with an addon that has the peer-copy bindings).
   */
  readonly peerCopy?: PeerCopyOperations | undefined;
  /**
   * Optional capability: opens another native addon's `hs_memory_resource_v1` table (handed to JavaScript
   * as a Node-API external tagged `HS_MEMORY_RESOURCE_TYPE_TAG`) so its blocks become memory of this
   * backend. Both backends have it; it needs the `@hs/cuda-native` addon, which calls the table (no CUDA
   * device is needed for host tables). Once the table validated, the backend owns its `user` state: if the
   * table's memory kind does not suit the backend, its `destroy` runs before the error returns.
   * Errors: InvalidArgument (not a tagged external, an invalid table: wrong struct_size or version, an
   * unknown device_type, NULL allocate/deallocate, half of the stream-ordered pair, a table already open);
   * NotSupported (the addon is unavailable, naming how to build it; a memory kind or device this backend
   * cannot adopt; cudaManaged tables).
   */
  openNativeMemoryTable?(table: unknown): Result<NativeMemoryTable>;

  /** Destroys every stream, event and allocation this backend still holds. */
  dispose(): void;
}
