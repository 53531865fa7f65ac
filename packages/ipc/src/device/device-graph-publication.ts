import type { BoundaryPublication, BoundaryPublicationStats } from '@hs/runtime';
import type { TensorPool } from '@hs/pool';
import { ErrorCode, OK_VOID, err, type Backend, type Result, type Stream } from '@hs/streams';
import type { Tensor } from '@hs/tensor';
import { PublicationSubscribers } from '../publication-subscribers.js';
import type { DeviceTopicPublisher } from './device-topic-publisher.js';

/**
 * A graph output exported through a `DeviceTopicPublisher`: the session lends its CUDA IPC pool, each
 * emitted tensor is published in place behind its generation fence, and a pass-through output's tensor
 * is copied into a slot first with one same-device copy on the producer stream (ordered after the
 * tensor's readiness), then fenced and published: no host block. A subscriber the publisher drops is
 * counted in `stats()`, which the session reports in `RunMetrics.topics`.
 * Spec: "Crossing process boundaries: the generation fence" (foreign tensors at a device-contract boundary).
 */
export class DeviceGraphPublication implements BoundaryPublication {
  /** The publisher's dropped subscribers (for `stats()`) and the wait for the awaited ones. */
  readonly #subscribers: PublicationSubscribers;

  constructor(
    private readonly backend: Backend,
    private readonly publisher: DeviceTopicPublisher,
    readonly pool: TensorPool,
    private readonly producerStream: Stream,
    private readonly awaitSubscribers: number,
    private readonly subscriberTimeoutMs: number,
  ) {
    this.#subscribers = new PublicationSubscribers(publisher);
  }

  publish(tensor: Tensor): Result<void> {
    const sent = this.publisher.publish(tensor);
    return sent.ok ? OK_VOID : sent;
  }

  publishCopy(tensor: Tensor, stream: Stream | null): Result<void> {
    if (stream !== this.producerStream) {
      return err(ErrorCode.InvalidArgument, `topic ${this.publisher.topic}: a pass-through tensor is copied on the producer's stream ${this.producerStream.label}`);
    }
    if (!tensor.hasReadinessStreamContract()) {
      return err(ErrorCode.ProtocolError, `topic ${this.publisher.topic}: ${tensor.name} has no readiness contract; call setReadinessStream() on imported tensors before emitting them`);
    }
    if (tensor.device !== this.pool.device) {
      return err(ErrorCode.NotSupported, `topic ${this.publisher.topic}: ${tensor.name} is on ${tensor.device.toString()}, the topic on ${this.pool.device.toString()}; hs never copies across devices`);
    }
    const loan = this.pool.allocateTensor({ shape: tensor.shape, dtype: tensor.dtype });
    if (!loan.ok) return loan;
    const guard = loan.value.write(stream);
    if (!guard.ok) {
      loan.value.abandon();
      return guard;
    }
    const readiness = tensor.readinessFor(stream);
    const waited = !readiness.ok ? readiness : readiness.value === null ? OK_VOID : this.backend.streamWaitEvent(stream, readiness.value);
    const copied = waited.ok ? this.backend.memcpyAsync(stream, guard.value.range, tensor.data()) : waited;
    const committed = copied.ok ? guard.value.commit() : copied;
    if (!committed.ok) {
      guard.value.abandon();
      return committed;
    }
    const published = loan.value.emit();
    if (!published.ok) {
      loan.value.abandon();
      return published;
    }
    return this.publish(published.value);
  }

  async start(): Promise<void> {
    // The counters were zeroed on the producer stream: make sure before any subscriber can wait on them.
    await this.backend.synchronizeStream(this.producerStream);
    await this.#subscribers.awaitAttached(this.awaitSubscribers, this.subscriberTimeoutMs);
  }

  /** Nothing to poll: releases and subscriber losses arrive as socket events. */
  poll(): void {}

  stats(): BoundaryPublicationStats {
    return this.#subscribers.stats();
  }

  async finish(): Promise<void> {
    this.#subscribers.detach();
    await this.publisher.close();
  }

  dispose(): void {
    this.#subscribers.detach();
    void this.publisher.close();
  }
}
