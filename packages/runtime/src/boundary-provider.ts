import type { ExecutionPlan, TensorAllocationRecord, TopicEndpointRecord } from '@hs/compiler';
import type { TensorPool } from '@hs/pool';
import type { Backend, ErrorCode, HsError, Result, Stream } from '@hs/streams';
import type { Tensor } from '@hs/tensor';

/**
 * What the session asks a `BoundaryProvider` to export: one published output's boundary pool.
 */
export interface PublicationRequest {
  /** The plan the session runs. */
  readonly plan: ExecutionPlan;
  /** The session's backend. */
  readonly backend: Backend;
  /** The pool's record; `record.boundary` is non-null (topic, transport, staging, fence, depths). */
  readonly record: TensorAllocationRecord;
  /** The topic's `publish` endpoint record (device, stream id, subscriber queue depth). */
  readonly endpoint: TopicEndpointRecord;
  /** The producer's planned stream (materialized), or `null` for a host writer. */
  readonly producerStream: Stream | null;
  /** Call when a release arrives (slots may be free again): the session's scheduler runs a turn soon. Cheap, idempotent. */
  readonly wake: () => void;
}

/** One subscriber a publication dropped, as the session's metrics report it (`TopicMetrics.lastLoss`). */
export interface TopicSubscriberLoss {
  /** The subscriber's process id. */
  readonly pid: number;
  /**
   * Why it was dropped, as the provider names it; `@hs/ipc` says `closed` (its connection ended),
   * `processGone`, `attachTimeout` (it connected but did not ATTACH within the deadline, so it was never lent a
   * slot), `leaseTimeout` (it held a slot too long), `protocolViolation` (a malformed frame) or `mailboxFailed` (the
   * publisher could not serve the mailbox the subscriber attached through).
   */
  readonly reason: string;
  /** The typed error's code: `InvalidState` (closed, process gone, mailbox failed), `ResourceExhausted` (lease timeout) or `ProtocolError` (attach timeout, a malformed frame). */
  readonly code: ErrorCode;
  /** The typed error's detail, its message without the code (names the topic, the pid and what happened). */
  readonly detail: string;
}

/**
 * What a publication reports about its subscribers: the session copies it into `RunMetrics.topics`, so
 * a dropped subscriber (its slots reclaimed while the producer runs on) is visible in `metrics()` and in
 * every `'metrics'` event. Spec: "Crossing process boundaries: the generation fence" (the warning on
 * returning slots: a crashed or hung importer is dropped and the side that reclaimed gets a typed error).
 */
export interface BoundaryPublicationStats {
  /** Subscribers attached now. */
  readonly subscribers: number;
  /** Subscribers dropped since the publication was created (every one of their slots was reclaimed). */
  readonly subscribersLost: number;
  /** Read leases reclaimed from dropped subscribers (one per slot a subscriber still held), in total. */
  readonly reclaimedLeases: number;
  /** The latest drop, or `null` when no subscriber was dropped (the last entry of `losses`). */
  readonly lastLoss: TopicSubscriberLoss | null;
  /**
   * The latest drops, oldest first, a bounded number of them (`@hs/ipc`: 64): a burst of drops keeps
   * every cause, not only the last. `subscribersLost` is the total, so `subscribersLost - losses.length`
   * drops are no longer listed. Optional for other providers; `@hs/ipc` always reports it.
   */
  readonly losses?: readonly TopicSubscriberLoss[];
}

/**
 * One exported topic, owned by the session from `RunSession.create()` to `dispose()`.
 * Spec: "Crossing process boundaries: the generation fence", warning on returning slots.
 */
export interface BoundaryPublication {
  /**
   * The boundary pool, materialized by the provider in memory other processes can map, with the
   * record's geometry. The session lends it like any pool; for a `direct` boundary it is the output's pool.
   */
  readonly pool: TensorPool;
  /**
   * Sends a tensor the producer just emitted from `pool` to every attached subscriber (a `direct`
   * boundary), taking one read lease per subscriber that comes back when its release arrives. For a
   * stream writer it records the generation fence on the producer stream before the descriptor goes
   * out. Never waits. Errors are the provider's (`ProtocolError`, `DeviceError`).
   */
  publish(tensor: Tensor): Result<void>;
  /**
   * For a `copy` boundary: copies a pass-through `tensor` (a foreign or caller-owned tensor) into one
   * slot of `pool` and publishes it: one same-device copy plus the fence for device memory, one
   * device-to-host materialization shared by every subscriber for host memory. The copy runs on
   * `stream` (the producer's), or, for a host-only producer (`null`), on the host when the bytes are
   * host-readable and complete, else on a stream of the provider's own on the tensor's device; the
   * descriptor goes out once the copy completed (the spec's blocking copy: the publication waits, the
   * JS thread never does). `ResourceExhausted` when no slot is free; `InvalidState` when a host-only
   * producer's tensor needs a device copy but has no readiness contract. Never blocks the JS thread.
   * Spec: "Crossing process boundaries: the generation fence" (foreign tensors at a host-contract boundary).
   */
  publishCopy(tensor: Tensor, stream: Stream | null): Result<void>;
  /**
   * Resolves when the topic may start (for example when the subscribers it waits for attached).
   * @returns nothing; rejects with the provider's `HsError` (`NotFound` when the subscribers it waits for
   *   did not attach in time, `AlreadyExists`, `DeviceError`, ...), which the session's `run()` rejects with.
   */
  start(): Promise<void>;
  /** Polls subscriber liveness and arrived releases; called every scheduler turn. Never waits. */
  poll(): void;
  /** The subscriber figures for the session's metrics; cheap (called per metrics snapshot), never waits. */
  stats(): BoundaryPublicationStats;
  /** Says goodbye to the subscribers once the run drained (they see the end of the topic). */
  finish(): Promise<void>;
  /** Releases everything (sockets, shared segments, the pool). */
  dispose(): void;
}

/** What the session asks a `BoundaryProvider` to import: one subscribed input. */
export interface SubscriptionRequest {
  /** The plan the session runs. */
  readonly plan: ExecutionPlan;
  /** The session's backend. */
  readonly backend: Backend;
  /** The topic's `subscribe` endpoint record (memory kind, device, local queue depth, dtype, rank). */
  readonly endpoint: TopicEndpointRecord;
  /** The consumer's planned stream (materialized), or `null` for a host-only consumer. */
  readonly consumerStream: Stream | null;
  /** Call when a descriptor or the goodbye arrives: the session's scheduler runs a turn soon. Cheap, idempotent. */
  readonly wake: () => void;
}

/**
 * One imported topic feeding one input, owned by the session.
 * Spec: "Crossing process boundaries: the generation fence", "Pinned-host readiness follows the writer".
 */
export interface BoundarySubscription {
  /**
   * The next imported tensor, or `undefined` when none arrived. Each carries one read lease the
   * session owns (released as for a local edge: on the consumer's stream, or `null`), a `backing` that
   * sends the release back to the publisher once the release stream passed it, and a readiness
   * contract: after the generation fence on the consumer stream for a stream writer, host-complete
   * (nothing to wait for) for a host writer. Never waits.
   */
  next(): Tensor | undefined;
  /** True once the publisher finished (goodbye) and every tensor it sent was taken. */
  readonly ended: boolean;
  /** The typed error that ended the import (the publisher died, a hostile descriptor), or `null`. */
  readonly failure: HsError | null;
  /**
   * Resolves when the subscription is attached and may start.
   * @returns nothing; rejects with the provider's `HsError` (`NotFound` when no publisher answers in time,
   *   `ProtocolError` for a hello the import does not match, ...), which the session's `run()` rejects with.
   */
  start(): Promise<void>;
  /** Polls releases whose stream passed and liveness; called every scheduler turn. Never waits. */
  poll(): void;
  /** Detaches and releases everything. */
  dispose(): void;
}

/**
 * The session's injection point for process boundaries: `@hs/ipc` implements it (shared-memory and
 * CUDA IPC boundary pools, descriptors over Unix sockets, generation fences). A plan with topic
 * endpoints (`plan.topics`) needs one (`RunSessionOptions.boundaries`); the runtime itself knows nothing
 * about transports.
 */
export interface BoundaryProvider {
  /** Exports one boundary pool. Errors: the provider's (`NotSupported`, `AlreadyExists`, `DeviceError`, ...). */
  publish(request: PublicationRequest): Result<BoundaryPublication>;
  /** Imports one topic into one input. Errors: the provider's. */
  subscribe(request: SubscriptionRequest): Result<BoundarySubscription>;
}
