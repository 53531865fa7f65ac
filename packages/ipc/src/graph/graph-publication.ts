import type { BoundaryPublication, BoundaryPublicationStats } from '@hs/runtime';
import type { TensorLoan, TensorPool, WriteGuard } from '@hs/pool';
import { ErrorCode, OK_VOID, err, ok, type Backend, type Device, type Event, type Result, type Stream } from '@hs/streams';
import type { Tensor } from '@hs/tensor';
import { PublicationSubscribers } from '../publication-subscribers.js';
import type { TopicPublisher } from '../topic-publisher.js';

/**
 * A stream staged copies run on, with one completion event per boundary slot (at most one copy per slot
 * is in flight, since each holds its slot's loan).
 */
interface CopyLane {
  /** The publication's own stream (for producers without one), or `null`: the producer stream `publishCopy` is given. */
  readonly stream: Stream | null;
  readonly events: readonly Event[];
  readonly free: Event[];
}

/** A pass-through tensor being copied device-to-host into a boundary slot; published once the copy completed. */
interface StagedCopy {
  readonly loan: TensorLoan;
  readonly guard: WriteGuard;
  readonly done: Event;
  readonly lane: CopyLane;
}

/**
 * A graph output exported through a host or pinnedHost `TopicPublisher` (host writer, no fence): the
 * session lends the publisher's pool, and every emitted tensor is published in place.
 *
 * A pass-through output (a foreign or caller-owned tensor at this host-contract boundary) is
 * materialized into one boundary slot, once, and that one slot is what every subscriber maps: the
 * spec's single device-to-host materialization shared by all subscribers. Its descriptor goes out only
 * after the copy completed (the spec's blocking copy); what waits is the publication, never the JS
 * thread:
 * - bytes that are host-readable and complete now (host-accessible memory whose readiness passed) are
 *   copied on the host at once and published;
 * - otherwise the copy is enqueued device-to-host after the tensor's readiness, on the producer's
 *   stream, or, for a producer without one, on a stream this publication makes on the tensor's device
 *   when the first such tensor arrives (once per device for the run, with one event per slot);
 *   `poll()` publishes each copy, in emit order, when its completion event has passed.
 * A caller-owned tensor must stay valid until its copy completed: a producer with a stream frees it in
 * stream order on that stream; a producer without one cannot observe the copy's completion, so it keeps
 * such tensors until the run ended (or until its own consumers are done with them). A tensor a
 * producer without a stream hands over must have a readiness contract (`setReadinessStream()`), unless
 * its bytes are host-readable now: nothing else orders the copy after its writes (`InvalidState`).
 *
 * A subscriber the publisher drops (`subscriberLost`: closed, process gone, lease timeout, protocol
 * violation) is counted in `stats()`, which the session reports in `RunMetrics.topics`.
 * Spec: "Crossing process boundaries: the generation fence" (foreign tensors at a host-contract boundary).
 */
export class GraphPublication implements BoundaryPublication {
  readonly #staged: StagedCopy[] = [];
  /** Copies on the producer's stream: the events made for its device when the publication was created. */
  readonly #producerLane: CopyLane;
  /** Copies of producers without a stream: one lane per device, made on first use. */
  readonly #ownLanes = new Map<Device, CopyLane>();
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
    this.#producerLane = { stream: null, events: copyEvents, free: [...copyEvents] };
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
    const staged = this.#materialize(tensor, stream, loan.value, guard.value);
    if (!staged.ok) guard.value.abandon();
    return staged;
  }

  start(): Promise<void> {
    return this.#subscribers.awaitAttached(this.awaitSubscribers, this.subscriberTimeoutMs);
  }

  poll(): void {
    // In emit order: a copy that completed behind an earlier, slower one waits for it.
    while (this.#staged.length > 0) {
      const next = this.#staged[0] as StagedCopy;
      if (!this.backend.queryEvent(next.done)) return;
      this.#staged.shift();
      next.lane.free.push(next.done);
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
    for (const event of this.#producerLane.events) this.backend.destroyEvent(event);
    for (const lane of this.#ownLanes.values()) {
      for (const event of lane.events) this.backend.destroyEvent(event);
      if (lane.stream !== null) this.backend.destroyStream(lane.stream);
    }
    this.#ownLanes.clear();
    void this.publisher.close();
  }

  /** Stops listening to the publisher. */
  #detach(): void {
    this.publisher.off('slotsReturned', this.wake);
    this.#subscribers.detach();
  }

  /**
   * Copies `tensor` into the slot `guard` writes: on the host now when its bytes are host-readable and
   * complete, else device-to-host on a lane (staged until `poll()` sees it done). The caller abandons
   * the guard on failure.
   */
  #materialize(tensor: Tensor, stream: Stream | null, loan: TensorLoan, guard: WriteGuard): Result<void> {
    const target = guard.tensor.mutableHostView();
    if (!target.ok) return target;
    const hostReadiness = tensor.readinessFor(null);
    if (!hostReadiness.ok) return hostReadiness;
    if (hostReadiness.value === null || this.backend.queryEvent(hostReadiness.value)) {
      const source = tensor.hostView();
      if (source.ok) {
        target.value.set(source.value);
        return this.#commitAndPublish(loan, guard);
      }
    }
    if (stream === null && !tensor.hasReadinessStreamContract()) {
      return err(
        ErrorCode.InvalidState,
        `topic ${this.publisher.topic}: ${tensor.name} is not host-readable and has no readiness contract, so its device-to-host copy cannot be ordered after its writes; ` +
          "call tensor.setReadinessStream(stream) with the stream that wrote it, or give the operator a stream (spec.requireCudaStream())",
      );
    }
    const lane = stream === null ? this.#ownLane(tensor, hostReadiness.value) : ok(this.#producerLane);
    if (!lane.ok) return lane;
    const copyStream = stream ?? (lane.value.stream as Stream);
    const done = lane.value.free.pop();
    if (done === undefined) {
      return err(ErrorCode.InvalidState, `topic ${this.publisher.topic}: no copy event is free on ${copyStream.label}; the producer's stream is not the one this publication was planned for`);
    }
    const readiness = tensor.readinessFor(copyStream);
    const waited = !readiness.ok ? readiness : readiness.value === null ? OK_VOID : this.backend.streamWaitEvent(copyStream, readiness.value);
    const copied = waited.ok ? this.backend.copyToHostAsync(copyStream, target.value, tensor.data()) : waited;
    const recorded = copied.ok ? this.backend.recordEvent(done, copyStream) : copied;
    if (!recorded.ok) {
      lane.value.free.push(done);
      return recorded;
    }
    this.#staged.push({ loan, guard, done, lane: lane.value });
    return OK_VOID;
  }

  /**
   * The lane for copies of a producer without a stream: on the device the tensor's bytes live on (or,
   * for host memory, where its readiness event was recorded), made the first time that device is seen:
   * one stream and one completion event per boundary slot, destroyed with the publication.
   */
  #ownLane(tensor: Tensor, readiness: Event | null): Result<CopyLane> {
    const device = tensor.device.isCuda ? tensor.device : (readiness?.device ?? null);
    if (device === null || !device.isCuda) {
      return err(ErrorCode.InvalidState, `topic ${this.publisher.topic}: ${tensor.name} is neither host-readable nor on a CUDA device, so there is no stream to copy it on`);
    }
    const known = this.#ownLanes.get(device);
    if (known !== undefined) return ok(known);
    const made = this.backend.createStream(device, { label: `topic ${this.publisher.topic} staging on ${device.toString()}` });
    if (!made.ok) return made;
    const events: Event[] = [];
    for (let i = 0; i < this.pool.slotCount; i++) {
      const event = this.backend.createEvent(device, { label: `topic ${this.publisher.topic} staging copy ${i}` });
      if (!event.ok) {
        for (const e of events) this.backend.destroyEvent(e);
        this.backend.destroyStream(made.value);
        return event;
      }
      events.push(event.value);
    }
    const lane: CopyLane = { stream: made.value, events, free: [...events] };
    this.#ownLanes.set(device, lane);
    return ok(lane);
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
