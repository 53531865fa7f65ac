import {
  ErrorCode,
  HsError,
  err,
  type AllocationRequest,
  type Backend,
  type Device,
  type DeviceMemory,
  type Event,
  type EventOptions,
  type HostFuncOptions,
  type KernelLaunch,
  type MemoryRange,
  type Result,
  type Stream,
  type StreamOptions,
} from '@hs/streams';

/** Which faults a `FaultyBackend` injects. Call numbers count from 1, per kind of call. */
export interface FaultyBackendOptions {
  /** The Nth allocation (`allocate` or `allocateAsync`) and every later one fail with OutOfMemory. */
  readonly failAllocationsFrom?: number;
  /** The Nth `createEvent` and every later one fail with DeviceError. */
  readonly failEventsFrom?: number;
  /** The Nth `createStream` and every later one fail with DeviceError. */
  readonly failStreamsFrom?: number;
  /**
   * The Nth kernel launched faults on its stream when it runs (its host implementation throws), so the
   * stream reports DeviceError asynchronously, as a device fault would.
   */
  readonly faultKernelAt?: number;
  /**
   * Streams whose label satisfies this get stuck after `stuckAfterRecords` event records on them: every
   * later event recorded there never completes, nor does anything that waits on it (a stream that waits
   * on a stuck event is stuck too). A consumer that never finishes.
   */
  readonly stuckStream?: (label: string) => boolean;
  /** Records a matching stream completes normally before it gets stuck; default 0. */
  readonly stuckAfterRecords?: number;
}

/** Live handle counts: created and not yet destroyed or freed. */
export interface LiveHandles {
  readonly streams: number;
  readonly events: number;
  readonly allocations: number;
}

/**
 * A `Backend` wrapper for reliability tests: it forwards every call to an inner backend, counts the live
 * streams, events and allocations (to prove nothing leaked), and injects the faults its options name:
 * allocation, event and stream creation failures, a kernel that faults its stream, and streams whose
 * events never complete. Host waits on a stuck event or stream stay pending until `dispose()`, which
 * rejects them with InvalidState (an `HsError`); nothing ever blocks the JS thread.
 */
export class FaultyBackend implements Backend {
  readonly name: Backend['name'];
  readonly devices: readonly Device[];
  readonly orderingChecker: Backend['orderingChecker'];
  /** Faults injected so far (failed calls, faulted kernels, stuck events recorded). */
  faultsInjected = 0;
  private readonly streams = new Set<Stream>();
  private readonly events = new Set<Event>();
  private readonly allocations = new Set<DeviceMemory>();
  private readonly stuckStreams = new Set<Stream>();
  private readonly stuckEvents = new Set<Event>();
  private readonly recordsOn = new Map<Stream, number>();
  /** Pending stuck host waits: how to settle each, and the inner wait to forward it to once unstuck. */
  private readonly pendingWaits = new Map<PendingWait, () => Promise<void>>();
  private stuckReleased = false;
  private allocationCalls = 0;
  private eventCalls = 0;
  private streamCalls = 0;
  private kernelCalls = 0;

  constructor(
    /** The backend that does the work. Disposed with this wrapper. */
    readonly inner: Backend,
    private readonly options: FaultyBackendOptions = {},
  ) {
    this.name = inner.name;
    this.devices = inner.devices;
    this.orderingChecker = inner.orderingChecker;
  }

  /** Streams, events and allocations created through this wrapper and not yet destroyed or freed. */
  get live(): LiveHandles {
    return { streams: this.streams.size, events: this.events.size, allocations: this.allocations.size };
  }

  /** Host waits (`synchronizeEvent`/`synchronizeStream`) pending on stuck work. */
  get pendingHostWaits(): number {
    return this.pendingWaits.size;
  }

  createStream(device: Device, options?: StreamOptions): Result<Stream> {
    this.streamCalls += 1;
    if (reached(this.streamCalls, this.options.failStreamsFrom)) return this.inject(ErrorCode.DeviceError, `createStream call ${this.streamCalls}`);
    const made = this.inner.createStream(device, options);
    if (made.ok) this.streams.add(made.value);
    return made;
  }

  destroyStream(stream: Stream): Result<void> {
    const done = this.inner.destroyStream(stream);
    if (done.ok) this.streams.delete(stream);
    return done;
  }

  createEvent(device: Device, options?: EventOptions): Result<Event> {
    this.eventCalls += 1;
    if (reached(this.eventCalls, this.options.failEventsFrom)) return this.inject(ErrorCode.DeviceError, `createEvent call ${this.eventCalls}`);
    const made = this.inner.createEvent(device, options);
    if (made.ok) this.events.add(made.value);
    return made;
  }

  destroyEvent(event: Event): Result<void> {
    const done = this.inner.destroyEvent(event);
    if (done.ok) {
      this.events.delete(event);
      this.stuckEvents.delete(event);
    }
    return done;
  }

  recordEvent(event: Event, stream: Stream): Result<void> {
    const done = this.inner.recordEvent(event, stream);
    if (!done.ok) return done;
    const records = (this.recordsOn.get(stream) ?? 0) + 1;
    this.recordsOn.set(stream, records);
    if (!this.stuckReleased && !this.stuckStreams.has(stream) && this.options.stuckStream?.(stream.label) === true && records > (this.options.stuckAfterRecords ?? 0)) {
      this.stuckStreams.add(stream);
    }
    if (this.stuckStreams.has(stream)) {
      if (!this.stuckEvents.has(event)) this.faultsInjected += 1;
      this.stuckEvents.add(event);
    } else {
      this.stuckEvents.delete(event);
    }
    return done;
  }

  queryEvent(event: Event): boolean {
    const complete = this.inner.queryEvent(event);
    return complete && !this.stuckEvents.has(event);
  }

  queryEvents(events: readonly Event[], completed: Uint8Array, count: number = events.length): number {
    let n = this.inner.queryEvents(events, completed, count);
    for (let i = 0; i < count; i++) {
      if (completed[i] === 1 && this.stuckEvents.has(events[i] as Event)) {
        completed[i] = 0;
        n -= 1;
      }
    }
    return n;
  }

  streamWaitEvent(stream: Stream, event: Event): Result<void> {
    const done = this.inner.streamWaitEvent(stream, event);
    if (done.ok && this.stuckEvents.has(event)) this.stuckStreams.add(stream);
    return done;
  }

  synchronizeEvent(event: Event): Promise<void> {
    return this.stuckEvents.has(event) ? this.pendingWait(() => this.inner.synchronizeEvent(event)) : this.inner.synchronizeEvent(event);
  }

  synchronizeStream(stream: Stream): Promise<void> {
    return this.stuckStreams.has(stream) ? this.pendingWait(() => this.inner.synchronizeStream(stream)) : this.inner.synchronizeStream(stream);
  }

  allocate(request: AllocationRequest): Result<DeviceMemory> {
    if (this.allocationFails()) return this.inject(ErrorCode.OutOfMemory, `allocation ${this.allocationCalls} (${request.byteSize} bytes)`);
    return this.track(this.inner.allocate(request));
  }

  free(memory: DeviceMemory): Result<void> {
    const done = this.inner.free(memory);
    if (done.ok) this.allocations.delete(memory);
    return done;
  }

  supportsMemoryPools(device: Device): boolean {
    return this.inner.supportsMemoryPools(device);
  }

  allocateAsync(request: AllocationRequest, stream: Stream): Result<DeviceMemory> {
    if (this.allocationFails()) return this.inject(ErrorCode.OutOfMemory, `allocation ${this.allocationCalls} (${request.byteSize} bytes)`);
    return this.track(this.inner.allocateAsync(request, stream));
  }

  freeAsync(memory: DeviceMemory, stream: Stream): Result<void> {
    const done = this.inner.freeAsync(memory, stream);
    if (done.ok) this.allocations.delete(memory);
    return done;
  }

  hostView(memory: DeviceMemory): Result<Uint8Array> {
    return this.inner.hostView(memory);
  }

  memcpyAsync(stream: Stream, dst: MemoryRange, src: MemoryRange): Result<void> {
    return this.inner.memcpyAsync(stream, dst, src);
  }

  memsetAsync(stream: Stream, dst: MemoryRange, value: number): Result<void> {
    return this.inner.memsetAsync(stream, dst, value);
  }

  copyFromHostAsync(stream: Stream, dst: MemoryRange, src: Uint8Array): Result<void> {
    return this.inner.copyFromHostAsync(stream, dst, src);
  }

  copyToHostAsync(stream: Stream, dst: Uint8Array, src: MemoryRange): Result<void> {
    return this.inner.copyToHostAsync(stream, dst, src);
  }

  launchHostFunc(stream: Stream, fn: () => void, options?: HostFuncOptions): Result<void> {
    return this.inner.launchHostFunc(stream, fn, options);
  }

  launchKernel(stream: Stream, kernel: KernelLaunch): Result<void> {
    this.kernelCalls += 1;
    if (this.kernelCalls !== this.options.faultKernelAt) return this.inner.launchKernel(stream, kernel);
    this.faultsInjected += 1;
    const call = this.kernelCalls;
    return this.inner.launchKernel(stream, {
      ...kernel,
      host: () => {
        throw new Error(`FaultyBackend: injected device fault in kernel ${kernel.name} (launch ${call})`);
      },
    });
  }

  noteHostAccess(range: MemoryRange, access: 'read' | 'write'): void {
    this.inner.noteHostAccess(range, access);
  }

  /**
   * Ends the stuck-stream fault: stuck events complete as the inner backend completes them, no stream
   * gets stuck any more, and pending host waits continue on the inner backend.
   */
  unstick(): void {
    this.stuckReleased = true;
    this.stuckStreams.clear();
    this.stuckEvents.clear();
    const waits = [...this.pendingWaits];
    this.pendingWaits.clear();
    for (const [pending, forward] of waits) void forward().then(pending.resolve, pending.reject);
  }

  /** Rejects pending stuck waits with InvalidState, then disposes the inner backend. */
  dispose(): void {
    const waits = [...this.pendingWaits.keys()];
    this.pendingWaits.clear();
    const gone = new HsError(ErrorCode.InvalidState, 'FaultyBackend: disposed while a host wait was pending on stuck work');
    for (const pending of waits) pending.reject(gone);
    this.inner.dispose();
  }

  private allocationFails(): boolean {
    this.allocationCalls += 1;
    return reached(this.allocationCalls, this.options.failAllocationsFrom);
  }

  private track(made: Result<DeviceMemory>): Result<DeviceMemory> {
    if (made.ok) this.allocations.add(made.value);
    return made;
  }

  private inject(code: ErrorCode, what: string): Result<never> {
    this.faultsInjected += 1;
    return err(code, `FaultyBackend: injected fault at ${what}`);
  }

  private pendingWait(forward: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pendingWaits.set({ resolve, reject }, forward);
    });
  }
}

/** How a pending stuck host wait is settled. */
interface PendingWait {
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

function reached(call: number, from: number | undefined): boolean {
  return from !== undefined && call >= from;
}
