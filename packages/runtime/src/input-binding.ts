import type { TensorWindow } from '@hs/compiler';
import { type Backend, type Event, type Result, type Stream, ErrorCode, HsError, OK_VOID, err, ok } from '@hs/streams';
import type { DType, Tensor } from '@hs/tensor';
import type { Channel } from './channel.js';

/** What a consumer declared for one input; checked on pass-through values (ProtocolError on mismatch). */
export interface InputRequirement {
  readonly memoryKind: string | null;
  readonly dtype: DType | null;
  readonly rank: number | null;
}

/**
 * What an activation takes from an input, as the operator's temporal contract says: `oldest` (one
 * entry, consumed: the trigger input, or any input without a contract), `newest` (the newest entry,
 * older ones released unread: a non-trigger input), `window` (every queued entry up to `entries`,
 * consumed), `selector` (the newest `entries`, kept).
 */
export type InputRead = 'oldest' | 'newest' | 'window' | 'selector';

/** How the session wires one input port: its channel, its declared requirement, whether its edge is fused. */
export interface InputWiring {
  readonly name: string;
  /** The plan edge's (or imported topic's) queue; `null` for an unconnected optional input. */
  readonly channel: Channel | null;
  readonly requirement: InputRequirement;
  /** A proven fused edge: no self-wait, no release registration, lease returned without a release stream. */
  readonly fused: boolean;
  /** What an activation takes (default `oldest`). */
  readonly read?: InputRead;
  /** Entries of a window or selector (default 1). */
  readonly entries?: number;
}

/**
 * The consumer half of the stream contract for one input port of one operator.
 *
 * `receive()` takes the oldest queued tensor (whose read lease the channel holds) and orders it after
 * its producer on the consumer's compute stream: a stream wait on the readiness event, then the stream
 * registered as a release (deallocation) stream of the backing. Neither blocks the JS thread. A
 * stream-less (host-only) consumer instead gets the readiness event back, for its host wait.
 * `release()`, at activation end, returns the lease on the consumer's stream, so the slot is recycled
 * only after the reads enqueued there finish.
 *
 * `take()` generalizes this to what the temporal contract reads (`InputRead`): a window takes several
 * entries and releases each at activation end; a selector orders each kept entry once, and releases it
 * on the consumer's stream when a newer arrival evicts it.
 *
 * The binding is made once per input when the session is created and reused for every activation; a
 * stream consumer's `receive()` returns one preallocated result, and the window view and its entry
 * array are made once, so nothing is allocated per frame here.
 * Spec: "Two stream roles order every device tensor", "Receive: the tensor arrives pre-ordered",
 * "When the fences disappear: proven linear chains" (the fused edge).
 */
export class InputBinding {
  readonly name: string;
  readonly channel: Channel | null;
  readonly requirement: InputRequirement;
  readonly fused: boolean;
  readonly read: InputRead;
  /** Entries of a window or selector; 1 otherwise. */
  readonly entries: number;
  /** The reused view `receiveWindow()` hands out. */
  readonly window: TensorWindow;
  /** True once compute() read this input in the current activation (a second read is refused). */
  readCalled = false;
  #current: Tensor | undefined = undefined;
  /** A window's entries in hand this activation, oldest first (`#held[0..#heldCount)`). */
  readonly #held: (Tensor | undefined)[];
  #heldCount = 0;
  /** A selector's kept entries already ordered on the consumer (always the oldest ones of the channel). */
  #ordered = 0;
  /** A selector's kept entries this activation reads (arrivals during it queue behind them). */
  #selected = 0;

  /**
   * @param backend the session's backend (stream waits are enqueued through it).
   * @param stream the consumer operator's compute stream, or `null` for a host-only operator.
   */
  constructor(
    private readonly backend: Backend,
    private readonly stream: Stream | null,
    wiring: InputWiring,
  ) {
    this.name = wiring.name;
    this.channel = wiring.channel;
    this.requirement = wiring.requirement;
    this.fused = wiring.fused;
    this.read = wiring.read ?? 'oldest';
    this.entries = wiring.entries ?? 1;
    this.#held = new Array<Tensor | undefined>(this.read === 'window' ? this.entries : 0).fill(undefined);
    this.window = new WindowView(this);
    if (this.read === 'selector' && this.channel !== null) {
      this.channel.keepNewest = this.entries;
      this.channel.evict = this.#evict;
    }
  }

  /** True when the input holds an entry (a selector: kept or new). */
  get holdsEntry(): boolean {
    return this.channel !== null && this.channel.length > 0;
  }

  /** True when an entry arrived that no activation has taken yet (what a trigger input fires on). */
  get hasArrival(): boolean {
    return this.channel !== null && this.channel.length > (this.read === 'selector' ? this.#ordered : 0);
  }

  /** True when nothing is left for an activation to take (a selector's kept entries were all read). */
  get drained(): boolean {
    return !this.hasArrival;
  }

  /** Entries in the current window view (a window's entries in hand, or a selector's kept entries). */
  get windowLength(): number {
    if (this.read === 'window') return this.#heldCount;
    return this.read === 'selector' ? this.#selected : 0;
  }

  /** Entry `index` of the window view, or `undefined` out of range. */
  windowAt(index: number): Tensor | undefined {
    if (index < 0 || index >= this.windowLength || !Number.isInteger(index)) return undefined;
    return this.read === 'window' ? this.#held[index] : this.channel!.at(index);
  }

  /**
   * Takes what this activation reads (`InputRead`) from a connected channel and orders it on the
   * consumer's stream; a host-only consumer's readiness events are pushed onto `hostWaits`. Nothing to
   * take is no error (`receive()` then returns `undefined`, the window is empty).
   * @returns the first ordering error (`receive()`'s errors); entries taken before it stay in hand and
   *   are released by `release()`.
   */
  take(hostWaits: Event[]): Result<void> {
    if (this.read === 'window') return this.#takeWindow(hostWaits);
    if (this.read === 'selector') return this.#takeSelector(hostWaits);
    const channel = this.channel!;
    if (channel.length === 0) return OK_VOID;
    if (this.read === 'newest') {
      while (channel.length > 1) {
        channel.shift()!.backing?.releaseLease(null);
        channel.superseded += 1;
      }
    }
    const received = this.receive();
    if (received.ok && received.value !== null) hostWaits.push(received.value);
    return received.ok ? OK_VOID : received;
  }

  /** `take` of a window: every queued entry up to `entries`, consumed. */
  #takeWindow(hostWaits: Event[]): Result<void> {
    const channel = this.channel!;
    while (this.#heldCount < this.entries && channel.length > 0) {
      const tensor = channel.shift()!;
      const ordered = this.#order(tensor);
      if (!ordered.ok) {
        tensor.backing?.releaseLease(null);
        return ordered;
      }
      this.#held[this.#heldCount++] = tensor;
      if (ordered.value !== null) hostWaits.push(ordered.value);
    }
    return OK_VOID;
  }

  /** `take` of a selector: the newest `entries`, kept; each ordered on the consumer once. */
  #takeSelector(hostWaits: Event[]): Result<void> {
    const channel = this.channel!;
    channel.pinned = true;
    while (channel.length > this.entries) this.#evict(channel.shift()!);
    for (; this.#ordered < channel.length; this.#ordered++) {
      const ordered = this.#order(channel.at(this.#ordered)!);
      if (!ordered.ok) return ordered;
      if (ordered.value !== null) hostWaits.push(ordered.value);
    }
    this.#selected = channel.length;
    return OK_VOID;
  }

  /** Releases a selector's kept entries once its operator finished (nothing will read them again). */
  releaseKept(): void {
    if (this.read !== 'selector' || this.channel === null) return;
    this.channel.pinned = false;
    while (this.channel.length > 0) this.#evict(this.channel.shift()!);
  }

  /** Returns a selector's evicted entry: on the consumer's stream when an activation ordered it there. */
  readonly #evict = (tensor: Tensor): void => {
    if (this.#ordered > 0) {
      this.#ordered -= 1;
      tensor.backing?.releaseLease(this.fused ? null : this.stream);
    } else {
      tensor.backing?.releaseLease(null);
    }
  };

  /** The tensor received for the current activation; `undefined` between activations or when nothing was received. */
  get current(): Tensor | undefined {
    return this.#current;
  }

  /**
   * Takes the oldest tensor from the channel (connected and non-empty: the scheduler checked) and orders
   * it on the consumer's stream. On failure the tensor's lease is given back without a release stream
   * (it was not registered on this stream) and nothing is current.
   * @returns `null` for a stream consumer (or a tensor that needs no wait); for a host-only consumer the
   *   readiness event to wait on before compute() (or `null`: host-complete). `ProtocolError` for a tensor
   *   without a readiness stream contract; the backend's error when the wait or a lazy readiness record
   *   fails; `ResourceExhausted`/`NotSupported` when the backing refuses the release stream.
   */
  receive(): Result<Event | null> {
    const tensor = this.channel!.shift()!;
    this.#current = tensor;
    const ordered = this.#order(tensor);
    if (!ordered.ok) {
      tensor.backing?.releaseLease(null);
      this.#current = undefined;
    }
    return ordered;
  }

  /**
   * Ends the activation for this input: returns the current tensor's lease, recording the release event
   * on the consumer's stream (without a stream on a fused edge or for a host-only consumer). No-op when
   * nothing is current.
   * @throws HsError `InvalidState` when the lease is no longer held (compute() released a lease it did not own).
   */
  release(): void {
    this.readCalled = false;
    if (this.read === 'window') {
      this.#releaseWindow();
      return;
    }
    if (this.read === 'selector' && this.channel !== null && this.channel.pinned) {
      this.#unpinSelector(this.channel);
      return;
    }
    const tensor = this.#current;
    if (tensor === undefined) return;
    this.#current = undefined;
    tensor.backing?.releaseLease(this.fused ? null : this.stream);
  }

  /** `release` of a window: every entry in hand. */
  #releaseWindow(): void {
    const stream = this.fused ? null : this.stream;
    for (let i = 0; i < this.#heldCount; i++) {
      const tensor = this.#held[i]!;
      this.#held[i] = undefined;
      tensor.backing?.releaseLease(stream);
    }
    this.#heldCount = 0;
  }

  /** `release` of a selector read: arrivals during the activation queued; keeps the newest `entries` of them. */
  #unpinSelector(channel: Channel): void {
    this.#selected = 0;
    channel.pinned = false;
    while (channel.length > this.entries) this.#evict(channel.shift()!);
  }

  /**
   * Orders `tensor` after its producer: on the consumer's stream, waits on the readiness event (none when
   * a fused commit deferred it on this very stream) and registers the stream for release (skipped on a
   * proven fused edge); for a host-only consumer, returns the event to wait on.
   */
  #order(tensor: Tensor): Result<Event | null> {
    if (!tensor.hasReadinessStreamContract()) {
      return err(
        ErrorCode.ProtocolError,
        `received tensor ${tensor.name} has no readiness stream contract; the producer must call setReadinessStream() on imported tensors`,
      );
    }
    const readiness = tensor.readinessFor(this.stream);
    if (!readiness.ok || this.stream === null) return readiness;
    if (readiness.value !== null) {
      const waited = this.backend.streamWaitEvent(this.stream, readiness.value);
      if (!waited.ok) return waited;
    }
    if (this.fused || tensor.backing === null) return NO_EVENT;
    const registered = tensor.backing.registerReleaseStream(this.stream);
    return registered.ok ? NO_EVENT : registered;
  }
}

/** The reused `TensorWindow` of one input binding. */
class WindowView implements TensorWindow {
  constructor(private readonly binding: InputBinding) {}

  get length(): number {
    return this.binding.windowLength;
  }

  at(index: number): Tensor {
    const tensor = this.binding.windowAt(index);
    if (tensor === undefined) {
      throw new HsError(ErrorCode.InvalidArgument, `input ${this.binding.name}: window entry ${String(index)} is outside 0..${this.length - 1} (the view is valid only during compute())`);
    }
    return tensor;
  }
}

/** The one result a stream consumer's `receive()` returns on success. */
const NO_EVENT = ok<Event | null>(null);
