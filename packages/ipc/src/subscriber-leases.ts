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
  /** Its process is gone, or it held a slot past the lease timeout. */
  readonly reason: 'processGone' | 'leaseTimeout';
  /** `InvalidState` (process gone) or `ResourceExhausted` (lease timeout), naming the topic, pid and slot. */
  readonly error: HsError;
}

/**
 * The liveness verdict on one subscriber of `topic`: null while its process `pid` exists and no lease is
 * older than `leaseTimeoutMs` (`Infinity` disables the age limit), else why it must be dropped.
 */
function livenessLoss(topic: string, pid: number, leases: SubscriberLeases, nowMs: number, leaseTimeoutMs: number): LivenessLoss | null {
  // Pid 0: the kernel has no number for a subscriber of an ancestor PID namespace (SO_PEERCRED); kill() cannot
  // ask about it, and the end of its connection reports its death instead.
  if (pid !== 0 && !processAlive(pid)) return { reason: 'processGone', error: new HsError(ErrorCode.InvalidState, `topic ${topic}: subscriber process ${pid} is gone`) };
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
  readonly leases: SubscriberLeases;
}

/**
 * One liveness pass over a publisher's subscribers: a subscriber whose process is gone has its socket
 * destroyed, one holding a slot past `leaseTimeoutMs` is sent a GOODBYE (`LeaseTimeout`); both are handed
 * to `drop` with the loss, which reclaims their leases.
 */
export function dropLapsedSubscribers<S extends LeaseHolder>(subscribers: Iterable<S>, topic: string, topicId: number, leaseTimeoutMs: number, drop: (sub: S, loss: LivenessLoss) => void): void {
  const now = performance.now();
  for (const sub of subscribers) {
    const loss = livenessLoss(topic, sub.pid, sub.leases, now, leaseTimeoutMs);
    if (loss === null) continue;
    if (loss.reason === 'leaseTimeout') sub.socket.end(goodbyeFrame(topicId, GoodbyeReason.LeaseTimeout));
    else sub.socket.destroy();
    drop(sub, loss);
  }
}
