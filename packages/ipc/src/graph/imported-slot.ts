import { ErrorCode, HsError, OK_VOID, err, type Backend, type DeviceMemory, type Event, type Result, type Stream } from '@hs/streams';
import { Tensor, type DType, type TensorBacking, type TensorInit } from '@hs/tensor';

/**
 * The read-only tensor a graph subscription lends for one slot of a publisher's boundary pool, rebound
 * to each descriptor's layout (no copy, no allocation per frame) over the mapped pool memory.
 */
export class ImportedSlotTensor extends Tensor {
  constructor(init: TensorInit) {
    super(init);
  }

  /** Binds a packed layout at `byteOffset` of the mapped memory with the readiness `event` (`null`: host-complete). */
  bind(dtype: DType, shape: readonly number[], byteOffset: number, byteLimit: number, event: Event | null): Result<void> {
    const bound = this.bindContiguous(dtype, shape, byteOffset, byteLimit);
    if (bound.ok) this.commitReadiness(event);
    return bound;
  }

  /** Makes the handle stale once the slot went back to its publisher; `why` names a reclaim (null: a return). */
  retire(why: string | null = null): void {
    this.invalidate(why);
  }
}

/**
 * One slot of a publisher's boundary pool as this process holds it: the tensor lent to the consumer
 * graph and the `TensorBacking` that counts its read leases and release streams. When the last lease is
 * released, the slot goes back to the publisher (`returnSlot`) once every release stream passed its
 * release event (polled by `poll()`, never waited for). The publisher recycles it only then. It tracks
 * as many distinct release streams as it was given release events: the plan's device-wide bound for
 * the subscribe endpoint (`TopicEndpointRecord.maxReleaseStreams`), so a forwarded import reaches every
 * CUDA consumer the bound admits. When the publisher reclaims the slot first (`reclaim()`: it dropped
 * this subscriber, or the connection ended), the tensor turns stale at once with the reason, so a reader
 * gets `InvalidState` instead of bytes the publisher may rewrite; leases still out then release as no-ops.
 * A host view taken before the reclaim is not protected.
 * Spec: "Crossing process boundaries: the generation fence" (release follows the same discipline).
 */
export class ImportedSlot implements TensorBacking {
  readonly tensor: ImportedSlotTensor;
  readonly #backend: Backend;
  readonly #streams: (Stream | null)[];
  readonly #releaseEvents: Event[];
  readonly #recorded: Uint8Array;
  readonly #completed: Uint8Array;
  readonly #pendingEvents: Event[] = [];
  #leases = 0;
  #published = false;
  #returning = false;
  /** Why the publisher took the slot back while it was lent (see `reclaim`), or null. */
  #reclaimedWhy: string | null = null;

  constructor(
    backend: Backend,
    memory: DeviceMemory,
    name: string,
    /** One release event per admitted release stream (the endpoint's bound, created by the subscription on the consumer's device), or none for a host-only consumer. */
    releaseEvents: readonly Event[],
    /** Sends the slot back to its publisher (a RELEASE frame). */
    private readonly returnSlot: () => void,
  ) {
    this.#backend = backend;
    this.#releaseEvents = [...releaseEvents];
    this.#streams = new Array<Stream | null>(releaseEvents.length).fill(null);
    this.#recorded = new Uint8Array(releaseEvents.length);
    this.#completed = new Uint8Array(releaseEvents.length);
    this.tensor = new ImportedSlotTensor({ backend, memory, backing: this, name });
  }

  /** True while the slot is lent to the graph (bound and not yet returned). */
  get inUse(): boolean {
    return this.#published || this.#returning;
  }

  /**
   * Binds a descriptor's layout with one lease (the one the session's channel owns) and `readiness`
   * (an event recorded on the consumer stream after the fence wait, or `null` for a host writer).
   */
  lend(dtype: DType, shape: readonly number[], byteOffset: number, byteLimit: number, readiness: Event | null): Result<void> {
    const bound = this.tensor.bind(dtype, shape, byteOffset, byteLimit, readiness);
    if (!bound.ok) return bound;
    this.#published = true;
    this.#reclaimedWhy = null;
    this.#leases = 1;
    return OK_VOID;
  }

  registerReleaseStream(stream: Stream): Result<void> {
    if (!this.#published) return this.#notLent();
    let free = -1;
    const cap = this.#releaseEvents.length;
    for (let i = 0; i < cap; i++) {
      if (this.#streams[i] === stream) return OK_VOID;
      if (this.#streams[i] === null && free < 0) free = i;
    }
    if (free < 0) {
      return err(
        ErrorCode.ResourceExhausted,
        cap === 0
          ? `${this.tensor.name}: the subscription has no CUDA stream, so it made no release events and cannot track stream "${stream.label}"`
          : `${this.tensor.name}: already tracks ${cap} distinct release streams, the plan's device-wide bound for this subscription; the extra consumer stream is rejected`,
      );
    }
    this.#streams[free] = stream;
    return OK_VOID;
  }

  acquireLease(): Result<void> {
    if (!this.#published) return this.#notLent();
    this.#leases++;
    return OK_VOID;
  }

  releaseLease(releaseStream: Stream | null): void {
    if (this.#leases === 0) throw new HsError(ErrorCode.InvalidState, `${this.tensor.name}: releaseLease() without a lease`);
    if (this.#reclaimedWhy !== null) {
      this.#leases--; // the publisher took the slot back already: nothing to record or return
      return;
    }
    if (releaseStream !== null) {
      const i = this.#streams.indexOf(releaseStream);
      if (i < 0) throw new HsError(ErrorCode.InvalidState, `${this.tensor.name}: release stream ${releaseStream.label} was never registered`);
      const recorded = this.#backend.recordEvent(this.#releaseEvents[i] as Event, releaseStream);
      if (!recorded.ok) throw recorded.error;
      this.#recorded[i] = 1;
    }
    this.#leases--;
    if (this.#leases > 0) return;
    this.#published = false;
    this.#returning = true;
    this.tensor.retire();
    this.poll();
  }

  /** Sends the slot back once every recorded release event completed; returns true when it did. Never waits. */
  poll(): boolean {
    if (!this.#returning) return false;
    const pending = this.#pendingEvents;
    pending.length = 0;
    for (let i = 0; i < this.#releaseEvents.length; i++) if (this.#recorded[i] === 1) pending.push(this.#releaseEvents[i] as Event);
    if (pending.length > 0 && this.#backend.queryEvents(pending, this.#completed) < pending.length) return false;
    this.#recorded.fill(0);
    this.#streams.fill(null);
    this.#returning = false;
    this.returnSlot();
    return true;
  }

  /**
   * The publisher reclaimed the slot while it was lent or on its way back (`why`: when and why, for the
   * tensor's `InvalidState`): the tensor turns stale now, nothing is returned, and the leases still out
   * release as no-ops. Nothing for a slot not in use.
   */
  reclaim(why: string): void {
    if (!this.inUse) return;
    this.#reclaimedWhy = why;
    this.#published = false;
    this.#returning = false;
    this.#recorded.fill(0);
    this.#streams.fill(null);
    this.tensor.retire(why);
  }

  #notLent(): Result<never> {
    return err(ErrorCode.InvalidState, `${this.tensor.name} is not lent${this.#reclaimedWhy === null ? '' : `: ${this.#reclaimedWhy}`}`);
  }

  /** Forgets the slot without returning it (the channel closed; the publisher reclaims it). */
  abandon(): void {
    this.#published = false;
    this.#returning = false;
    this.#leases = 0;
    this.#recorded.fill(0);
    this.#streams.fill(null);
    this.tensor.retire();
  }
}
