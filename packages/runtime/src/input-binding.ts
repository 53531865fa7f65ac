import { type Backend, type Event, type Result, type Stream, ErrorCode, err, ok } from '@hs/streams';
import type { DType, Tensor } from '@hs/tensor';
import type { Channel } from './channel.js';

/** What a consumer declared for one input; checked on pass-through values (ProtocolError on mismatch). */
export interface InputRequirement {
  readonly memoryKind: string | null;
  readonly dtype: DType | null;
  readonly rank: number | null;
}

/** How the session wires one input port: its channel, its declared requirement, whether its edge is fused. */
export interface InputWiring {
  readonly name: string;
  /** The plan edge's (or imported topic's) queue; `null` for an unconnected optional input. */
  readonly channel: Channel | null;
  readonly requirement: InputRequirement;
  /** A proven fused edge: no self-wait, no release registration, lease returned without a release stream. */
  readonly fused: boolean;
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
 * The binding is made once per input when the session is created and reused for every activation; a
 * stream consumer's `receive()` returns one preallocated result, so nothing is allocated per frame here.
 * Spec: "Two stream roles order every device tensor", "Receive: the tensor arrives pre-ordered",
 * "When the fences disappear: proven linear chains" (the fused edge).
 */
export class InputBinding {
  readonly name: string;
  readonly channel: Channel | null;
  readonly requirement: InputRequirement;
  readonly fused: boolean;
  #current: Tensor | undefined = undefined;

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
  }

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
    const tensor = this.#current;
    if (tensor === undefined) return;
    this.#current = undefined;
    tensor.backing?.releaseLease(this.fused ? null : this.stream);
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

/** The one result a stream consumer's `receive()` returns on success. */
const NO_EVENT = ok<Event | null>(null);
