// Over 500 lines: one class implements the whole Backend contract for the host emulation (streams, events, memory, copies, kernels, capabilities).
import type {
  HostMemoryAdoption,
  HostFuncOptions,
  AllocationRequest,
  Backend,
  DeviceMemory,
  Event,
  EventOptions,
  KernelLaunch,
  MemoryRange,
  Stream,
  StreamOptions,
} from '../backend.js';
import type { NativeMemoryTable, PeerCopyOperations, StreamMemoryOperations } from '../backend-capabilities.js';
import { AddonMemoryTable } from '../addon-memory-table.js';
import { loadCudaAddon } from '../cuda/load-cuda-binding.js';
import { hostAdoptionProblem, validateAllocationRequest } from '../allocation-request.js';
import {
  assertCompletedFitsEvents, assertHostAccessNote, asyncAllocationKindProblem, copyFromHostProblem, copyToHostProblem, createEventProblem, createStreamProblem,
  disposedProblem, hostFuncProblem, hostViewProblem, kernelRangesProblem, memcpyProblem, memsetProblem, noMemoryPoolsError, recordEventProblem, streamWaitEventProblem,
} from '../backend-argument-checks.js';
import { Device } from '../device.js';
import { assertKernelShape } from '../kernel-launch-checks.js';
import { ErrorCode, HsError, OK_VOID, err, ok, type Result } from '../errors.js';
import { StreamOrderingChecker, type OrderingChecker } from '../ordering/ordering-checker.js';
import { eventProblem, memoryProblem, streamProblem } from '../handle-checks.js';
import type { HostMemory } from './host-memory.js';
import { HostMemoryTable } from './host-memory-table.js';
import { HostEvent, HostStream } from './host-stream.js';
import { SeededRandom } from './seeded-random.js';
import { HostStreamWork } from './host-stream-work.js';
import { HostStreamMemoryOps } from './host-stream-memory-ops.js';
import { HostPeerCopy } from './host-peer-copy.js';
import { OpPool } from './stream-op.js';
import { checkHostBackendOptions, type HostBackendOptions } from './host-backend-options.js';
import { StreamScheduler } from './stream-scheduler.js';

/**
 * The pure-TypeScript backend: streams are ordered work queues run off the calling stack (never inside
 * the enqueue call), events capture a position in a stream, memory of every kind lives in host
 * `ArrayBuffer`s at emulated, aligned, non-overlapping addresses. It has a deterministic mode (manual
 * stepping, seeded interleaving) and an optional ordering checker. Spec: "Two stream roles order every
 * device tensor", "Host access: the only blocking calls".
 *
 * Errors are returned as `Result`s: InvalidArgument (bad sizes, devices, ranges, foreign handles),
 * InvalidState (destroyed streams/events, freed memory, disposed backend), NotSupported (host view of
 * cudaDevice memory; device work on pageable host memory or another device's memory; stream-ordered
 * allocation with `memoryPools: false`), OutOfMemory (an allocation the JS heap refused), DeviceError
 * (a kernel or host function that threw, reported by synchronization). The host waits
 * (`synchronizeStream`/`synchronizeEvent`) reject with an `HsError` of these codes instead.
 * Wrong argument types throw `HsError`.
 *
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend(); // no GPU needed: cuda:0 is emulated
 * const device = Device.cuda(0);
 * const stream = unwrap(backend.createStream(device, { label: 'producer' }));
 * const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: 1024, label: 'frame' }));
 * const frame = { memory, byteOffset: 0, byteLength: 1024, label: 'frame' };
 * unwrap(backend.memsetAsync(stream, frame, 7)); // enqueued: runs in stream order, off the calling stack
 * const host = new Uint8Array(1024);
 * unwrap(backend.copyToHostAsync(stream, host, frame));
 * await backend.synchronizeStream(stream); // the explicit host wait; a fault would reject with DeviceError
 * console.log(`frame[0] = ${host[0]} after the fill and the copy on '${stream.label}'`);
 * backend.dispose();
 * ```
 */
export class HostBackend implements Backend, Disposable {
  /** Always `host`. */
  readonly name = 'host' as const;
  /** The emulated CUDA devices, `cuda:0` … `cuda:N-1` for `deviceCount` N. */
  readonly devices: readonly Device[];
  /** The ordering checker when enabled by `options.orderingChecker`, otherwise undefined. */
  readonly orderingChecker: OrderingChecker | undefined;
  /**
   * The emulated 64-bit stream memory operations (write-value and wait-value ops on the stream queues),
   * on cudaDevice and pinnedHost memory of this backend; see `StreamMemoryOperations`.
   */
  readonly streamMemoryOps: StreamMemoryOperations;
  /** Peer copies between the emulated devices (staged when `peerAccess` is false). */
  readonly peerCopy: PeerCopyOperations;
  private readonly checker: StreamOrderingChecker | null;
  private readonly scheduler: StreamScheduler;
  private readonly ops = new OpPool();
  private readonly work: HostStreamWork;
  private readonly memory = new HostMemoryTable(this);
  private readonly streams = new Set<HostStream>();
  private readonly events = new Set<HostEvent>();
  private readonly onFault: ((error: HsError, stream: Stream) => void) | undefined;
  private readonly memoryPools: boolean;
  private nextStreamId = 1;
  private nextEventId = 1;
  private disposed = false;

  /** @throws HsError InvalidArgument when an option has the wrong type or is out of range. */
  constructor(options: HostBackendOptions = {}) {
    const { deviceCount = 1, scheduling = 'auto', seed, orderingChecker = false, onFault, memoryPools = true, peerAccess = true } = checkHostBackendOptions(options);
    this.devices = Object.freeze(Array.from({ length: deviceCount }, (_, i) => Device.cuda(i)));
    this.checker =
      orderingChecker === false ? null : new StreamOrderingChecker(orderingChecker === true ? {} : orderingChecker);
    this.orderingChecker = this.checker ?? undefined;
    this.onFault = onFault;
    this.memoryPools = memoryPools;
    this.scheduler = new StreamScheduler(scheduling, seed === undefined ? null : new SeededRandom(seed), this.ops, {
      joinHost: (clock) => this.checker?.joinHost(clock),
      fault: (stream, error) => this.recordFault(stream, error),
    });
    this.work = new HostStreamWork(this.ops, this.scheduler, this.checker);
    this.streamMemoryOps = new HostStreamMemoryOps(this, this.work);
    this.peerCopy = new HostPeerCopy(this, this.work, peerAccess);
  }

  // ---- streams -------------------------------------------------------------------------------

  /**
   * Creates a stream on one of `devices`. InvalidArgument for another device or a non-integer priority.
   * The host backend records the priority but does not schedule by it.
   */
  createStream(device: Device, options: StreamOptions = {}): Result<Stream> {
    const problem = createStreamProblem(this.disposed, this.devices, device, options);
    if (problem !== null) return problem;
    const priority = options.priority ?? 0;
    const id = this.nextStreamId++;
    const label = options.label ?? `stream ${id}`;
    const clockIndex = this.checker === null ? -1 : this.checker.addStream(label);
    const stream = new HostStream(this, id, device, label, priority, clockIndex);
    this.streams.add(stream);
    return ok(stream);
  }

  /**
   * Destroys a stream: no new work is accepted; work already queued still runs and events captured on it
   * still complete. InvalidState when already destroyed.
   */
  destroyStream(stream: Stream): Result<void> {
    const problem = streamProblem(this, stream, 'destroyStream');
    if (problem !== null) return problem;
    const s = stream as HostStream;
    s.destroyed = true;
    this.streams.delete(s);
    this.checker?.retireStream(s.clockIndex);
    return OK_VOID;
  }

  // ---- events --------------------------------------------------------------------------------

  /** Creates an event on one of `devices` (never recorded, so complete). NotSupported for `interprocess` (no `ipc` here). */
  createEvent(device: Device, options: EventOptions = {}): Result<Event> {
    const problem = createEventProblem(this.disposed, this.devices, device);
    if (problem !== null) return problem;
    if (options.interprocess === true) {
      return err(ErrorCode.NotSupported, 'createEvent: the host backend has no interprocess events (CUDA IPC); use the CUDA backend, or @hs/ipc host topics');
    }
    const id = this.nextEventId++;
    const event = new HostEvent(this, id, device, options.label ?? `event ${id}`);
    this.events.add(event);
    return ok(event);
  }

  /** Destroys an event; waits already enqueued on it keep their captured position. */
  destroyEvent(event: Event): Result<void> {
    const problem = eventProblem(this, event, 'destroyEvent');
    if (problem !== null) return problem;
    const e = event as HostEvent;
    e.destroyed = true;
    this.events.delete(e);
    return OK_VOID;
  }

  /**
   * Captures the current end of `stream` in `event` (replacing any earlier capture). InvalidArgument when
   * the event belongs to another device than the stream.
   */
  recordEvent(event: Event, stream: Stream): Result<void> {
    const problem = recordEventProblem(this, event, stream);
    if (problem !== null) return problem;
    const e = event as HostEvent;
    const s = stream as HostStream;
    e.stream = s;
    e.position = s.enqueued;
    if (this.checker !== null) e.clock = this.checker.capture(s.clockIndex, e.clock);
    return OK_VOID;
  }

  /**
   * True when the event's capture completed or it was never recorded; O(1), never waits. A true answer
   * orders the host after the captured work for the ordering checker.
   * @throws HsError InvalidArgument for a foreign event, InvalidState for a destroyed one (a boolean
   * result cannot carry the error).
   */
  queryEvent(event: Event): boolean {
    const problem = eventProblem(this, event, 'queryEvent');
    if (problem !== null) throw problem.error;
    const e = event as HostEvent;
    const complete = e.complete;
    if (complete && e.clock !== null) this.checker?.joinHost(e.clock);
    return complete;
  }

  /**
   * Writes 1 or 0 into `completed[i]` for `events[i]`; returns how many are complete. Never waits.
   * @throws HsError InvalidArgument when `completed` is shorter than `events` or an event is foreign;
   * InvalidState when one is destroyed.
   */
  queryEvents(events: readonly Event[], completed: Uint8Array, count?: number): number {
    const queried = assertCompletedFitsEvents(events, completed, count);
    let n = 0;
    for (let i = 0; i < queried; i++) {
      const e = events[i] as HostEvent;
      // Fast path for a live event of this backend (the retirement poll); anything else takes queryEvent's checks.
      const done = e instanceof HostEvent && e.owner === this && !e.destroyed && this.checker === null ? e.complete : this.queryEvent(e);
      completed[i] = done ? 1 : 0;
      if (done) n++;
    }
    return n;
  }

  /**
   * Work enqueued on `stream` after this call waits until the event's capture at this moment completes;
   * re-recording the event later does not change this wait. A never-recorded event adds no wait.
   */
  streamWaitEvent(stream: Stream, event: Event): Result<void> {
    const problem = streamWaitEventProblem(this, stream, event);
    if (problem !== null) return problem;
    const s = stream as HostStream;
    const e = event as HostEvent;
    const target = e.stream;
    if (target === null) return OK_VOID;
    if (this.checker !== null && e.clock !== null) this.checker.join(s.clockIndex, e.clock);
    if (target === s || target.completed >= e.position) return OK_VOID;
    this.work.wait(s, target, e.position);
    return OK_VOID;
  }

  /**
   * Resolves (with nothing) when the event's capture at this moment completes, at once when never
   * recorded. Rejects with an `HsError`: the stream's DeviceError when a kernel or host function before the
   * capture threw; InvalidState for a destroyed event or when the backend is disposed first;
   * InvalidArgument for an event of another backend.
   * @throws HsError InvalidArgument (synchronously) when `event` is not an object.
   */
  synchronizeEvent(event: Event): Promise<void> {
    const problem = eventProblem(this, event, 'synchronizeEvent');
    if (problem !== null) return Promise.reject(problem.error);
    const e = event as HostEvent;
    if (e.stream === null) return Promise.resolve();
    return this.scheduler.wait(e.stream, e.position, e.clock === null ? null : e.clock.slice());
  }

  /**
   * Resolves (with nothing) when everything enqueued on `stream` so far completes. Rejects with an
   * `HsError`: the stream's DeviceError when a kernel or host function threw; InvalidState for a destroyed
   * stream or when the backend is disposed first; InvalidArgument for a stream of another backend.
   * @throws HsError InvalidArgument (synchronously) when `stream` is not an object.
   */
  synchronizeStream(stream: Stream): Promise<void> {
    const problem = streamProblem(this, stream, 'synchronizeStream');
    if (problem !== null) return Promise.reject(problem.error);
    const s = stream as HostStream;
    return this.scheduler.wait(s, s.enqueued, this.checker === null ? null : this.checker.snapshot(s.clockIndex));
  }

  // ---- memory --------------------------------------------------------------------------------

  /**
   * Allocates `byteSize` bytes of emulated memory at an address aligned to `alignment`. CUDA kinds need one
   * of `devices`, host kinds `Device.cpu()`. InvalidArgument for an unknown kind, a wrong device, a size
   * that is not a positive safe integer or an alignment that is not a power of two up to 1 GiB;
   * OutOfMemory when the JS heap refuses the buffer (nothing is allocated).
   */
  allocate(request: AllocationRequest): Result<DeviceMemory> {
    const valid = disposedProblem(this.disposed, 'allocate') ?? validateAllocationRequest(request, this.devices);
    if (!valid.ok) return valid;
    const { kind, device, byteSize, alignment } = valid.value;
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(new ArrayBuffer(byteSize));
    } catch (cause) {
      return err(
        ErrorCode.OutOfMemory,
        `allocate: the host heap refused ${byteSize} bytes of emulated ${kind} memory; allocate less or free memory first`,
        cause,
      );
    }
    return ok(this.memory.track(device, kind, bytes, alignment, null, request.label, false));
  }

  /**
   * Opens another native addon's `hs_memory_resource_v1` table of host or pinnedHost memory; its blocks are
   * adopted as host memory of this backend (with their real addresses). Tables of cudaDevice memory are
   * refused (NotSupported, after their destroy ran), and the stream-ordered pair is not offered (this
   * backend has no native streams). Needs the `@hs/cuda-native` addon, not a CUDA device. Errors as
   * `Backend.openNativeMemoryTable`.
   */
  openNativeMemoryTable(table: unknown): Result<NativeMemoryTable> {
    const problem = disposedProblem(this.disposed, 'openNativeMemoryTable');
    if (problem !== null) return problem;
    const addon = loadCudaAddon();
    if (!addon.ok) return err(ErrorCode.NotSupported, `openNativeMemoryTable: native tables are called through the @hs/cuda-native addon, which is unavailable: ${addon.reason}`);
    return AddonMemoryTable.open(addon, this, table, null);
  }

  /**
   * Wraps caller-owned host bytes (a shared-memory mapping) as `host` or `pinnedHost` memory on
   * `Device.cpu()`; the ordering checker and host views treat it like an allocation. `free()` drops the
   * handle only. InvalidArgument for another kind, a non-Uint8Array or an empty view.
   */
  adoptHostMemory(request: HostMemoryAdoption): Result<DeviceMemory> {
    const problem = disposedProblem(this.disposed, 'adoptHostMemory') ?? hostAdoptionProblem(request);
    if (problem !== null) return problem;
    const { bytes, kind, address } = request;
    return ok(this.memory.track(Device.cpu(), kind, bytes, 256, typeof address === 'bigint' && address > 0n ? address : null, request.label, true));
  }

  /**
   * Frees an allocation: new use is refused at once (InvalidState); work already enqueued on it still
   * completes, as `cudaFree` waits for it. InvalidState when already freed.
   */
  free(memory: DeviceMemory): Result<void> {
    const problem = memoryProblem(this, memory, 'free', 'the');
    if (problem !== null) return problem;
    const m = memory as HostMemory;
    this.memory.forget(m);
    this.checker?.forget(m);
    return OK_VOID;
  }

  /** True for the emulated CUDA devices unless the backend was made with `memoryPools: false`. */
  supportsMemoryPools(device: Device): boolean {
    return this.memoryPools && this.devices.includes(device);
  }

  /**
   * Stream-ordered allocation of cudaDevice memory. The emulation allocates at once, which is valid on
   * every stream (stronger than stream order requires). InvalidArgument for another kind or a device other
   * than the stream's; NotSupported when made with `memoryPools: false`; otherwise as `allocate`.
   */
  allocateAsync(request: AllocationRequest, stream: Stream): Result<DeviceMemory> {
    const problem = streamProblem(this, stream, 'allocateAsync') ?? asyncAllocationKindProblem(request, stream);
    if (problem !== null) return problem;
    if (!this.memoryPools) return noMemoryPoolsError(stream.device);
    return this.allocate(request);
  }

  /**
   * Stream-ordered free: the handle refuses new use at once; work already enqueued (on any stream) still
   * completes. InvalidArgument/InvalidState for a bad stream or memory.
   */
  freeAsync(memory: DeviceMemory, stream: Stream): Result<void> {
    const problem = streamProblem(this, stream, 'freeAsync');
    if (problem !== null) return problem;
    return this.free(memory);
  }

  /**
   * The allocation's bytes (`byteSize` long) for host, pinnedHost and cudaManaged memory; the same view
   * every call. NotSupported for cudaDevice memory. Declare host reads and writes with `noteHostAccess`.
   */
  hostView(memory: DeviceMemory): Result<Uint8Array> {
    const problem = hostViewProblem(this, memory);
    if (problem !== null) return problem;
    const m = memory as HostMemory;
    if (m.hostView === null) m.hostView = ok(m.bytes);
    return m.hostView;
  }

  // ---- stream work ---------------------------------------------------------------------------

  /** Enqueues a copy of `src` into `dst` (any kinds, any devices); InvalidArgument when lengths differ. */
  memcpyAsync(stream: Stream, dst: MemoryRange, src: MemoryRange): Result<void> {
    const problem = memcpyProblem(this, stream, dst, src);
    if (problem !== null) return problem;
    this.work.memcpy(stream as HostStream, dst, src);
    return OK_VOID;
  }

  /**
   * Enqueues a fill of `dst` with the byte `value`. InvalidArgument unless `value` is an integer 0..255;
   * NotSupported for pageable host memory or another device's memory.
   */
  memsetAsync(stream: Stream, dst: MemoryRange, value: number): Result<void> {
    const problem = memsetProblem(this, stream, dst, value);
    if (problem !== null) return problem;
    this.work.memset(stream as HostStream, dst, value);
    return OK_VOID;
  }

  /**
   * Enqueues a copy of `src` into `dst`; `src` must stay unchanged until the copy ran. InvalidArgument
   * when lengths differ. @throws HsError InvalidArgument when `src` is not a Uint8Array.
   */
  copyFromHostAsync(stream: Stream, dst: MemoryRange, src: Uint8Array): Result<void> {
    const problem = copyFromHostProblem(this, stream, dst, src);
    if (problem !== null) return problem;
    this.work.copyFromHost(stream as HostStream, dst, src);
    return OK_VOID;
  }

  /**
   * Enqueues a copy of `src` into `dst`; read `dst` only after synchronizing. InvalidArgument when
   * lengths differ. @throws HsError InvalidArgument when `dst` is not a Uint8Array.
   */
  copyToHostAsync(stream: Stream, dst: Uint8Array, src: MemoryRange): Result<void> {
    const problem = copyToHostProblem(this, stream, dst, src);
    if (problem !== null) return problem;
    this.work.copyToHost(stream as HostStream, dst, src);
    return OK_VOID;
  }

  /**
   * Enqueues `fn` to run in stream order; later work always waits for it here, which also meets
   * `blocking: false`. If it throws, the stream records a DeviceError fault. Accesses it declares through
   * `noteHostAccess` are not checked.
   * @throws HsError InvalidArgument when `fn` is not a function.
   */
  launchHostFunc(stream: Stream, fn: () => void, _options?: HostFuncOptions): Result<void> {
    const problem = hostFuncProblem(this, stream, fn);
    if (problem !== null) return problem;
    this.work.hostFunc(stream as HostStream, fn);
    return OK_VOID;
  }

  /**
   * Enqueues `kernel.host(readViews, writeViews, params)`; ranges and params are copied now, like CUDA
   * kernel arguments. InvalidArgument/InvalidState for bad ranges; NotSupported for pageable host memory
   * or another device's cudaDevice memory. If the kernel throws, the stream records a DeviceError fault.
   * @throws HsError InvalidArgument when `kernel` is not a well-formed KernelLaunch.
   */
  launchKernel(stream: Stream, kernel: KernelLaunch): Result<void> {
    assertKernelShape(kernel);
    const problem = streamProblem(this, stream, 'launchKernel') ?? kernelRangesProblem(this, stream, kernel);
    if (problem !== null) return problem;
    this.work.kernel(stream as HostStream, kernel);
    return OK_VOID;
  }

  /**
   * Declares a host-thread access of `range` now (for the ordering checker; a no-op without it). Calls
   * made from inside a kernel or host function are ignored.
   * @throws HsError InvalidArgument/InvalidState for an invalid range; NotSupported for cudaDevice memory.
   */
  noteHostAccess(range: MemoryRange, access: 'read' | 'write'): void {
    assertHostAccessNote(this, range, access);
    if (this.checker !== null && !this.scheduler.executing) this.checker.hostAccess(range, access);
  }

  // ---- deterministic mode ---------------------------------------------------------------------

  /**
   * Runs one queued op: of `stream` when given, otherwise of a runnable stream chosen by the seed (or
   * round-robin). Returns false when that stream (or every stream) has nothing runnable.
   * @throws HsError InvalidState when called from inside a kernel or host function; InvalidArgument for a
   * stream of another backend.
   */
  step(stream?: Stream): boolean {
    if (stream !== undefined && (!(stream instanceof HostStream) || stream.owner !== this)) {
      throw new HsError(ErrorCode.InvalidArgument, 'step: the stream was not created by this backend');
    }
    return this.scheduler.step(stream);
  }

  /**
   * Runs queued ops until nothing is runnable; returns how many ran. Pending `synchronize*` promises whose
   * work completed resolve afterwards (microtasks).
   * @throws HsError InvalidState when called from inside a kernel or host function.
   */
  runUntilIdle(): number {
    return this.scheduler.runUntilIdle();
  }

  // ---- lifetime -------------------------------------------------------------------------------

  /**
   * Drops queued work, rejects pending synchronizations with InvalidState, and destroys every stream,
   * event and allocation; later calls return (or, for the host waits, reject with) InvalidState. Idempotent.
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.scheduler.dispose(new HsError(ErrorCode.InvalidState, 'the host backend was disposed before the awaited work ran'));
    for (const s of this.streams) s.destroyed = true;
    for (const e of this.events) e.destroyed = true;
    this.memory.forgetAll();
    this.streams.clear();
    this.events.clear();
    this.checker?.reset();
  }

  /** Same as `dispose()`, for `using`. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  private recordFault(stream: HostStream, error: HsError): void {
    if (stream.faultPosition < 0) {
      stream.faultPosition = stream.completed;
      stream.fault = error;
    }
    this.onFault?.(error, stream);
  }
}
