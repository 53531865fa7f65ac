import { ErrorCode, HsError, OK_VOID, err, type Backend, type Err, type Event, type Result, type Stream } from '@hs/streams';

/**
 * One slot's release (deallocation) streams: a capped, deduplicated list with a preallocated release
 * event per entry on each device a release stream may be on (the pool's event device and its release
 * devices: an event is recorded on a stream of its own device). A registered stream blocks reuse until its reader calls `release(stream)`, which
 * records the entry's event on that stream; registering again (a new read coming) re-arms the block.
 * Nothing here allocates after construction except the error of a failed release-event record.
 * Spec: "Fanout release-stream caps", "Two stream roles order every device tensor".
 */
export class ReleaseTracker {
  readonly #backend: Backend;
  readonly #label: string;
  /** Registered streams; entries at `count` and beyond are `null`. */
  readonly #streams: (Stream | null)[];
  /** 1 once the entry's release event was recorded after its latest registration. */
  readonly #recorded: Uint8Array;
  /** This slot's events inside the pool's release-event list: `[first + d * deviceStride, ... + cap)` on device `d`. */
  readonly #events: readonly Event[];
  readonly #first: number;
  readonly #deviceStride: number;
  /** The device index (0 the event device) of each entry's stream. */
  readonly #device: Uint8Array;
  /** The cap's error, made at the first refusal and returned from then on (a shared value, no allocation per call). */
  #exhausted: Err | null = null;
  #count = 0;

  /**
   * @param first - index of this slot's first event on the event device in `events`.
   * @param deviceStride - distance in `events` from a slot's events on one device to its events on the next.
   */
  constructor(backend: Backend, label: string, events: readonly Event[], first: number, deviceStride: number, cap: number) {
    this.#backend = backend;
    this.#label = label;
    this.#events = events;
    this.#first = first;
    this.#deviceStride = deviceStride;
    this.#device = new Uint8Array(cap);
    this.#streams = new Array<Stream | null>(cap).fill(null);
    this.#recorded = new Uint8Array(cap);
  }

  /** Distinct streams registered since the last reset. */
  get count(): number {
    return this.#count;
  }

  /**
   * Adds `stream`, on the pool's release device `device` (0 the event device), free when it is already
   * registered, and marks its entry as awaiting a release. `ResourceExhausted` past the cap (a shared,
   * preallocated error value).
   */
  register(stream: Stream, device: number): Result<void> {
    const at = this.#indexOf(stream);
    if (at >= 0) {
      this.#recorded[at] = 0;
      return OK_VOID;
    }
    if (this.#count === this.#streams.length) {
      this.#exhausted ??= err(
        ErrorCode.ResourceExhausted,
        `${this.#label}: already tracks ${this.#streams.length} distinct release streams, its cap; the extra consumer stream is rejected (raise maxReleaseStreams or share a stream)`,
      );
      return this.#exhausted;
    }
    this.#streams[this.#count] = stream;
    this.#device[this.#count] = device;
    this.#recorded[this.#count] = 0;
    this.#count++;
    return OK_VOID;
  }

  /**
   * Records `stream`'s release event on it.
   * @throws HsError `InvalidState` when the stream was never registered; the backend's error when the
   *   record fails (the entry then keeps blocking reuse: fail closed).
   */
  release(stream: Stream): void {
    const at = this.#indexOf(stream);
    if (at < 0) {
      throw new HsError(
        ErrorCode.InvalidState,
        `${this.#label}: release stream "${stream.label}" was never registered; call registerReleaseStream(stream) before reading on it`,
      );
    }
    const recorded = this.#backend.recordEvent(this.#eventOf(at), stream);
    if (!recorded.ok) throw recorded.error;
    this.#recorded[at] = 1;
  }

  /**
   * For the pool's batched poll: writes the release events of every registered stream into `list` from
   * `at` on and returns the index after the last one written; `-1` (nothing written) when a registered
   * reader has not recorded its release yet, so the slot cannot recycle whatever the events say.
   */
  gather(list: Event[], at: number): number {
    for (let i = 0; i < this.#count; i++) if (this.#recorded[i] === 0) return -1;
    for (let i = 0; i < this.#count; i++) list[at + i] = this.#eventOf(i);
    return at + this.#count;
  }

  /**
   * True when the events `gather` wrote at `at` all completed per `completed` (the batched query's flags
   * for that list) and no registration came since.
   */
  allReleasedAt(completed: Uint8Array, at: number): boolean {
    for (let i = 0; i < this.#count; i++) {
      if (this.#recorded[i] === 0 || completed[at + i] === 0) return false;
    }
    return true;
  }

  /** Forgets every registration (the slot was recycled). */
  reset(): void {
    for (let i = 0; i < this.#count; i++) this.#streams[i] = null;
    this.#count = 0;
  }

  /** Entry `at`'s release event, on its stream's device. */
  #eventOf(at: number): Event {
    return this.#events[this.#first + (this.#device[at] as number) * this.#deviceStride + at] as Event;
  }

  #indexOf(stream: Stream): number {
    for (let i = 0; i < this.#count; i++) if (this.#streams[i] === stream) return i;
    return -1;
  }
}
