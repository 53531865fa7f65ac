import type { CudaNativeBinding } from '@hs/cuda-native';
import type { Event, StreamOptions } from '../backend.js';
import type { Device } from '../device.js';
import { OK_VOID, ok, type Result } from '../errors.js';
import { NOT_READY, type CudaErrors } from './cuda-errors.js';
import { CudaEvent, CudaStream } from './cuda-handles.js';

/**
 * The CUDA backend's live streams and events: creation and destruction, event record/query/wait, and
 * the tail events that let a release stream wait for the work enqueued so far on every stream (live or
 * destroyed). Handles are validated by the backend before they reach this table.
 */
export class CudaStreamTable {
  private readonly streams = new Set<CudaStream>();
  private readonly events = new Set<CudaEvent>();
  /** Tail events of destroyed streams whose work may still run (freed lazily). */
  private readonly retiredTails: bigint[] = [];
  private queryScratch = new BigUint64Array(64);
  private nextStreamId = 1;
  private nextEventId = 1;

  constructor(
    private readonly cuda: CudaNativeBinding,
    private readonly errors: CudaErrors,
    /** The backend that owns every handle made here. */
    private readonly owner: object,
  ) {}

  /** A non-blocking stream with CUDA's clamped priority. */
  createStream(device: Device, options: StreamOptions): Result<CudaStream> {
    const priority = options.priority ?? 0;
    let handle: bigint;
    let clamped: number;
    try {
      handle = this.cuda.streamCreate(device.id, priority);
      clamped = this.cuda.streamPriority(handle);
    } catch (cause) {
      return this.errors.thrown('createStream', cause);
    }
    const id = this.nextStreamId++;
    const stream = new CudaStream(this.owner, id, device, options.label ?? `stream ${id}`, clamped, handle);
    this.streams.add(stream);
    return ok(stream);
  }

  /** Destroys `s`; its tail is kept until its work completed, so later frees still wait for it. */
  destroyStream(s: CudaStream): void {
    const tail = this.recordTail(s);
    if (tail !== 0n) this.retiredTails.push(tail);
    s.tailEvent = 0n;
    s.destroyed = true;
    this.streams.delete(s);
    this.cuda.streamDestroy(s.handle);
  }

  /** A timing-disabled event; `interprocess` adds `cudaEventInterprocess`. */
  createEvent(device: Device, label: string | undefined, interprocess: boolean): Result<CudaEvent> {
    let handle: bigint;
    try {
      handle = this.cuda.eventCreate(device.id, interprocess);
    } catch (cause) {
      return this.errors.thrown('createEvent', cause);
    }
    return ok(this.trackEvent(device, label, handle, interprocess));
  }

  /** Tracks an event handle made elsewhere (another process's, opened here). */
  trackEvent(device: Device, label: string | undefined, handle: bigint, interprocess: boolean): CudaEvent {
    const id = this.nextEventId++;
    const event = new CudaEvent(this.owner, id, device, label ?? `event ${id}`, handle, interprocess);
    this.events.add(event);
    return event;
  }

  destroyEvent(e: CudaEvent): void {
    e.destroyed = true;
    this.events.delete(e);
    this.cuda.eventDestroy(e.handle);
  }

  record(e: CudaEvent, s: CudaStream): Result<void> {
    const status = this.cuda.eventRecord(e.handle, s.handle);
    if (status !== 0) return this.errors.status('recordEvent', status);
    e.recordedOn = s;
    return OK_VOID;
  }

  /** @throws HsError DeviceError when CUDA reports an error (a boolean cannot carry it). */
  query(e: CudaEvent): boolean {
    const status = this.cuda.eventQuery(e.handle);
    if (status === 0) return true;
    if (status === NOT_READY) return false;
    throw this.errors.status('queryEvent', status).error;
  }

  /** One native call for all `events` (already validated); @throws HsError DeviceError when CUDA reports an error. */
  queryMany(events: readonly Event[], completed: Uint8Array, count: number = events.length): number {
    if (this.queryScratch.length < count) this.queryScratch = new BigUint64Array(2 ** Math.ceil(Math.log2(count)));
    const handles = this.queryScratch;
    for (let i = 0; i < count; i++) handles[i] = (events[i] as CudaEvent).handle;
    const n = this.cuda.eventQueryMany(handles, count, completed);
    if (n < 0) throw this.errors.status('queryEvents', -n).error;
    return n;
  }

  wait(s: CudaStream, e: CudaEvent): Result<void> {
    const status = this.cuda.streamWaitEvent(s.handle, e.handle);
    return status === 0 ? OK_VOID : this.errors.status('streamWaitEvent', status);
  }

  /** The live stream whose `cudaStream_t` is `handle`, or null. */
  streamOf(handle: bigint): CudaStream | null {
    for (const s of this.streams) if (s.handle === handle) return s;
    return null;
  }

  /** Makes `release` wait for the work enqueued so far on every stream of this backend (live or destroyed). */
  fenceAllStreams(release: bigint): void {
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

  /** Destroys every stream (with its tail), retired tail and event. */
  dispose(): void {
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
}
