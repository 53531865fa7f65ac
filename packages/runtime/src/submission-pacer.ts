import { type Backend, type Device, type Event, type Result, type Stream, ErrorCode, OK_VOID, err, ok, unwrap } from '@hs/streams';
import { hostWaitOutcome } from './host-wait-outcome.js';

/**
 * Bounds how much GPU work a producer has queued: after submitting each frame's work the producer
 * records a completion event with `record()`, and before submitting the next it calls `admit()`, which
 * waits for the event recorded `window` frames earlier when that many are still in flight. The wait is
 * `Backend.synchronizeEvent`: the JS thread stays free (the device's blocking event lets the waiting
 * thread sleep) while this operator is not activated again. Events are made once, in `create()`.
 *
 * Trade-offs: a smaller window queues less producer work (lower latency, less memory held by frames in
 * flight) but overlaps less CPU and GPU work; the wait delays frame creation, so latency measured from
 * `emit()` leaves it out; it bounds only work this producer submitted before each event, not work on
 * consumers' streams; a fixed-rate input still needs a drop policy (or a bounded ingress queue) so the
 * backlog does not move upstream. Combine it with `retainPending()`: a Backpressured retry re-emits the
 * kept loan without calling `admit()` or `record()` again.
 * Spec: "Pace GPU submissions when latency matters".
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { SubmissionPacer } from '@hs/runtime';
 *
 * const backend = new HostBackend();
 * const stream = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
 * const pacer = unwrap(SubmissionPacer.create(backend, Device.cuda(0), 2)); // at most 2 frames of work queued
 * for (let frame = 0; frame < 5; frame++) {
 *   await pacer.admit(); // waits (off the JS thread) only while 2 frames are in flight
 *   // ... enqueue this frame's kernels and copies on `stream` ...
 *   unwrap(pacer.record(stream));
 * }
 * console.log(`in flight: ${pacer.inFlight} of ${pacer.window}`);
 * await pacer.close();
 * ```
 */
export class SubmissionPacer {
  private head = 0;
  private count = 0;

  private constructor(
    private readonly backend: Backend,
    private readonly events: readonly Event[],
  ) {}

  /**
   * Creates a pacer allowing `window` frames in flight, with its events on `device`.
   * @returns the pacer; `InvalidArgument` for a `backend` that is not a Backend or a window that is not an integer in
   *   1..1024; the backend's event-creation error (events made before it are destroyed).
   */
  static create(backend: Backend, device: Device, window: number): Result<SubmissionPacer> {
    if (typeof backend !== 'object' || backend === null || typeof backend.createEvent !== 'function') {
      return err(ErrorCode.InvalidArgument, `SubmissionPacer: expected a Backend (for example new HostBackend()), got ${backend === null ? 'null' : typeof backend}`);
    }
    if (!Number.isSafeInteger(window) || window < 1 || window > 1024) {
      return err(ErrorCode.InvalidArgument, `SubmissionPacer: window ${String(window)} is not an integer number of frames in 1..1024`);
    }
    const events: Event[] = [];
    for (let i = 0; i < window; i++) {
      const made = backend.createEvent(device, { label: `pacer[${i}]` });
      if (!made.ok) {
        for (const e of events) backend.destroyEvent(e);
        return made;
      }
      events.push(made.value);
    }
    return ok(new SubmissionPacer(backend, events));
  }

  /** Frames in flight (recorded and not yet seen complete): 0..window. */
  get inFlight(): number {
    return this.count;
  }

  /** Frames allowed in flight. */
  get window(): number {
    return this.events.length;
  }

  /**
   * Call before submitting a frame's work. Retires completed frames (never waiting); when `window`
   * frames are still in flight, returns a promise that resolves once the oldest completed.
   *
   * ```ts
   * compute(ctx: ExecutionContext): Result<void> | Promise<Result<void>> {
   *   const wait = this.pacer.admit();
   *   return wait === null ? this.produce(ctx) : wait.then(() => this.produce(ctx));
   * }
   * ```
   * @returns `null` at once when there is room (no promise is made); else a promise that resolves with
   *   nothing once the oldest frame completed, and rejects with the wait's `HsError`: `DeviceError` when the
   *   work before the event faulted, `InvalidState` when the backend was disposed under the wait.
   */
  admit(): Promise<void> | null {
    while (this.count > 0 && this.backend.queryEvent(this.events[this.head]!)) this.retireOldest();
    if (this.count < this.events.length) return null;
    return this.backend.synchronizeEvent(this.events[this.head]!).then(() => this.retireOldest());
  }

  /**
   * Records this frame's completion event on `stream`, after its work was submitted.
   * @returns `InvalidState` when `window` frames are already in flight (call `admit()` first); the
   *   backend's record error.
   */
  record(stream: Stream): Result<void> {
    if (this.count === this.events.length) {
      return err(ErrorCode.InvalidState, `SubmissionPacer: ${this.count} frames already in flight; await admit() before submitting more work`);
    }
    const recorded = this.backend.recordEvent(this.events[(this.head + this.count) % this.events.length]!, stream);
    if (!recorded.ok) return recorded;
    this.count += 1;
    return OK_VOID;
  }

  /**
   * Waits for every frame in flight, then destroys the events (either way). Call from the operator's `stop()`.
   * @returns nothing, once every frame in flight completed; rejects with the first wait's `HsError`
   *   (`DeviceError` when the work before an event faulted, `InvalidState` for a disposed backend).
   */
  async close(): Promise<void> {
    let outcome: Result<void> = OK_VOID;
    while (this.count > 0 && outcome.ok) {
      outcome = await hostWaitOutcome(this.backend.synchronizeEvent(this.events[this.head]!));
      this.retireOldest();
    }
    this.count = 0;
    for (const e of this.events) this.backend.destroyEvent(e);
    unwrap(outcome);
  }

  private retireOldest(): void {
    this.head = (this.head + 1) % this.events.length;
    this.count -= 1;
  }
}
