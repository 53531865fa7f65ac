import type { CudaNativeBinding } from '@hs/cuda-native';
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
import type { IpcHandleOperations, NativeMemoryTable, StreamMemoryOperations } from '../backend-capabilities.js';
import { AddonMemoryTable } from '../addon-memory-table.js';
import { deviceProblem, hostAdoptionProblem, validateAllocationRequest } from '../allocation-request.js';
import {
  assertCompletedFitsEvents, assertHostAccessNote, asyncAllocationKindProblem, copyFromHostProblem, copyToHostProblem, createEventProblem, createStreamProblem,
  disposedProblem, hostFuncProblem, hostViewProblem, kernelRangesProblem, memcpyProblem, memsetProblem, noMemoryPoolsError, recordEventProblem, streamWaitEventProblem,
} from '../backend-argument-checks.js';
import { Device } from '../device.js';
import { ErrorCode, HsError, OK_VOID, err, ok, type Err, type Result } from '../errors.js';
import { eventProblem, memoryProblem, streamProblem } from '../handle-checks.js';
import { assertKernelShape } from '../kernel-launch-checks.js';
import { MemoryKind } from '../memory-kind.js';
import { CudaAllocationOrigin, CudaEvent, CudaMemory, CudaStream } from './cuda-handles.js';
import { CudaIpcHandles } from './cuda-ipc-handles.js';
import { CudaStreamMemoryOps } from './cuda-stream-memory-ops.js';
import { HostCallRegistry } from './host-call-registry.js';
import { loadCudaBinding } from './load-cuda-binding.js';
import { PinnedStaging, type StagingBlock } from './pinned-staging.js';

/**
 * What `CudaBackend.exportNativeTensor` reads from a tensor (a `Tensor` of `@hs/tensor` fits): its
 * allocation, layout in elements and bytes, element type as DLPack code/bits/lanes, read-only state
 * and readiness event.
 */
export interface NativeTensorSource {
  /** The allocation holding the elements; a live allocation of this backend. */
  readonly memory: DeviceMemory;
  /** Bytes from the start of `memory` to the first element. */
  readonly byteOffset: number;
  /** Extent per dimension, in elements (DLPack `shape`). */
  readonly shape: readonly number[];
  /** Elements between neighbours per dimension. */
  readonly strides: readonly number[];
  /** Element type, as DLPack describes it. */
  readonly dtype: {
    /** DLPack `DLDataTypeCode` (0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool). */
    readonly code: number;
    /** Bits per lane (8, 16, 32, 64). */
    readonly bits: number;
    /** Lanes per element; 1 for scalars. */
    readonly lanes: number;
  };
  /** True when consumers must not write (sets `DLPACK_FLAG_BITMASK_READ_ONLY` in the native tensor). */
  readonly readOnly: boolean;
  /** Event to wait on before reading; null when there is nothing to wait for. */
  readonly readinessEvent: Event | null;
}

/** Options for `CudaBackend.create`. */
export interface CudaBackendOptions {
  /**
   * Bytes each device's default memory pool keeps cached after frees instead of returning them to the
   * driver (`cudaMemPoolAttrReleaseThreshold`); default: keep everything (fast `allocateAsync` reuse).
   */
  readonly poolReleaseThreshold?: number;
  /** Called when a host function throws; the error (DeviceError) is also returned by later synchronizations of its stream. */
  readonly onFault?: (error: HsError, stream: Stream) => void;
  /**
   * `blocking` (default): later work on a stream waits until a host function returned (the Backend
   * contract). `queued`: host functions still run in stream order after earlier work, but later work does
   * not wait for them; only for tools that serialize the CUDA API (compute-sanitizer), where a waiting
   * callback thread deadlocks. Default from `HS_CUDA_HOST_FUNCTIONS`.
   */
  readonly hostFunctions?: 'blocking' | 'queued';
}

const NOT_READY = 600;
const INVALID_VALUE = 1;
const MEMORY_ALLOCATION = 2;
/** Alignment CUDA's allocators guarantee, bytes. */
const CUDA_ALIGNMENT = 256;
/** Most ranges (reads or writes) and params a native kernel takes. */
const MAX_KERNEL_ARGS = 8;

/**
 * The Backend contract on real CUDA devices, through `@hs/cuda-native`: non-blocking streams with
 * priorities, timing-disabled events, `cudaMalloc`/pool/pinned/managed memory, async copies and fills,
 * host functions in stream order (run on the JS thread through a thread-safe function), and kernels
 * looked up by name in the addon's registry. Nothing blocks the JS thread: frees that may synchronize the
 * device run on the addon's release thread, and copies from and to JS buffers are staged through pinned
 * memory, except buffers inside this backend's own pinnedHost or cudaManaged memory (its host views),
 * which CUDA copies directly. Spec: "Two stream roles order every device tensor", "Host access: the only blocking calls".
 *
 * Errors are `Result`s: InvalidArgument (bad sizes, devices, ranges, foreign handles, kernel arguments
 * the native kernel refuses), InvalidState (destroyed or freed handles, disposed backend), NotSupported
 * (host view of cudaDevice memory, device work on pageable memory, no memory pools), NotFound (a kernel
 * name with no native implementation), OutOfMemory, DeviceError (any other CUDA failure; a host function
 * that threw, reported by synchronization). Wrong argument types throw `HsError`.
 *
 * @example
 * ```ts
 * const backend = unwrap(CudaBackend.create());
 * const stream = unwrap(backend.createStream(backend.devices[0]!, { label: 'producer' }));
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
  private readonly cuda: CudaNativeBinding;
  private readonly hostCalls: HostCallRegistry;
  private readonly onFault: ((error: HsError, stream: Stream) => void) | undefined;
  private readonly blockingHostFunctions: boolean;
  private readonly kernelIndex = new Map<string, number>();
  /** Registry names of host-staged kernels (no device launcher; see `launchHostStaged`). */
  private readonly hostStagedKernels = new Set<string>();
  private readonly poolsSupported: boolean[];
  private readonly streams = new Set<CudaStream>();
  /** Tail events of destroyed streams whose work may still run (freed lazily). */
  private readonly retiredTails: bigint[] = [];
  private readonly events = new Set<CudaEvent>();
  private readonly allocations = new Set<CudaMemory>();
  /**
   * Live pinnedHost and cudaManaged allocations by the ArrayBuffer of their host view (which starts at
   * `base`): a JS buffer lying in one is copied to or from directly, without staging.
   */
  private readonly hostAccessibleBuffers = new WeakMap<ArrayBuffer, CudaMemory>();
  private readonly pendingWaits = new Set<(result: Result<void>) => void>();
  /** Per device: an internal stream that orders frees after all other streams' work. */
  private readonly releaseStreams: bigint[];
  /** Per device: idle internal streams used by `synchronizeEvent`. */
  private readonly idleSyncStreams: bigint[][];
  /** Per device: pinned staging blocks (their events belong to that device). */
  private readonly staging: PinnedStaging[];
  private readonly kernelAddresses = new BigUint64Array(2 * MAX_KERNEL_ARGS);
  private readonly kernelLengths = new Float64Array(2 * MAX_KERNEL_ARGS);
  private readonly kernelParams = new Float64Array(MAX_KERNEL_ARGS);
  private queryScratch = new BigUint64Array(64);
  private nextStreamId = 1;
  private nextEventId = 1;
  private nextMemoryId = 1;
  private disposed = false;

  private constructor(cuda: CudaNativeBinding, deviceCount: number, options: CudaBackendOptions) {
    this.cuda = cuda;
    this.hostCalls = HostCallRegistry.of(cuda);
    this.onFault = options.onFault;
    this.blockingHostFunctions = (options.hostFunctions ?? process.env['HS_CUDA_HOST_FUNCTIONS'] ?? 'blocking') !== 'queued';
    this.devices = Object.freeze(Array.from({ length: deviceCount }, (_, i) => Device.cuda(i)));
    const staged = cuda.kernelHostStaged();
    cuda.kernelNames().forEach((name, i) => {
      this.kernelIndex.set(name, i);
      if (staged[i] === true) this.hostStagedKernels.add(name);
    });
    this.poolsSupported = this.devices.map((d) => cuda.deviceProperties(d.id).memoryPoolsSupported);
    const threshold = options.poolReleaseThreshold ?? Number.MAX_SAFE_INTEGER;
    this.releaseStreams = this.devices.map((d) => {
      if (this.poolsSupported[d.id]) cuda.setPoolReleaseThreshold(d.id, threshold);
      return cuda.streamCreate(d.id, 0);
    });
    this.idleSyncStreams = this.devices.map(() => []);
    this.staging = this.devices.map((d) => new PinnedStaging(cuda, d.id));
    this.streamMemoryOps = cuda.streamMemoryOpsSupported() ? new CudaStreamMemoryOps(cuda, this) : undefined;
    this.ipc = new CudaIpcHandles(cuda, {
      owner: this,
      devices: this.devices,
      isDisposed: () => this.disposed,
      trackImportedMemory: (device, address, byteSize, label) =>
        this.track(device, MemoryKind.CudaDevice, address, byteSize, label, CudaAllocationOrigin.IpcImported, address, null, null),
      trackImportedEvent: (device, handle, label) => this.trackEvent(device, label, handle, false),
    });
  }

  /**
   * Opens the CUDA backend. NotSupported, saying what to do, when `@hs/cuda-native` is missing or not
   * built, or no device is usable; InvalidArgument for bad options; DeviceError when CUDA refuses.
   */
  static create(options: CudaBackendOptions = {}): Result<CudaBackend> {
    const { poolReleaseThreshold, onFault } = options;
    if (poolReleaseThreshold !== undefined && (!Number.isSafeInteger(poolReleaseThreshold) || poolReleaseThreshold < 0)) {
      return err(ErrorCode.InvalidArgument, `CudaBackend: poolReleaseThreshold must be a non-negative integer number of bytes, got ${String(poolReleaseThreshold)}`);
    }
    if (onFault !== undefined && typeof onFault !== 'function') return err(ErrorCode.InvalidArgument, 'CudaBackend: onFault must be a function');
    const hostFunctions = options.hostFunctions;
    if (hostFunctions !== undefined && hostFunctions !== 'blocking' && hostFunctions !== 'queued') {
      return err(ErrorCode.InvalidArgument, `CudaBackend: hostFunctions must be 'blocking' or 'queued', got ${String(hostFunctions)}`);
    }
    const load = loadCudaBinding();
    if (!load.ok) return load;
    try {
      return ok(new CudaBackend(load.value.binding, load.value.runtime.deviceCount, options));
    } catch (cause) {
      return err(ErrorCode.DeviceError, `CudaBackend: CUDA refused to set up the devices (${(cause as Error).message})`, cause);
    }
  }

  /** True when `@hs/cuda-native` is built and sees at least one device (what auto-detection asks). */
  static available(): boolean {
    return loadCudaBinding().ok;
  }

  // ---- streams -------------------------------------------------------------------------------

  /** Creates a non-blocking stream; the priority is clamped to the device's range (lower runs first). */
  createStream(device: Device, options: StreamOptions = {}): Result<Stream> {
    const problem = createStreamProblem(this.disposed, this.devices, device, options);
    if (problem !== null) return problem;
    const priority = options.priority ?? 0;
    let handle: bigint;
    let clamped: number;
    try {
      handle = this.cuda.streamCreate(device.id, priority);
      clamped = this.cuda.streamPriority(handle);
    } catch (cause) {
      return this.failure('createStream', cause);
    }
    const id = this.nextStreamId++;
    const stream = new CudaStream(this, id, device, options.label ?? `stream ${id}`, clamped, handle);
    this.streams.add(stream);
    return ok(stream);
  }

  /** Destroys a stream; work already enqueued still runs and events recorded on it still complete. */
  destroyStream(stream: Stream): Result<void> {
    const problem = streamProblem(this, stream, 'destroyStream');
    if (problem !== null) return problem;
    const s = stream as CudaStream;
    const tail = this.recordTail(s);
    if (tail !== 0n) this.retiredTails.push(tail);
    s.tailEvent = 0n;
    s.destroyed = true;
    this.streams.delete(s);
    this.cuda.streamDestroy(s.handle);
    return OK_VOID;
  }

  // ---- events --------------------------------------------------------------------------------

  /** Creates a timing-disabled event (never recorded, so complete); `interprocess` adds `cudaEventInterprocess`. */
  createEvent(device: Device, options: EventOptions = {}): Result<Event> {
    const problem = createEventProblem(this.disposed, this.devices, device);
    if (problem !== null) return problem;
    const interprocess = options.interprocess === true;
    let handle: bigint;
    try {
      handle = this.cuda.eventCreate(device.id, interprocess);
    } catch (cause) {
      return this.failure('createEvent', cause);
    }
    return ok(this.trackEvent(device, options.label, handle, interprocess));
  }

  /** Destroys an event; waits already enqueued on it keep their captured position. */
  destroyEvent(event: Event): Result<void> {
    const problem = eventProblem(this, event, 'destroyEvent');
    if (problem !== null) return problem;
    const e = event as CudaEvent;
    e.destroyed = true;
    this.events.delete(e);
    this.cuda.eventDestroy(e.handle);
    return OK_VOID;
  }

  /** Records `event` on `stream` (`cudaEventRecord`). InvalidArgument when they belong to different devices. */
  recordEvent(event: Event, stream: Stream): Result<void> {
    const problem = recordEventProblem(this, event, stream);
    if (problem !== null) return problem;
    const e = event as CudaEvent;
    const s = stream as CudaStream;
    const status = this.cuda.eventRecord(e.handle, s.handle);
    if (status !== 0) return this.statusError('recordEvent', status);
    e.recordedOn = s;
    return OK_VOID;
  }

  /**
   * `cudaEventQuery`: true when complete or never recorded. Never waits.
   * @throws HsError InvalidArgument/InvalidState for a foreign or destroyed event; DeviceError when CUDA
   * reports an error (a boolean cannot carry it).
   */
  queryEvent(event: Event): boolean {
    const problem = eventProblem(this, event, 'queryEvent');
    if (problem !== null) throw problem.error;
    const status = this.cuda.eventQuery((event as CudaEvent).handle);
    if (status === 0) return true;
    if (status === NOT_READY) return false;
    throw this.statusError('queryEvent', status).error;
  }

  /**
   * Queries all events in one native call. @throws HsError InvalidArgument when `completed` is too short or
   * an event is foreign; InvalidState when one is destroyed; DeviceError when CUDA reports an error.
   */
  queryEvents(events: readonly Event[], completed: Uint8Array): number {
    assertCompletedFitsEvents(events, completed);
    if (this.queryScratch.length < events.length) this.queryScratch = new BigUint64Array(2 ** Math.ceil(Math.log2(events.length)));
    const handles = this.queryScratch;
    for (let i = 0; i < events.length; i++) {
      const e = events[i] as CudaEvent;
      const problem = eventProblem(this, e, 'queryEvents');
      if (problem !== null) throw problem.error;
      handles[i] = e.handle;
    }
    const n = this.cuda.eventQueryMany(handles, events.length, completed);
    if (n < 0) throw this.statusError('queryEvents', -n).error;
    return n;
  }

  /** `cudaStreamWaitEvent`: later work on `stream` waits for the event's current capture. */
  streamWaitEvent(stream: Stream, event: Event): Result<void> {
    const problem = streamWaitEventProblem(this, stream, event);
    if (problem !== null) return problem;
    const status = this.cuda.streamWaitEvent((stream as CudaStream).handle, (event as CudaEvent).handle);
    return status === 0 ? OK_VOID : this.statusError('streamWaitEvent', status);
  }

  /**
   * Resolves when the event's current capture completes (at once when never recorded), through an
   * internal stream that waits on it; with the recording stream's DeviceError when a host function
   * threw; with InvalidState when the backend is disposed first.
   */
  synchronizeEvent(event: Event): Promise<Result<void>> {
    const problem = eventProblem(this, event, 'synchronizeEvent');
    if (problem !== null) return Promise.resolve(problem);
    const e = event as CudaEvent;
    const recordedOn = e.recordedOn;
    if (recordedOn === null) return Promise.resolve(OK_VOID);
    const idle = this.idleSyncStreams[e.device.id] as bigint[];
    let waiter: bigint;
    try {
      waiter = idle.pop() ?? this.cuda.streamCreate(e.device.id, 0);
    } catch (cause) {
      return Promise.resolve(this.failure('synchronizeEvent', cause));
    }
    const status = this.cuda.streamWaitEvent(waiter, e.handle);
    if (status !== 0) {
      idle.push(waiter);
      return Promise.resolve(this.statusError('synchronizeEvent', status));
    }
    return this.waitOn(waiter, 'synchronizeEvent', () => {
      if (!this.disposed) idle.push(waiter);
      else this.cuda.streamDestroy(waiter);
      return recordedOn.fault;
    });
  }

  /** Resolves when everything enqueued on `stream` so far completes (a host function at its end). */
  synchronizeStream(stream: Stream): Promise<Result<void>> {
    const problem = streamProblem(this, stream, 'synchronizeStream');
    if (problem !== null) return Promise.resolve(problem);
    const s = stream as CudaStream;
    return this.waitOn(s.handle, 'synchronizeStream', () => s.fault);
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
    const { kind, device, byteSize, alignment } = valid.value;
    const padded = byteSize + (alignment > CUDA_ALIGNMENT ? alignment : 0);
    const label = request.label ?? `${kind} allocation ${this.nextMemoryId}`;
    if (kind === MemoryKind.Host) {
      let buffer: ArrayBuffer;
      try {
        buffer = new ArrayBuffer(byteSize + alignment);
      } catch (cause) {
        return err(ErrorCode.OutOfMemory, `allocate: the JS heap refused ${byteSize} bytes of host memory`, cause);
      }
      const start = this.cuda.addressOf(buffer);
      const skip = Number(alignUp(start, alignment) - start);
      return ok(this.track(device, kind, start + BigInt(skip), byteSize, label, CudaAllocationOrigin.JsHeap, start, buffer, new Uint8Array(buffer, skip, byteSize)));
    }
    let base: bigint;
    let origin: CudaAllocationOrigin;
    try {
      if (kind === MemoryKind.CudaDevice) {
        base = this.cuda.malloc(device.id, padded);
        origin = CudaAllocationOrigin.Malloc;
      } else if (kind === MemoryKind.PinnedHost) {
        base = this.cuda.mallocHost(padded);
        origin = CudaAllocationOrigin.PinnedHost;
      } else {
        base = this.cuda.mallocManaged(device.id, padded);
        origin = CudaAllocationOrigin.Managed;
      }
    } catch (cause) {
      return this.failure('allocate', cause);
    }
    const address = alignUp(base, alignment);
    let buffer: ArrayBuffer | null = null;
    let view: Uint8Array | null = null;
    if (kind !== MemoryKind.CudaDevice) {
      try {
        buffer = this.cuda.externalArrayBuffer(base, padded);
        view = new Uint8Array(buffer, Number(address - base), byteSize);
      } catch {
        // Runtimes without external buffers: the memory works for device work; hostView says NotSupported.
      }
    }
    const memory = this.track(device, kind, address, byteSize, label, origin, base, buffer, view);
    if (buffer !== null) this.hostAccessibleBuffers.set(buffer, memory);
    return ok(memory);
  }

  /**
   * Frees memory: refused at once for new use; the release waits for all work enqueued on this backend's
   * streams so far (an internal stream waits on each stream's tail). InvalidState when already freed.
   */
  free(memory: DeviceMemory): Result<void> {
    const problem = memoryProblem(this, memory, 'free', 'the');
    if (problem !== null) return problem;
    const m = memory as CudaMemory;
    this.forget(m);
    if (m.origin === CudaAllocationOrigin.Adopted) return OK_VOID;
    const device = m.device.isCuda ? m.device.id : 0;
    const release = this.releaseStreams[device] as bigint;
    this.fenceAllStreams(release);
    this.releaseAfter(m, release, device);
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
    const { address, byteSize } = request;
    if (typeof address !== 'bigint' || address <= 0n) {
      return err(ErrorCode.InvalidArgument, `adoptDeviceMemory: address must be a non-zero bigint device pointer, got ${String(address)}`);
    }
    if (!Number.isSafeInteger(byteSize) || byteSize <= 0) {
      return err(ErrorCode.InvalidArgument, `adoptDeviceMemory: byteSize must be a positive integer number of bytes, got ${String(byteSize)}`);
    }
    const label = request.label ?? `adopted cudaDevice memory ${this.nextMemoryId}`;
    return ok(this.track(request.device, MemoryKind.CudaDevice, address, byteSize, label, CudaAllocationOrigin.Adopted, address, null, null));
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
    const { bytes, kind } = request;
    const address = this.cuda.addressOf(bytes);
    if (request.address !== address) {
      return err(ErrorCode.InvalidArgument, `adoptHostMemory: address ${String(request.address)} is not the address of bytes[0] (${address}); pass the mapping's own address`);
    }
    const label = request.label ?? `adopted ${kind} memory ${this.nextMemoryId}`;
    const buffer = bytes.buffer as ArrayBuffer;
    if (kind === MemoryKind.Host) {
      return ok(this.track(Device.cpu(), kind, address, bytes.byteLength, label, CudaAllocationOrigin.Adopted, address, buffer, bytes));
    }
    // Memory its owner page-locked already (cudaHostAlloc, a native resource table) stays theirs to unlock.
    const lockedByOwner = this.cuda.isPinnedHost(address);
    const status = lockedByOwner ? 0 : this.cuda.hostRegister(address, bytes.byteLength);
    if (status !== 0) {
      return err(ErrorCode.NotSupported, `adoptHostMemory: cudaHostRegister refused ${bytes.byteLength} bytes at ${address} (${this.cuda.errorName(status)}); adopt it as host memory instead`);
    }
    const origin = lockedByOwner ? CudaAllocationOrigin.Adopted : CudaAllocationOrigin.Registered;
    const memory = this.track(Device.cpu(), kind, address, bytes.byteLength, label, origin, address, buffer, bytes);
    // Direct copies find pinned memory by its ArrayBuffer; only a view spanning its whole buffer qualifies,
    // and a buffer this backend already maps (its own pinned allocation, adopted again) keeps its entry.
    if (bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength && !this.hostAccessibleBuffers.has(buffer)) {
      this.hostAccessibleBuffers.set(buffer, memory);
    }
    return ok(memory);
  }

  /** True when `device` is one of this backend's devices and reports `cudaDevAttrMemoryPoolsSupported`. */
  supportsMemoryPools(device: Device): boolean {
    const i = this.devices.indexOf(device);
    return i >= 0 && this.poolsSupported[i] === true;
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
    if (!this.supportsMemoryPools(s.device)) return noMemoryPoolsError(s.device);
    const { byteSize, alignment } = valid.value;
    let base: bigint;
    try {
      base = this.cuda.mallocAsync(byteSize + (alignment > CUDA_ALIGNMENT ? alignment : 0), s.handle);
    } catch (cause) {
      return this.failure('allocateAsync', cause);
    }
    const label = request.label ?? `cudaDevice pool allocation ${this.nextMemoryId}`;
    return ok(this.track(s.device, MemoryKind.CudaDevice, alignUp(base, alignment), byteSize, label, CudaAllocationOrigin.PoolAsync, base, null, null));
  }

  /**
   * Stream-ordered free on `stream`: `cudaFreeAsync` for pool memory; other kinds are released once the
   * work enqueued on `stream` so far completed. InvalidState when already freed.
   */
  freeAsync(memory: DeviceMemory, stream: Stream): Result<void> {
    const problem = streamProblem(this, stream, 'freeAsync') ?? memoryProblem(this, memory, 'freeAsync', 'the');
    if (problem !== null) return problem;
    const m = memory as CudaMemory;
    this.forget(m);
    this.releaseAfter(m, (stream as CudaStream).handle, stream.device.id);
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
    const s = stream as CudaStream;
    const d = dst.memory as CudaMemory;
    const sm = src.memory as CudaMemory;
    const n = dst.byteLength;
    if (n === 0) return OK_VOID;
    if (d.kind === MemoryKind.Host && sm.kind === MemoryKind.Host) {
      const from = sm.view as Uint8Array;
      const to = d.view as Uint8Array;
      return this.enqueueHostCopy(s, 'memcpyAsync', () => to.set(from.slice(src.byteOffset, src.byteOffset + n), dst.byteOffset));
    }
    if (sm.kind === MemoryKind.Host) return this.copyIn(s, dst, null, src, 'memcpyAsync');
    if (d.kind === MemoryKind.Host) return this.copyOut(s, (d.view as Uint8Array).subarray(dst.byteOffset, dst.byteOffset + n), src, 'memcpyAsync');
    const dstAddress = d.address + BigInt(dst.byteOffset);
    const srcAddress = sm.address + BigInt(src.byteOffset);
    if (d === sm && dst.byteOffset < src.byteOffset + n && src.byteOffset < dst.byteOffset + n && dst.byteOffset !== src.byteOffset) {
      return this.overlappingCopy(s, dstAddress, srcAddress, n);
    }
    const status = this.cuda.memcpyAsync(dstAddress, srcAddress, n, s.handle);
    return status === 0 ? OK_VOID : this.statusError('memcpyAsync', status);
  }

  /** Enqueues `cudaMemsetAsync`. InvalidArgument unless `value` is a byte; NotSupported for pageable memory. */
  memsetAsync(stream: Stream, dst: MemoryRange, value: number): Result<void> {
    const problem = memsetProblem(this, stream, dst, value);
    if (problem !== null) return problem;
    const s = stream as CudaStream;
    if (dst.byteLength === 0) return OK_VOID;
    const status = this.cuda.memsetAsync((dst.memory as CudaMemory).address + BigInt(dst.byteOffset), value, dst.byteLength, s.handle);
    return status === 0 ? OK_VOID : this.statusError('memsetAsync', status);
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
    return this.copyIn(stream as CudaStream, dst, src, null, 'copyFromHostAsync');
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
    return this.copyOut(stream as CudaStream, dst, src, 'copyToHostAsync');
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
    const s = stream as CudaStream;
    return this.launchGated(
      s,
      'launchHostFunc',
      () => {
        if (this.disposed) return;
        try {
          fn();
        } catch (cause) {
          this.recordFault(s, cause);
        }
      },
      options?.blocking !== false,
    );
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
    assertKernelShape(kernel);
    const problem = streamProblem(this, stream, 'launchKernel');
    if (problem !== null) return problem;
    const s = stream as CudaStream;
    const { reads, writes, params } = kernel;
    if (reads.length > MAX_KERNEL_ARGS || writes.length > MAX_KERNEL_ARGS || params.length > MAX_KERNEL_ARGS) {
      return err(ErrorCode.InvalidArgument, `launchKernel: ${kernel.name} has more than ${MAX_KERNEL_ARGS} reads, writes or params, which native kernels do not take`);
    }
    const ranges = kernelRangesProblem(this, s, kernel);
    if (ranges !== null) return ranges;
    const addresses = this.kernelAddresses;
    const lengths = this.kernelLengths;
    for (let i = 0; i < reads.length; i++) {
      const r = reads[i] as MemoryRange;
      addresses[i] = (r.memory as CudaMemory).address + BigInt(r.byteOffset);
      lengths[i] = r.byteLength;
    }
    for (let i = 0; i < writes.length; i++) {
      const w = writes[i] as MemoryRange;
      addresses[reads.length + i] = (w.memory as CudaMemory).address + BigInt(w.byteOffset);
      lengths[reads.length + i] = w.byteLength;
    }
    const index = this.kernelIndex.get(kernel.name);
    if (index === undefined) {
      return err(
        ErrorCode.NotFound,
        `launchKernel: no CUDA kernel is registered as "${kernel.name}" (registered: ${[...this.kernelIndex.keys()].join(', ')}); add it to native/ or run on the host backend`,
      );
    }
    if (this.hostStagedKernels.has(kernel.name)) return this.launchHostStaged(s, kernel);
    for (let i = 0; i < params.length; i++) this.kernelParams[i] = params[i] as number;
    const status = this.cuda.launchKernel(index, s.handle, addresses, lengths, reads.length, writes.length, this.kernelParams, params.length);
    if (status === 0) return OK_VOID;
    if (status === INVALID_VALUE) {
      return err(ErrorCode.InvalidArgument, `launchKernel: ${kernel.name} refused its arguments (${reads.length} reads, ${writes.length} writes, params [${params.join(', ')}]); check the launch builder's contract`);
    }
    return this.statusError(`launchKernel(${kernel.name})`, status);
  }

  /** Validates the range; the CUDA backend has no ordering checker, so nothing else happens. */
  noteHostAccess(range: MemoryRange, access: 'read' | 'write'): void {
    assertHostAccessNote(this, range, access);
  }

  /**
   * Opens another native addon's `hs_memory_resource_v1` table: blocks come back as memory of this
   * backend, and the stream-ordered pair (when the table has it) runs on the streams' `cudaStream_t`.
   * Errors as `Backend.openNativeMemoryTable`.
   */
  openNativeMemoryTable(table: unknown): Result<NativeMemoryTable> {
    const problem = disposedProblem(this.disposed, 'openNativeMemoryTable');
    if (problem !== null) return problem;
    return AddonMemoryTable.open(this.cuda, this, table, (stream) => {
      const foreign = streamProblem(this, stream, 'the native table');
      return foreign ?? ok((stream as CudaStream).handle);
    });
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
    const problem =
      streamProblem(this, stream, 'exportNativeTensor') ??
      memoryProblem(this, tensor.memory, 'exportNativeTensor', 'the tensor') ??
      (tensor.readinessEvent === null ? null : eventProblem(this, tensor.readinessEvent, 'exportNativeTensor'));
    if (problem !== null) return problem;
    const m = tensor.memory as CudaMemory;
    const deviceType = { [MemoryKind.CudaDevice]: 2, [MemoryKind.PinnedHost]: 3, [MemoryKind.CudaManaged]: 13, [MemoryKind.Host]: 1 }[m.kind];
    try {
      return ok(
        this.cuda.exportTensorV1({
          address: m.address,
          byteOffset: tensor.byteOffset,
          shape: tensor.shape,
          strides: tensor.strides,
          dtypeCode: tensor.dtype.code,
          dtypeBits: tensor.dtype.bits,
          dtypeLanes: tensor.dtype.lanes,
          deviceType,
          deviceId: m.device.id,
          readOnly: tensor.readOnly,
          readinessEvent: tensor.readinessEvent === null ? 0n : (tensor.readinessEvent as CudaEvent).handle,
          stream: (stream as CudaStream).handle,
        }),
      );
    } catch (cause) {
      return err(ErrorCode.InvalidArgument, `exportNativeTensor: ${(cause as Error).message}`, cause);
    }
  }

  /**
   * The stream a native addon named as the record's readiness stream (`hs_tensor_set_readiness_stream`),
   * if it is a live stream of this backend; null otherwise.
   */
  nativeTensorReadinessStream(record: bigint): Stream | null {
    const handle = this.cuda.tensorV1ReadinessStream(record);
    for (const s of this.streams) if (s.handle === handle) return s;
    return null;
  }

  /** Frees a record made by `exportNativeTensor` (after the addon is done with it). */
  releaseNativeTensor(record: bigint): void {
    this.cuda.releaseTensorV1(record);
  }

  // ---- lifetime -------------------------------------------------------------------------------

  /**
   * Settles pending synchronizations with InvalidState, skips host functions not yet run, frees every
   * allocation after the work already enqueued, destroys every stream and event. Idempotent.
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const gone = err(ErrorCode.InvalidState, 'the CUDA backend was disposed before the awaited work ran');
    for (const resolve of this.pendingWaits) resolve(gone);
    this.pendingWaits.clear();
    const release = this.releaseStreams[0] as bigint;
    for (const r of this.releaseStreams) this.fenceAllStreams(r);
    for (const m of this.allocations) {
      m.freed = true;
      const device = m.device.isCuda ? m.device.id : 0;
      this.releaseAfter(m, this.releaseStreams[device] as bigint, device);
      this.detach(m);
    }
    this.allocations.clear();
    for (const staging of this.staging) staging.dispose((kind, address) => this.cuda.deferFree(kind, address, this.fenceEvent(release, 0)));
    for (const s of this.streams) {
      s.destroyed = true;
      this.cuda.streamDestroy(s.handle);
      if (s.tailEvent !== 0n) this.cuda.eventDestroy(s.tailEvent);
    }
    this.streams.clear();
    for (const tail of this.retiredTails.splice(0)) this.cuda.eventDestroy(tail);
    for (const e of this.events) {
      e.destroyed = true;
      this.cuda.eventDestroy(e.handle);
    }
    this.events.clear();
    for (const idle of this.idleSyncStreams) for (const waiter of idle.splice(0)) this.cuda.streamDestroy(waiter);
    for (const r of this.releaseStreams) this.cuda.streamDestroy(r);
  }

  /** Same as `dispose()`, for `using`. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  // ---- internals ------------------------------------------------------------------------------

  private track(
    device: Device,
    kind: MemoryKind,
    address: bigint,
    byteSize: number,
    label: string,
    origin: CudaAllocationOrigin,
    base: bigint,
    buffer: ArrayBuffer | null,
    view: Uint8Array | null,
  ): CudaMemory {
    const m = new CudaMemory(this, this.nextMemoryId++, device, kind, address, byteSize, label, origin, base, buffer, view);
    this.allocations.add(m);
    return m;
  }

  private trackEvent(device: Device, label: string | undefined, handle: bigint, interprocess: boolean): CudaEvent {
    const id = this.nextEventId++;
    const event = new CudaEvent(this, id, device, label ?? `event ${id}`, handle, interprocess);
    this.events.add(event);
    return event;
  }

  private forget(m: CudaMemory): void {
    m.freed = true;
    this.allocations.delete(m);
    this.detach(m);
  }

  /** Detaches the host view so no JS access can reach memory about to be released. */
  private detach(m: CudaMemory): void {
    if (m.buffer !== null && this.hostAccessibleBuffers.get(m.buffer) === m) this.hostAccessibleBuffers.delete(m.buffer);
    // Only buffers over this backend's own pinned/managed allocations are detached; an adopted mapping's
    // buffer belongs to its owner.
    if (m.buffer !== null && (m.origin === CudaAllocationOrigin.PinnedHost || m.origin === CudaAllocationOrigin.Managed)) {
      this.cuda.detachArrayBuffer(m.buffer);
    }
    m.view = null;
  }

  /**
   * The address CUDA can copy `bytes` to or from directly: `bytes` lies in a live pinnedHost or
   * cudaManaged allocation of this backend and does not overlap the `byteLength` bytes at `other` (the
   * other side of the copy). 0n otherwise (stage the copy).
   */
  private directAddress(bytes: Uint8Array, other: bigint): bigint {
    const m = this.hostAccessibleBuffers.get(bytes.buffer as ArrayBuffer);
    if (m === undefined) return 0n;
    const address = m.base + BigInt(bytes.byteOffset);
    const n = BigInt(bytes.byteLength);
    return address < other + n && other < address + n ? 0n : address;
  }

  /** Releases `m`'s memory after the work enqueued on `stream` (of device `device`) so far. */
  private releaseAfter(m: CudaMemory, stream: bigint, device: number): void {
    switch (m.origin) {
      case CudaAllocationOrigin.PoolAsync:
        this.cuda.freeAsync(m.base, stream);
        return;
      case CudaAllocationOrigin.Malloc:
      case CudaAllocationOrigin.Managed:
        this.cuda.deferFree(0, m.base, this.fenceEvent(stream, device));
        return;
      case CudaAllocationOrigin.PinnedHost:
        this.cuda.deferFree(1, m.base, this.fenceEvent(stream, device));
        return;
      case CudaAllocationOrigin.Registered:
        this.cuda.deferFree(2, m.base, this.fenceEvent(stream, device));
        return;
      case CudaAllocationOrigin.IpcImported:
        this.cuda.deferFree(3, m.base, this.fenceEvent(stream, device));
        return;
      case CudaAllocationOrigin.JsHeap:
      case CudaAllocationOrigin.Adopted:
        return;
    }
  }

  /** A fresh event recorded on `stream` (of device `device`); the release thread destroys it. */
  private fenceEvent(stream: bigint, device: number): bigint {
    const e = this.cuda.eventCreate(device, false);
    this.cuda.eventRecord(e, stream);
    return e;
  }

  /** Makes `release` wait for the work enqueued so far on every stream of this backend (live or destroyed). */
  private fenceAllStreams(release: bigint): void {
    for (const s of this.streams) {
      const tail = this.recordTail(s);
      if (tail !== 0n) this.cuda.streamWaitEvent(release, tail);
    }
    let kept = 0;
    for (const tail of this.retiredTails) {
      if (this.cuda.eventQuery(tail) === 0) {
        this.cuda.eventDestroy(tail);
        continue;
      }
      this.cuda.streamWaitEvent(release, tail);
      this.retiredTails[kept++] = tail;
    }
    this.retiredTails.length = kept;
  }

  /** Records the stream's tail event (creating it on first use); 0n when CUDA refused. */
  private recordTail(s: CudaStream): bigint {
    try {
      if (s.tailEvent === 0n) s.tailEvent = this.cuda.eventCreate(s.device.id, false);
    } catch {
      return 0n;
    }
    return this.cuda.eventRecord(s.tailEvent, s.handle) === 0 ? s.tailEvent : 0n;
  }

  /** A promise settled by a non-blocking host call at the current end of `stream`. */
  private waitOn(stream: bigint, method: string, onDone: () => HsError | null): Promise<Result<void>> {
    return new Promise<Result<void>>((resolve) => {
      this.pendingWaits.add(resolve);
      const status = this.hostCalls.launch(
        stream,
        () => {
          if (!this.pendingWaits.delete(resolve)) return;
          const fault = onDone();
          resolve(fault === null ? OK_VOID : { ok: false, error: fault });
        },
        false,
      );
      if (status !== 0) {
        this.pendingWaits.delete(resolve);
        resolve(this.statusError(method, status));
      }
    });
  }

  /**
   * Copies into `dst` from a JS buffer (`bytes`) or pageable memory (`src`): directly when `bytes` lies in
   * a pinnedHost or cudaManaged allocation of this backend, else staged through pinned memory.
   */
  private copyIn(s: CudaStream, dst: MemoryRange, bytes: Uint8Array | null, src: MemoryRange | null, method: string): Result<void> {
    const d = dst.memory as CudaMemory;
    const n = dst.byteLength;
    if (d.kind === MemoryKind.Host) {
      const view = d.view as Uint8Array;
      const copy = (bytes as Uint8Array).slice();
      return this.enqueueHostCopy(s, method, () => view.set(copy, dst.byteOffset));
    }
    const dstAddress = d.address + BigInt(dst.byteOffset);
    const direct = bytes === null ? 0n : this.directAddress(bytes, dstAddress);
    if (direct !== 0n) {
      const status = this.cuda.memcpyAsync(dstAddress, direct, n, s.handle);
      return status === 0 ? OK_VOID : this.statusError(method, status);
    }
    let block: StagingBlock;
    try {
      block = (this.staging[s.device.id] as PinnedStaging).acquire(n);
    } catch (cause) {
      return this.failure(method, cause);
    }
    if (bytes !== null) block.view.set(bytes);
    else {
      const from = (src as MemoryRange).memory as CudaMemory;
      block.view.set((from.view as Uint8Array).subarray((src as MemoryRange).byteOffset, (src as MemoryRange).byteOffset + n));
    }
    const status = this.cuda.memcpyAsync(dstAddress, block.address, n, s.handle);
    (this.staging[s.device.id] as PinnedStaging).release(block, s.handle);
    return status === 0 ? OK_VOID : this.statusError(method, status);
  }

  /**
   * Copies `src` into a JS buffer in stream order: directly when `dst` lies in a pinnedHost or cudaManaged
   * allocation of this backend, else device to pinned staging, then staging to `dst` on the JS thread.
   */
  private copyOut(s: CudaStream, dst: Uint8Array, src: MemoryRange, method: string): Result<void> {
    const sm = src.memory as CudaMemory;
    const n = src.byteLength;
    if (sm.kind === MemoryKind.Host) {
      const view = sm.view as Uint8Array;
      return this.enqueueHostCopy(s, method, () => dst.set(view.subarray(src.byteOffset, src.byteOffset + n)));
    }
    const srcAddress = sm.address + BigInt(src.byteOffset);
    const direct = this.directAddress(dst, srcAddress);
    if (direct !== 0n) {
      const status = this.cuda.memcpyAsync(direct, srcAddress, n, s.handle);
      return status === 0 ? OK_VOID : this.statusError(method, status);
    }
    let block: StagingBlock;
    try {
      block = (this.staging[s.device.id] as PinnedStaging).acquire(n);
    } catch (cause) {
      return this.failure(method, cause);
    }
    let status = this.cuda.memcpyAsync(block.address, srcAddress, n, s.handle);
    // Nothing later on the stream touches `dst` or the block, so the stream need not wait for the
    // copy-out: the block is handed back from the JS side once its bytes were taken.
    if (status === 0) {
      status = this.hostCalls.launch(s.handle, () => {
        dst.set(block.view.subarray(0, n));
        (this.staging[s.device.id] as PinnedStaging).giveBack(block);
      }, false);
    }
    if (status !== 0) (this.staging[s.device.id] as PinnedStaging).release(block, s.handle);
    return status === 0 ? OK_VOID : this.statusError(method, status);
  }

  /** A host-side copy between JS-heap buffers, in stream order. */
  private enqueueHostCopy(s: CudaStream, method: string, copy: () => void): Result<void> {
    return this.launchGated(s, method, copy);
  }

  /** Enqueues `fn` (which must not throw) as a host call that later work on `s` waits for (see `hostFunctions`). */
  private launchGated(s: CudaStream, method: string, fn: () => void, blocking = true): Result<void> {
    const status = this.hostCalls.launch(s.handle, fn, this.blockingHostFunctions && blocking);
    return status === 0 ? OK_VOID : this.statusError(method, status);
  }

  /**
   * A host-staged kernel: copies every range into one pinned staging block, runs `host` on views of the
   * block in stream order (a blocking host function, so the write-back waits for it), then copies the
   * write ranges back. The launch's ranges and params are taken now.
   */
  private launchHostStaged(s: CudaStream, kernel: KernelLaunch): Result<void> {
    if (!this.blockingHostFunctions) {
      return err(ErrorCode.NotSupported, `launchKernel: ${kernel.name} runs on the host between copies, which needs blocking host functions (hostFunctions is 'queued')`);
    }
    const ranges = [...kernel.reads, ...kernel.writes];
    const params = kernel.params.slice();
    const host = kernel.host;
    const total = ranges.reduce((sum, r) => sum + r.byteLength, 0);
    const staging = this.staging[s.device.id] as PinnedStaging;
    let block: StagingBlock;
    try {
      block = staging.acquire(Math.max(total, 1));
    } catch (cause) {
      return this.failure(`launchKernel(${kernel.name})`, cause);
    }
    const views: Uint8Array[] = [];
    const addresses: bigint[] = [];
    let offset = 0;
    let status = 0;
    for (const r of ranges) {
      const address = (r.memory as CudaMemory).address + BigInt(r.byteOffset);
      if (status === 0 && r.byteLength > 0) status = this.cuda.memcpyAsync(block.address + BigInt(offset), address, r.byteLength, s.handle);
      views.push(block.view.subarray(offset, offset + r.byteLength));
      addresses.push(address);
      offset += r.byteLength;
    }
    const reads = views.slice(0, kernel.reads.length);
    const writes = views.slice(kernel.reads.length);
    const launched = status === 0 ? this.launchGated(s, `launchKernel(${kernel.name})`, () => {
      if (this.disposed) return;
      try {
        host(reads, writes, params);
      } catch (cause) {
        this.recordFault(s, cause);
      }
    }) : this.statusError(`launchKernel(${kernel.name})`, status);
    for (let i = kernel.reads.length; launched.ok && status === 0 && i < ranges.length; i++) {
      const view = views[i] as Uint8Array;
      if (view.byteLength > 0) status = this.cuda.memcpyAsync(addresses[i] as bigint, block.address + BigInt(view.byteOffset), view.byteLength, s.handle);
    }
    staging.release(block, s.handle);
    if (!launched.ok) return launched;
    return status === 0 ? OK_VOID : this.statusError(`launchKernel(${kernel.name})`, status);
  }

  /** memmove semantics inside one allocation: copy through a stream-ordered temporary. */
  private overlappingCopy(s: CudaStream, dst: bigint, src: bigint, n: number): Result<void> {
    let temp: bigint;
    try {
      temp = this.cuda.mallocAsync(n, s.handle);
    } catch (cause) {
      return this.failure('memcpyAsync', cause);
    }
    let status = this.cuda.memcpyAsync(temp, src, n, s.handle);
    if (status === 0) status = this.cuda.memcpyAsync(dst, temp, n, s.handle);
    this.cuda.freeAsync(temp, s.handle);
    return status === 0 ? OK_VOID : this.statusError('memcpyAsync', status);
  }

  private recordFault(s: CudaStream, cause: unknown): void {
    const error = new HsError(ErrorCode.DeviceError, `a host function on stream "${s.label}" threw: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    s.fault ??= error;
    this.onFault?.(error, s);
  }

  /** Maps a CUDA status to OutOfMemory or DeviceError with the CUDA error name. */
  private statusError(method: string, status: number): Err {
    const code = status === MEMORY_ALLOCATION ? ErrorCode.OutOfMemory : ErrorCode.DeviceError;
    return err(code, `${method}: CUDA failed with ${this.cuda.errorName(status)} (${status})`);
  }

  /** Maps an exception from a creating binding call (carrying `cudaError`) to a Result. */
  private failure(method: string, cause: unknown): Err {
    const status = (cause as { cudaError?: unknown })?.cudaError;
    const code = status === MEMORY_ALLOCATION ? ErrorCode.OutOfMemory : ErrorCode.DeviceError;
    return err(code, `${method}: ${(cause as Error)?.message ?? String(cause)}`, cause);
  }
}

function alignUp(address: bigint, alignment: number): bigint {
  const a = BigInt(alignment);
  return ((address + a - 1n) / a) * a;
}
