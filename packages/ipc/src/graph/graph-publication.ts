import type { BoundaryPublication, BoundaryPublicationStats } from '@hs/runtime';
import type { TensorLoan, TensorPool, WriteGuard } from '@hs/pool';
import { ErrorCode, OK_VOID, err, type Backend, type Event, type Result, type Stream } from '@hs/streams';
import type { Tensor } from '@hs/tensor';
import { PublicationSubscribers } from '../publication-subscribers.js';
import type { TopicPublisher } from '../topic-publisher.js';

/** A pass-through tensor being copied device-to-host into a boundary slot; published once the copy completed. */
interface StagedCopy {
  readonly loan: TensorLoan;
  readonly guard: WriteGuard;
  readonly done: Event;
}

/**
 * A graph output exported through a host or pinnedHost `TopicPublisher` (host writer, no fence): the
 * session lends the publisher's pool, and every emitted tensor is published in place. A pass-through
 * output is copied into a slot first: at once (a host copy) when its bytes are host-readable and
 * complete, else one device-to-host copy on the producer stream, ordered after the tensor's readiness,
 * whose descriptor goes out when a poll finds the copy done (no host wait, one copy for every subscriber).
 * A subscriber the publisher drops (`subscriberLost`: closed, process gone, lease timeout, protocol
 * violation) is counted in `stats()`, which the session reports in `RunMetrics.topics`.
 * Spec: "Crossing process boundaries: the generation fence" (foreign tensors at a host-contract boundary).
 */
export class GraphPublication implements BoundaryPublication {
  readonly #staged: StagedCopy[] = [];
  readonly #freeEvents: Event[] = [];
  readonly #copyEvents: readonly Event[];
  /** The publisher's dropped subscribers (for `stats()`) and the wait for the awaited ones. */
  readonly #subscribers: PublicationSubscribers;

  constructor(
    private readonly backend: Backend,
    private readonly publisher: TopicPublisher,
    /** Subscribers `start()` waits for (0: start at once). */
    private readonly awaitSubscribers: number,
    /** How long `start()` waits for them, in ms. */
    private readonly subscriberTimeoutMs: number,
    /** Copy-completion events, one per slot (empty unless the output is a pass-through on a CUDA stream). */
    copyEvents: readonly Event[],
    /** The session's wake: called when released slots are back, so a producer waiting for a slot runs at once. */
    private readonly wake: () => void,
  ) {
    this.#copyEvents = copyEvents;
    this.#freeEvents.push(...copyEvents);
    this.#subscribers = new PublicationSubscribers(publisher);
    publisher.on('slotsReturned', wake);
  }

  get pool(): TensorPool {
    return this.publisher.pool;
  }

  publish(tensor: Tensor): Result<void> {
    const sent = this.publisher.publish(tensor);
    return sent.ok ? OK_VOID : sent;
  }

  publishCopy(tensor: Tensor, stream: Stream | null): Result<void> {
    const loan = this.pool.allocateTensor({ shape: tensor.shape, dtype: tensor.dtype });
    if (!loan.ok) return loan;
    const guard = loan.value.write(null);
    if (!guard.ok) {
      loan.value.abandon();
      return guard;
    }
    const readiness = tensor.readinessFor(null);
    const target = guard.value.tensor.mutableHostView();
    if (!readiness.ok || !target.ok) {
      guard.value.abandon();
      return readiness.ok ? (target as Result<never>) : readiness;
    }
    const hostReady = readiness.value === null || this.backend.queryEvent(readiness.value);
    const source = hostReady ? tensor.hostView() : null;
    if (source !== null && source.ok) {
      target.value.set(source.value);
      return this.#commitAndPublish(loan.value, guard.value);
    }
    if (stream === null || this.#freeEvents.length === 0) {
      guard.value.abandon();
      return err(
        ErrorCode.NotSupported,
        `topic ${this.publisher.topic}: ${tensor.name} is not host-readable yet and its producer has no CUDA stream to copy it on; ` +
          'emit complete host tensors from a host-only operator, or give the operator a stream (spec.requireCudaStream())',
      );
    }
    if (readiness.value !== null) {
      const waited = this.backend.streamWaitEvent(stream, readiness.value);
      if (!waited.ok) {
        guard.value.abandon();
        return waited;
      }
    }
    const copied = this.backend.copyToHostAsync(stream, target.value, tensor.data());
    const done = this.#freeEvents.pop() as Event;
    const recorded = copied.ok ? this.backend.recordEvent(done, stream) : copied;
    if (!recorded.ok) {
      this.#freeEvents.push(done);
      guard.value.abandon();
      return recorded;
    }
    this.#staged.push({ loan: loan.value, guard: guard.value, done });
    return OK_VOID;
  }

  start(): Promise<Result<void>> {
    return this.#subscribers.awaitAttached(this.awaitSubscribers, this.subscriberTimeoutMs);
  }

  poll(): void {
    while (this.#staged.length > 0) {
      const next = this.#staged[0] as StagedCopy;
      if (!this.backend.queryEvent(next.done)) return;
      this.#staged.shift();
      this.#freeEvents.push(next.done);
      // A failure here is the publisher's (closed); the slot is returned either way.
      this.#commitAndPublish(next.loan, next.guard);
    }
  }

  stats(): BoundaryPublicationStats {
    return this.#subscribers.stats();
  }

  async finish(): Promise<void> {
    this.#detach();
    await this.publisher.close();
  }

  dispose(): void {
    this.#detach();
    for (const staged of this.#staged.splice(0)) staged.guard.abandon();
    for (const event of this.#copyEvents) this.backend.destroyEvent(event);
    void this.publisher.close();
  }

  /** Stops listening to the publisher. */
  #detach(): void {
    this.publisher.off('slotsReturned', this.wake);
    this.#subscribers.detach();
  }

  #commitAndPublish(loan: TensorLoan, guard: WriteGuard): Result<void> {
    const committed = guard.commit();
    if (!committed.ok) {
      guard.abandon();
      return committed;
    }
    const published = loan.emit();
    if (!published.ok) {
      loan.abandon();
      return published;
    }
    return this.publish(published.value);
  }
}
