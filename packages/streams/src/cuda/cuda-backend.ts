// Over 500 lines: the one CUDA implementation of the Backend contract; its tables live in ./cuda-*.ts and what stays here is argument checks and delegation, one short method per Backend member.
import type {
  AllocationRequest,
  Backend,
  DeviceMemory,
  DeviceMemoryAdoption,
  HostMemoryAdoption,
  HostFuncOptions,
  Event,
  EventOptions,
  KernelLaunch,
  MemoryRange,
  Stream,
  StreamOptions,
} from '../backend.js';
import type { IpcHandleOperations, NativeMemoryTable, PeerCopyOperations, StreamMemoryOperations } from '../backend-capabilities.js';
import { AddonMemoryTable } from '../addon-memory-table.js';
import { deviceProblem, hostAdoptionProblem, validateAllocationRequest } from '../allocation-request.js';
import {
  assertCompletedFitsEvents, assertHostAccessNote, asyncAllocationKindProblem, copyFromHostProblem, copyToHostProblem, createEventProblem, createStreamProblem,
  disposedProblem, hostFuncProblem, hostViewProblem, memcpyProblem, memsetProblem, noMemoryPoolsError, recordEventProblem, streamWaitEventProblem,
} from '../backend-argument-checks.js';
import { Device } from '../device.js';
import { ErrorCode, HsError, OK_VOID, err, ok, type Result } from '../errors.js';
import { eventProblem, memoryProblem, streamProblem } from '../handle-checks.js';
import { CudaCopier } from './cuda-copier.js';
import { CudaErrors } from './cuda-errors.js';
import type { CudaEvent, CudaMemory, CudaStream } from './cuda-handles.js';
import { CudaHostFunctions } from './cuda-host-functions.js';
import { CudaIpcHandles } from './cuda-ipc-handles.js';
import { CudaKernelLauncher } from './cuda-kernel-launcher.js';
import { CudaMemoryTable } from './cuda-memory-table.js';
import { CudaNativeTensors, type NativeTensorSource } from './cuda-native-tensors.js';
import { CudaPeerCopy } from './cuda-peer-copy.js';
import { CudaStreamMemoryOps } from './cuda-stream-memory-ops.js';
import { CudaStreamTable } from './cuda-stream-table.js';
import { HostCallRegistry } from './host-call-registry.js';
import { DEFAULT_HOST_ARRAY_REGISTRATION, HostArrayRegistrations, type HostArrayRegistrationStats } from './host-array-registrations.js';
import { loadCudaBinding, type LoadedCudaAddon } from './load-cuda-binding.js';
import { type CudaBackendOptions, checkCudaBackendOptions } from './cuda-backend-options.js';

export type { CudaBackendOptions } from './cuda-backend-options.js';


/**
 * The Backend contract on real CUDA devices, through `@hs/cuda-native`: non-blocking streams with
 * priorities, timing-disabled events, `cudaMalloc`/pool/pinned/managed memory, async copies and fills,
 * host functions in stream order (run on the JS thread through a thread-safe function), and kernels
 * looked up by name in the addon's registry. Nothing blocks the JS thread: frees that may synchronize the
 * device run on the addon's release thread, and copies from and to JS buffers are staged through pinned
 * memory, except buffers inside this backend's own pinnedHost or cudaManaged memory (its host views),
 * which CUDA copies directly. Spec: "Two stream roles order every device tensor", "Host access: the only blocking calls".
 *
 * The class checks arguments and handles, then delegates to the collaborators that own the state: the
 * stream and event table, the memory table (allocations and release ordering), host functions and
 * waits, the copier, the kernel launcher, native tensor export, and the optional capabilities
 * (`streamMemoryOps`, `ipc`, `openNativeMemoryTable`).
 *
 * Errors are `Result`s: InvalidArgument (bad sizes, devices, ranges, foreign handles, kernel arguments
 * the native kernel refuses), InvalidState (destroyed or freed handles, disposed backend), NotSupported
 * (host view of cudaDevice memory, device work on pageable memory, no memory pools), NotFound (a kernel
 * name with no native implementation), OutOfMemory, DeviceError (any other CUDA failure; a host function
 * that threw, reported by synchronization). The host waits (`synchronizeStream`/`synchronizeEvent`)
 * reject with an `HsError` of these codes instead. Wrong argument types throw `HsError`.
 *
 * @example
 * ```ts
 * import { CudaBackend, HostBackend, MemoryKind, unwrap, type Backend } from '@hs/streams';
 *
 * const cuda = CudaBackend.create();
 * // Without the CUDA addon or a GPU: NotSupported, saying what to do; fall back to the host backend.
 * if (!cuda.ok) console.log(`no CUDA backend (${cuda.error.code}); using the host backend`);
 * const backend: Backend = cuda.ok ? cuda.value : new HostBackend();
 * const device = backend.devices[0];
 * if (device === undefined) throw new Error('no CUDA device visible');
 * const stream = unwrap(backend.createStream(device, { label: 'producer' }));
 * const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 1 << 20 }));
 * unwrap(backend.memsetAsync(stream, { memory, byteOffset: 0, byteLength: memory.byteSize, label: 'zeroed' }, 0));
 * await backend.synchronizeStream(stream);
 * console.log(`${backend.name}: cleared ${memory.byteSize} bytes on ${device}`);
 * backend.dispose();
 * ```
 */
export class CudaBackend implements Backend, Disposable {
  /** Always `cuda`. */
  readonly name = 'cuda' as const;
  /** The visible CUDA devices, `cuda:0` … `cuda:N-1`. */
  readonly devices: readonly Device[];
  /** The CUDA backend has no ordering checker (use compute-sanitizer). */
  readonly orderingChecker = undefined;
  /** 64-bit stream memory operations; undefined when the driver has no entry points for them. */
  readonly streamMemoryOps: StreamMemoryOperations | undefined;
  /** CUDA IPC handles of memory and events (`cudaIpc*Handle`). */
  readonly ipc: IpcHandleOperations;
  /** Copies between devices (peer or staged); undefined with an addon older than abiVersion 2. */
  readonly peerCopy: PeerCopyOperations | undefined;
  private readonly addon: LoadedCudaAddon;
  private readonly streams: CudaStreamTable;
  private readonly memory: CudaMemoryTable;
  private readonly host: CudaHostFunctions;
  private readonly copier: CudaCopier;
  private readonly registrations: HostArrayRegistrations;
  private readonly kernels: CudaKernelLauncher;
  private readonly nativeTensors: CudaNativeTensors;
  private disposed = false;

  private constructor(addon: LoadedCudaAddon, options: CudaBackendOptions) {
    const cuda = addon.binding;
    this.addon = addon;
    this.devices = Object.freeze(Array.from({ length: addon.runtime.deviceCount }, (_, i) => Device.cuda(i)));
    const errors = new CudaErrors(cuda);
    const isDisposed = (): boolean => this.disposed;
    const blocking = (options.hostFunctions ?? process.env['HS_CUDA_HOST_FUNCTIONS'] ?? 'blocking') !== 'queued';
    this.streams = new CudaStreamTable(cuda, errors, this);
    this.memory = new CudaMemoryTable(cuda, errors, this, this.devices, this.streams, {
      releaseThreshold: options.poolReleaseThreshold ?? Number.MAX_SAFE_INTEGER,
      enabled: options.memoryPools !== false,
    });
    this.host = new CudaHostFunctions(cuda, errors, HostCallRegistry.of(cuda), this.devices, blocking, options.onFault, isDisposed);
    const registration = options.hostArrayRegistration;
    this.registrations = new HostArrayRegistrations(
      cuda,
      registration === false ? null : { minBytes: registration?.minBytes ?? DEFAULT_HOST_ARRAY_REGISTRATION.minBytes, copies: registration?.copies ?? DEFAULT_HOST_ARRAY_REGISTRATION.copies },
    );
    this.copier = new CudaCopier(cuda, errors, this.devices, this.memory, this.host, this.registrations);
    this.kernels = new CudaKernelLauncher(cuda, errors, this, this.host, this.copier, isDisposed);
    this.nativeTensors = new CudaNativeTensors(cuda, this, this.streams);
    this.streamMemoryOps = cuda.streamMemoryOpsSupported() ? new CudaStreamMemoryOps(cuda, this) : undefined;
    this.peerCopy = CudaPeerCopy.of(cuda, errors, this);
    this.ipc = new CudaIpcHandles(cuda, {
      owner: this,
      devices: this.devices,
      isDisposed,
      trackImportedMemory: (device, address, byteSize, label) => this.memory.trackImported(device, address, byteSize, label),
      trackImportedEvent: (device, handle, label) => this.streams.trackEvent(device, label, handle, false),
    });
  }

  /**
   * Opens the CUDA backend. NotSupported, saying what to do, when `@hs/cuda-native` is missing or not
   * built, or no device is usable; InvalidArgument for bad options; DeviceError when CUDA refuses.
   */
  static create(options: CudaBackendOptions = {}): Result<CudaBackend> {
    const checked = checkCudaBackendOptions(options);
    if (!checked.ok) return checked;
    const load = loadCudaBinding();
    if (!load.ok) return load;
    try {
      return ok(new CudaBackend(load.value, options));
    } catch (cause) {
      return err(ErrorCode.DeviceError, `CudaBackend: CUDA refused to set up the devices (${(cause as Error).message})`, cause);
    }
  }

  /** True when `@hs/cuda-native` is built and sees at least one device (what auto-detection asks). */
  static available(): boolean {
    return loadCudaBinding().ok;
  }

  // ---- streams and events ----------------------------------------------------------------------

  /** Creates a non-blocking stream; the priority is clamped to the device's range (lower runs first). */
  createStream(device: Device, options: StreamOptions = {}): Result<Stream> {
    const problem = createStreamProblem(this.disposed, this.devices, device, options);
    if (problem !== null) return problem;
    return this.streams.createStream(device, options);
  }

  /** Destroys a stream; work already enqueued still runs and events recorded on it still complete. */
  destroyStream(stream: Stream): Result<void> {
    const problem = streamProblem(this, stream, 'destroyStream');
    if (problem !== null) return problem;
    this.streams.destroyStream(stream as CudaStream);
    return OK_VOID;
  }

  /** Creates a timing-disabled event (never recorded, so complete); `interprocess` adds `cudaEventInterprocess`. */
  createEvent(device: Device, options: EventOptions = {}): Result<Event> {
    const problem = createEventProblem(this.disposed, this.devices, device);
    if (problem !== null) return problem;
    return this.streams.createEvent(device, options.label, options.interprocess === true);
  }

  /** Destroys an event; waits already enqueued on it keep their captured position. */
  destroyEvent(event: Event): Result<void> {
    const problem = eventProblem(this, event, 'destroyEvent');
    if (problem !== null) return problem;
    this.streams.destroyEvent(event as CudaEvent);
    return OK_VOID;
  }

  /** Records `event` on `stream` (`cudaEventRecord`). InvalidArgument when they belong to different devices. */
  recordEvent(event: Event, stream: Stream): Result<void> {
    const problem = recordEventProblem(this, event, stream);
    if (problem !== null) return problem;
    return this.streams.record(event as CudaEvent, stream as CudaStream);
  }

  /**
   * `cudaEventQuery`: true when complete or never recorded. Never waits.
   * @throws HsError InvalidArgument/InvalidState for a foreign or destroyed event; DeviceError when CUDA
   * reports an error (a boolean cannot carry it).
   */
  queryEvent(event: Event): boolean {
    const problem = eventProblem(this, event, 'queryEvent');
    if (problem !== null) throw problem.error;
    return this.streams.query(event as CudaEvent);
  }

  /**
   * Queries all events in one native call. @throws HsError InvalidArgument when `completed` is too short or
   * an event is foreign; InvalidState when one is destroyed; DeviceError when CUDA reports an error.
   */
  queryEvents(events: readonly Event[], completed: Uint8Array, count?: number): number {
    const queried = assertCompletedFitsEvents(events, completed, count);
    for (let i = 0; i < queried; i++) {
      const problem = eventProblem(this, events[i] as Event, 'queryEvents');
      if (problem !== null) throw problem.error;
    }
    return this.streams.queryMany(events, completed, queried);
  }

  /** `cudaStreamWaitEvent`: later work on `stream` waits for the event's current capture. */
  streamWaitEvent(stream: Stream, event: Event): Result<void> {
    const problem = streamWaitEventProblem(this, stream, event);
    if (problem !== null) return problem;
    return this.streams.wait(stream as CudaStream, event as CudaEvent);
  }

  /**
   * Resolves (with nothing) when the event's current capture completes (at once when never recorded),
   * through an internal stream that waits on it. Rejects with an `HsError` as `Backend.synchronizeEvent`
   * says (DeviceError/OutOfMemory too when CUDA refuses the wait); throws InvalidArgument for a non-object.
   */
  synchronizeEvent(event: Event): Promise<void> {
    const problem = eventProblem(this, event, 'synchronizeEvent');
    if (problem !== null) return Promise.reject(problem.error);
    return this.host.waitForEvent(event as CudaEvent);
  }

  /**
   * Resolves (with nothing) when everything enqueued on `stream` so far completes (an event at its end that
   * the addon's completion waiter polls off the JS thread; a host function with an older addon). Rejects with an `HsError` as `Backend.synchronizeStream` says (DeviceError too when CUDA refuses
   * the wait); throws InvalidArgument for a non-object.
   */
  synchronizeStream(stream: Stream): Promise<void> {
    const problem = streamProblem(this, stream, 'synchronizeStream');
    if (problem !== null) return Promise.reject(problem.error);
    return this.host.waitForStream(stream as CudaStream);
  }

  // ---- memory --------------------------------------------------------------------------------

  /**
   * Allocates memory valid on every stream once this returns: cudaDevice with `cudaMalloc`, pinnedHost
   * with `cudaHostAlloc` (mapped), cudaManaged with `cudaMallocManaged`, host as a JS ArrayBuffer.
   * Alignments above 256 bytes over-allocate. Errors as `validateAllocationRequest`, plus OutOfMemory
   * and DeviceError from CUDA.
   */
  allocate(request: AllocationRequest): Result<DeviceMemory> {
    const valid = disposedProblem(this.disposed, 'allocate') ?? validateAllocationRequest(request, this.devices);
    if (!valid.ok) return valid;
    return this.memory.allocate(valid.value, request.label);
  }

  /**
   * Frees memory: refused at once for new use; the release waits for all work enqueued on this backend's
   * streams so far (an internal stream waits on each stream's tail). InvalidState when already freed.
   */
  free(memory: DeviceMemory): Result<void> {
    const problem = memoryProblem(this, memory, 'free', 'the');
    if (problem !== null) return problem;
    this.memory.free(memory as CudaMemory);
    return OK_VOID;
  }

  /**
   * Wraps cudaDevice memory another allocator owns (a native addon's resource table) as memory of this
   * backend; `free()`/`freeAsync()` only retire the handle. InvalidArgument for a device this backend does
   * not have, a zero address or a bad size; InvalidState once disposed.
   */
  adoptDeviceMemory(request: DeviceMemoryAdoption): Result<DeviceMemory> {
    const problem = disposedProblem(this.disposed, 'adoptDeviceMemory') ?? deviceProblem(this.devices, request.device, 'adoptDeviceMemory');
    if (problem !== null) return problem;
    return this.memory.adoptDevice(request);
  }

  /**
   * Wraps host bytes another allocator owns (a POSIX shared-memory mapping of `@hs/ipc`) as memory of this
   * backend on `Device.cpu()`. `pinnedHost` page-locks them with `cudaHostRegister` (portable, mapped), so
   * copies reach them directly and kernels can address them; `free()` unregisters them after the work
   * enqueued on this backend's streams so far, and never frees them (bytes already page-locked by their
   * owner, e.g. cudaHostAlloc'd, are used as they are and left locked). `host` wraps them as pageable memory.
   * The caller keeps the bytes mapped until that work is done (for `@hs/ipc`: until its session ended).
   * InvalidArgument for another kind, a non-Uint8Array or empty view, or an `address` that is not the
   * address of `bytes[0]`; NotSupported when `cudaHostRegister` refuses the range (the CUDA status is named);
   * InvalidState once disposed.
   */
  adoptHostMemory(request: HostMemoryAdoption): Result<DeviceMemory> {
    const problem = disposedProblem(this.disposed, 'adoptHostMemory') ?? hostAdoptionProblem(request);
    if (problem !== null) return problem;
    return this.memory.adoptHost(request);
  }

  /** True when `device` is one of this backend's devices and reports `cudaDevAttrMemoryPoolsSupported`. */
  supportsMemoryPools(device: Device): boolean {
    return this.memory.supportsMemoryPools(device);
  }

  /**
   * `cudaMallocAsync` on `stream` from its device's default pool. InvalidArgument unless cudaDevice on the
   * stream's device; NotSupported without pool support; OutOfMemory/DeviceError from CUDA.
   */
  allocateAsync(request: AllocationRequest, stream: Stream): Result<DeviceMemory> {
    const problem =
      disposedProblem(this.disposed, 'allocateAsync') ??
      streamProblem(this, stream, 'allocateAsync') ??
      (typeof request === 'object' && request !== null ? asyncAllocationKindProblem(request, stream) : null);
    if (problem !== null) return problem;
    const s = stream as CudaStream;
    const valid = validateAllocationRequest(request, this.devices);
    if (!valid.ok) return valid;
    if (!this.memory.supportsMemoryPools(s.device)) return noMemoryPoolsError(s.device);
    return this.memory.allocateAsync(valid.value, request.label, s);
  }

  /**
   * Stream-ordered free on `stream`: `cudaFreeAsync` for pool memory; other kinds are released once the
   * work enqueued on `stream` so far completed. InvalidState when already freed.
   */
  freeAsync(memory: DeviceMemory, stream: Stream): Result<void> {
    const problem = streamProblem(this, stream, 'freeAsync') ?? memoryProblem(this, memory, 'freeAsync', 'the');
    if (problem !== null) return problem;
    this.memory.freeAsync(memory as CudaMemory, stream as CudaStream);
    return OK_VOID;
  }

  /** The host view of host, pinnedHost and cudaManaged memory (the same view every call); NotSupported for cudaDevice. */
  hostView(memory: DeviceMemory): Result<Uint8Array> {
    const problem = hostViewProblem(this, memory);
    if (problem !== null) return problem;
    const m = memory as CudaMemory;
    if (m.view === null) {
      return err(ErrorCode.NotSupported, `hostView: this runtime does not allow external ArrayBuffers, so "${m.label}" has no host view; copy it with copyToHostAsync`);
    }
    return ok(m.view);
  }

  // ---- stream work ---------------------------------------------------------------------------

  /**
   * Enqueues a copy (`cudaMemcpyAsync`, any kinds). Overlapping ranges of one allocation copy through a
   * temporary like memmove; pageable host memory goes through a host function. InvalidArgument when
   * lengths differ.
   */
  memcpyAsync(stream: Stream, dst: MemoryRange, src: MemoryRange): Result<void> {
    const problem = memcpyProblem(this, stream, dst, src);
    if (problem !== null) return problem;
    return this.copier.memcpy(stream as CudaStream, dst, src);
  }

  /** Enqueues `cudaMemsetAsync`. InvalidArgument unless `value` is a byte; NotSupported for pageable memory. */
  memsetAsync(stream: Stream, dst: MemoryRange, value: number): Result<void> {
    const problem = memsetProblem(this, stream, dst, value);
    if (problem !== null) return problem;
    return this.copier.memset(stream as CudaStream, dst, value);
  }

  /**
   * Enqueues a copy from a JS buffer. When `src` is a view into a live pinnedHost or cudaManaged
   * allocation of this backend (its `hostView` or a subarray of it), one `cudaMemcpyAsync` reads it in
   * stream order: keep it unchanged until the copy ran (the Backend contract). Any other buffer is
   * copied into pinned staging memory now (so it may change right after this call), then to `dst` in
   * stream order. InvalidArgument when lengths differ.
   * @throws HsError InvalidArgument when `src` is not a Uint8Array.
   */
  copyFromHostAsync(stream: Stream, dst: MemoryRange, src: Uint8Array): Result<void> {
    const problem = copyFromHostProblem(this, stream, dst, src);
    if (problem !== null) return problem;
    if (src.byteLength === 0) return OK_VOID;
    return this.copier.copyIn(stream as CudaStream, dst, src, null, 'copyFromHostAsync');
  }

  /**
   * Enqueues a copy into a JS buffer; `dst` is filled in stream order (before later work on the stream)
   * and may be read once the stream was synchronized. When `dst` is a view into a live pinnedHost or
   * cudaManaged allocation of this backend (its `hostView` or a subarray of it), that is one
   * `cudaMemcpyAsync` into it; any other buffer is staged through pinned memory and filled on the JS
   * thread. InvalidArgument when lengths differ.
   * @throws HsError InvalidArgument when `dst` is not a Uint8Array.
   */
  copyToHostAsync(stream: Stream, dst: Uint8Array, src: MemoryRange): Result<void> {
    const problem = copyToHostProblem(this, stream, dst, src);
    if (problem !== null) return problem;
    if (dst.byteLength === 0) return OK_VOID;
    return this.copier.copyOut(stream as CudaStream, dst, src, 'copyToHostAsync');
  }

  /**
   * Enqueues `fn` with `cudaLaunchHostFunc`: it runs on the JS thread after earlier work on the stream,
   * and later work waits until it returned (CUDA's callback thread waits for the JS thread). With
   * `hostFunctions: 'queued'` later work does not wait (for tools that serialize the CUDA API, such as
   * compute-sanitizer, where a waiting callback thread deadlocks), nor with `options.blocking: false`.
   * If it throws, the stream records a DeviceError fault.
   * @throws HsError InvalidArgument when `fn` is not a function.
   */
  launchHostFunc(stream: Stream, fn: () => void, options?: HostFuncOptions): Result<void> {
    const problem = hostFuncProblem(this, stream, fn);
    if (problem !== null) return problem;
    return this.host.launchUser(stream as CudaStream, 'launchHostFunc', fn, options?.blocking !== false);
  }

  /**
   * Launches the native kernel registered under `kernel.name` with the launch's ranges and params (the
   * `host` implementation is not used), or, for a registry entry marked host-staged (no device
   * launcher), runs `host` in stream order on pinned copies of the ranges and copies the writes back.
   * NotFound for a name with no native kernel; InvalidArgument when the kernel refuses the ranges or
   * params, or more than 8 reads, writes or params; NotSupported for pageable memory or another device's
   * memory, and for host-staged kernels when host functions are `queued`.
   * @throws HsError InvalidArgument when `kernel` is not a well-formed KernelLaunch.
   */
  launchKernel(stream: Stream, kernel: KernelLaunch): Result<void> {
    return this.kernels.launch(stream, kernel);
  }

  /** Validates the range; the CUDA backend has no ordering checker, so nothing else happens. */
  noteHostAccess(range: MemoryRange, access: 'read' | 'write'): void {
    assertHostAccessNote(this, range, access);
  }

  // ---- capabilities and interop ---------------------------------------------------------------

  /**
   * Opens another native addon's `hs_memory_resource_v1` table: blocks come back as memory of this
   * backend, and the stream-ordered pair (when the table has it) runs on the streams' `cudaStream_t`.
   * Errors as `Backend.openNativeMemoryTable`.
   */
  openNativeMemoryTable(table: unknown): Result<NativeMemoryTable> {
    const problem = disposedProblem(this.disposed, 'openNativeMemoryTable');
    if (problem !== null) return problem;
    return AddonMemoryTable.open(this.addon, this, table, (stream) => streamProblem(this, stream, 'the native table') ?? ok((stream as CudaStream).handle));
  }

  /** The native `cudaStream_t` of a stream of this backend (for tests and interop through `@hs/cuda-native`). */
  nativeStream(stream: Stream): bigint {
    const problem = streamProblem(this, stream, 'nativeStream');
    if (problem !== null) throw problem.error;
    return (stream as CudaStream).handle;
  }

  /** The native `cudaEvent_t` of an event of this backend. */
  nativeEvent(event: Event): bigint {
    const problem = eventProblem(this, event, 'nativeEvent');
    if (problem !== null) throw problem.error;
    return (event as CudaEvent).handle;
  }

  /**
   * Hands a tensor to a downstream native addon through the C ABI (`native/include/hs/hs.h`): builds an
   * `hs_tensor_v1` record whose DLPack `DLManagedTensorVersioned` describes `tensor` (read-only flag set
   * when `tensor.readOnly`), with its readiness event and `stream` as the stream to work on. Returns the
   * record's address for the addon; free it with `releaseNativeTensor`. InvalidArgument/InvalidState
   * for foreign or destroyed handles or freed memory.
   */
  exportNativeTensor(tensor: NativeTensorSource, stream: Stream): Result<bigint> {
    return this.nativeTensors.export(tensor, stream);
  }

  /**
   * The stream a native addon named as the record's readiness stream (`hs_tensor_set_readiness_stream`),
   * if it is a live stream of this backend; null otherwise.
   */
  nativeTensorReadinessStream(record: bigint): Stream | null {
    return this.nativeTensors.readinessStream(record);
  }

  /** Frees a record made by `exportNativeTensor` (after the addon is done with it). */
  releaseNativeTensor(record: bigint): void {
    this.nativeTensors.release(record);
  }

  // ---- lifetime -------------------------------------------------------------------------------

  /**
   * Rejects pending synchronizations with InvalidState, skips host functions not yet run, frees every
   * allocation after the work already enqueued, destroys every stream and event. Idempotent.
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.host.settlePendingWaits();
    this.copier.dispose(this.memory.releaseAll());
    this.streams.dispose();
    this.host.dispose();
    this.memory.dispose();
  }

  /**
   * Ends the page-locking of `bytes`'s buffer (see `CudaBackendOptions.hostArrayRegistration`) after the work
   * enqueued so far on every stream, so copies in flight into it still land; later copies into it are staged
   * until it is registered again. Returns false when the buffer is not registered; InvalidState after `dispose()`.
   * @throws HsError InvalidArgument when `bytes` is not a Uint8Array.
   * @example
   * ```ts
   * const frame = new Uint8Array(64 << 20);
   * for (let i = 0; i < 100; i++) await tensor.copyToHost(frame, stream); // from the 2nd copy on: straight into `frame`
   * console.log(backend.hostArrayRegistrations()); // { arrays: 1, bytes: 67108864, registerNs: ..., refused: 0 }
   * unwrap(backend.releaseHostArray(frame)); // true: unregistered once the copies above ran
   * ```
   */
  releaseHostArray(bytes: Uint8Array): Result<boolean> {
    if (!(bytes instanceof Uint8Array)) throw new HsError(ErrorCode.InvalidArgument, 'releaseHostArray: bytes must be a Uint8Array');
    if (this.disposed) return err(ErrorCode.InvalidState, 'releaseHostArray: the backend is disposed');
    return ok(this.registrations.release(bytes, (address) => this.memory.unregisterAfterAllWork(address)));
  }

  /** The JS arrays page-locked for device-to-host copies now, their bytes, the time spent registering them, and the refusals. */
  hostArrayRegistrations(): HostArrayRegistrationStats {
    return this.registrations.stats();
  }

  /** Same as `dispose()`, for `using`. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}
