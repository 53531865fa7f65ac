import type { Socket } from 'node:net';
import { ErrorCode, HsError } from '@hs/streams';
import { processAlive } from './socket-peer.js';
import { goodbyeFrame, releaseGeneration } from './wire/control-frames.js';
import { GoodbyeReason, Offset } from './wire/frame-layout.js';

/**
 * The read leases one subscriber of a publisher holds: the generation it holds per slot (0: none) and when
 * each was sent. Both publishers (the host boundary's `TopicPublisher` and the device boundary's
 * `DeviceTopicPublisher`) keep one per subscriber: a RELEASE must name the generation held, and dropping the
 * subscriber reclaims every lease at once. Spec: warning "Returning slots across processes can limit
 * throughput" (a slot returns only after every importer released it; a dead or hung one is reclaimed).
 */
export class SubscriberLeases {
  readonly #held: Float64Array;
  /** When each held lease was sent (ms, `performance.now()`). */
  readonly #since: Float64Array;
  #count = 0;

  constructor(slotCount: number) {
    this.#held = new Float64Array(slotCount);
    this.#since = new Float64Array(slotCount);
  }

  /** Slots of the publisher's pool. */
  get slotCount(): number {
    return this.#held.length;
  }

  /** Leases held now. */
  get count(): number {
    return this.#count;
  }

  /** Records that `generation` of `slot` was sent at `nowMs`. */
  hold(slot: number, generation: number, nowMs: number): void {
    this.#held[slot] = generation;
    this.#since[slot] = nowMs;
    this.#count++;
  }

  /** Ends the lease on `generation` of `slot`: null, or why not (a protocol violation's detail). */
  release(slot: number, generation: number): string | null {
    const held = this.#held[slot] as number;
    if (held !== generation) return `release of slot ${slot} generation ${generation}, but the subscriber holds ${held === 0 ? 'no lease there' : `generation ${held}`}`;
    this.#held[slot] = 0;
    this.#count--;
    return null;
  }

  /**
   * Ends the lease a RELEASE frame (header already checked) names: the released slot, or why the frame is
   * refused (a malformed body, or a generation the subscriber does not hold) for a protocol violation.
   */
  releaseFrame(view: DataView): number | string {
    const generation = releaseGeneration(view, 0, this.#held.length);
    if (typeof generation !== 'number') return generation.error.detail;
    const slot = view.getUint32(Offset.slot, true);
    return this.release(slot, generation) ?? slot;
  }

  /** Ends every lease, calling `onSlot` for each slot that had one; returns how many there were. */
  reclaimAll(onSlot: (slot: number) => void): number {
    let reclaimed = 0;
    for (let slot = 0; slot < this.#held.length; slot++) {
      if (this.#held[slot] === 0) continue;
      this.#held[slot] = 0;
      onSlot(slot);
      reclaimed++;
    }
    this.#count = 0;
    return reclaimed;
  }

  /** The first slot held longer than `timeoutMs` at `nowMs`, or -1. */
  overdueSlot(nowMs: number, timeoutMs: number): number {
    for (let slot = 0; this.#count > 0 && slot < this.#held.length; slot++) {
      if (this.#held[slot] !== 0 && nowMs - (this.#since[slot] as number) > timeoutMs) return slot;
    }
    return -1;
  }
}

/** Why a periodic liveness check drops a subscriber. */
export interface LivenessLoss {
  /** Its process is gone, it sent no ATTACH within the attach timeout, or it held a slot past the lease timeout. */
  readonly reason: 'processGone' | 'attachTimeout' | 'leaseTimeout';
  /**
   * `InvalidState` (process gone), `ProtocolError` (attach timeout) or `ResourceExhausted` (lease timeout),
   * naming the topic, the pid, and the timeout or the slot.
   */
  readonly error: HsError;
}

/** The limits one liveness pass applies (ms; `Infinity`: no limit). */
export interface LivenessLimits {
  /** Longest a connection may stay unattached after its HELLO. */
  readonly attachTimeoutMs: number;
  /** Longest one lease may be held. */
  readonly leaseTimeoutMs: number;
}

/**
 * The liveness verdict on one subscriber of `topic`: null while its process exists, it attached within
 * `attachTimeoutMs` of being accepted, and no lease is older than `leaseTimeoutMs`, else why it must be dropped.
 */
function livenessLoss(topic: string, sub: LeaseHolder, nowMs: number, limits: LivenessLimits): LivenessLoss | null {
  const { pid, leases } = sub;
  // Pid 0: the kernel has no number for a subscriber of an ancestor PID namespace (SO_PEERCRED); kill() cannot
  // ask about it, and the end of its connection reports its death instead.
  if (pid !== 0 && !processAlive(pid)) return { reason: 'processGone', error: new HsError(ErrorCode.InvalidState, `topic ${topic}: subscriber process ${pid} is gone`) };
  if (!sub.attached) {
    if (!(nowMs - sub.acceptedAtMs > limits.attachTimeoutMs)) return null;
    return {
      reason: 'attachTimeout',
      error: new HsError(ErrorCode.ProtocolError, `topic ${topic}: the connection of pid ${pid} sent no ATTACH within attachTimeoutMs (${limits.attachTimeoutMs} ms) of its HELLO; it was dropped to free its place`),
    };
  }
  const leaseTimeoutMs = limits.leaseTimeoutMs;
  if (leases.count === 0 || !Number.isFinite(leaseTimeoutMs)) return null;
  const slot = leases.overdueSlot(nowMs, leaseTimeoutMs);
  if (slot < 0) return null;
  return {
    reason: 'leaseTimeout',
    error: new HsError(ErrorCode.ResourceExhausted, `topic ${topic}: subscriber pid ${pid} held slot ${slot} longer than ${leaseTimeoutMs} ms; its slots were reclaimed`),
  };
}

/** What `dropLapsedSubscribers` needs of a publisher's subscriber record. */
export interface LeaseHolder {
  readonly socket: Socket;
  readonly pid: number;
  /** False until its ATTACH arrived (an unattached connection holds no lease). */
  readonly attached: boolean;
  /** When its connection was accepted (ms, `performance.now()`). */
  readonly acceptedAtMs: number;
  readonly leases: SubscriberLeases;
}

/**
 * One liveness pass over a publisher's subscribers at `nowMs`: a subscriber whose process is gone has its
 * socket destroyed, a connection unattached past `attachTimeoutMs` is sent a GOODBYE (`AttachTimeout`), one
 * holding a slot past `leaseTimeoutMs` a GOODBYE (`LeaseTimeout`); each is handed to `drop` with the loss,
 * which reclaims its leases.
 */
export function dropLapsedSubscribers<S extends LeaseHolder>(subscribers: Iterable<S>, topic: string, topicId: number, limits: LivenessLimits, drop: (sub: S, loss: LivenessLoss) => void, nowMs = performance.now()): void {
  for (const sub of subscribers) {
    const loss = livenessLoss(topic, sub, nowMs, limits);
    if (loss === null) continue;
    if (loss.reason === 'processGone') sub.socket.destroy();
    else sub.socket.end(goodbyeFrame(topicId, loss.reason === 'leaseTimeout' ? GoodbyeReason.LeaseTimeout : GoodbyeReason.AttachTimeout));
    drop(sub, loss);
  }
}
