import type { Socket } from 'node:net';
import { ErrorCode, HsError } from '@hs/streams';
import type { Tensor, TensorBacking } from '@hs/tensor';
import { FrameReader } from './frame-reader.js';
import { sendHello } from './hello-connection.js';
import type { TopicMailbox } from './mailbox/topic-mailbox.js';
import type { MailboxWait } from './mailbox/mailbox-wait.js';
import { checkedSocketPeer } from './socket-peer.js';
import { SubscriberLeases, dropLapsedSubscribers } from './subscriber-leases.js';
import type { SubscriberLimits } from './topic-options.js';
import { attachUsesMailbox, goodbyeFrame } from './wire/control-frames.js';
import { readFrameHeader } from './wire/frame-header.js';
import { FrameType, GoodbyeReason } from './wire/frame-layout.js';

/**
 * Why a subscriber's slots were reclaimed. `mailboxFailed` is the publisher's own failure: the subscriber
 * attached through its mailbox, but this process could not watch the mailbox's doorbell (for example out of
 * file descriptors); the subscriber is told `GOODBYE` closed, not accused of a protocol violation.
 * `attachTimeout`: a connection sent no ATTACH within `attachTimeoutMs` (it held no lease); host and device
 * topics alike since wire version 2.
 */
export type SubscriberLossReason = 'closed' | 'processGone' | 'attachTimeout' | 'leaseTimeout' | 'protocolViolation' | 'mailboxFailed';

/** The `subscriberLost` event of both publishers: a subscriber went away or was dropped and its slots came back. */
export interface SubscriberLost {
  /** The subscriber's process id (from SO_PEERCRED). */
  readonly pid: number;
  /** What ended it: the socket closed, the process vanished, no ATTACH in time, a lease timed out, a bad frame, or this publisher could not serve its mailbox. */
  readonly reason: SubscriberLossReason;
  /** Read leases that were reclaimed (slots the subscriber still held). */
  readonly reclaimedLeases: number;
  /** `InvalidState` (closed, process gone, mailbox failed), `ResourceExhausted` (lease timeout) or `ProtocolError` (a bad frame, no ATTACH in time). */
  readonly error: HsError;
}

/** One subscriber of a publisher: its connection, the read leases it holds, and where its descriptors go. */
export interface SubscriberSession {
  readonly socket: Socket;
  /** Its process id (from SO_PEERCRED). */
  readonly pid: number;
  /**
   * False until its ATTACH arrived (host and device topics): it is sent no descriptor, lent no lease, and
   * does not count in `attachedCount`; it takes a place under `maxSubscribers` only until `attachTimeoutMs` passed.
   */
  attached: boolean;
  /** When its connection was accepted (ms, `performance.now()`): the start of its attach deadline. */
  readonly acceptedAtMs: number;
  /** The mailbox offered to it (kept when it attached through it), or null: descriptors go over the socket. */
  mailbox: TopicMailbox | null;
  /** The read leases it holds, by slot. */
  readonly leases: SubscriberLeases;
  /** True once it was dropped (its leases are reclaimed; nothing more is sent or read). */
  gone: boolean;
  /** True while the socket is corked for this turn's descriptors (the publisher's own use). */
  corked: boolean;
}

/**
 * What differs between the publishers that share `SubscriberSessions`, besides their limits (`topic`, in
 * every error text; `maxSubscribers`, attached or on their way, one more is refused by destroying its socket;
 * `attachTimeoutMs`, past which a connection that sent no ATTACH is dropped (GOODBYE attach timeout): every
 * subscriber joins with ATTACH, a device topic's once it imported the CUDA IPC handle, and is lent nothing
 * before it; `leaseTimeoutMs`, past which a subscriber holding one slot is dropped, `Infinity` for none;
 * `livenessIntervalMs`, the period of the pid, attach-deadline and lease-age checks).
 */
export interface SubscriberSessionsOptions extends SubscriberLimits {
  /** The topic id every frame carries. */
  readonly topicId: number;
  /** Offers a new subscriber a mailbox, or null (then descriptors go over its socket); omitted: never. */
  readonly offerMailbox?: (slotCount: number) => TopicMailbox | null;
  /** How the mailboxes' release rings are waited on; default park. */
  readonly wait?: MailboxWait;
  /** A subscriber was sent its HELLO. */
  readonly onAccepted?: () => void;
  /** A subscriber's ATTACH was read: it counts in `attachedCount` and is lent what is published from now on. */
  readonly onAttached?: () => void;
  /** Read leases came back: after a RELEASE, and after a drop reclaimed a subscriber's (`closing`: within `close()`). */
  readonly onLeasesReturned: (closing: boolean) => void;
  /** A subscriber was dropped, with why and how many leases came back (not for the goodbyes of `close()`). */
  readonly onLost: (lost: SubscriberLost) => void;
}

/** What `SubscriberSessions.open` needs to send HELLO: the pool's slot count and the frame for a subscriber. */
export interface SubscriberTopic {
  readonly slotCount: number;
  /** The 256-byte HELLO for a subscriber offered `mailbox` (null: none). */
  hello(mailbox: TopicMailbox | null): Buffer;
  /**
   * The descriptors that travel with that HELLO (SCM_RIGHTS, wire version 2): a host topic's data segment,
   * then the mailbox's. Omitted: none (device topics).
   */
  descriptors?(mailbox: TopicMailbox | null): readonly number[];
}

type Loss = { readonly reason: SubscriberLossReason; readonly error: HsError };

/**
 * The publisher side of the subscriber protocol, shared by `TopicPublisher` (host topics) and
 * `DeviceTopicPublisher` (device topics): accept a connection (same-user peer check, subscriber limit),
 * send HELLO, read the subscriber's frames (ATTACH first, then RELEASE and GOODBYE; through
 * its mailbox or its socket), lend and release read leases (to attached subscribers only), and drop a
 * subscriber (closed socket, GOODBYE, protocol violation, vanished process, no ATTACH within the attach
 * timeout, lease timeout) with every lease it held reclaimed and reported.
 * The publisher keeps its pool and its descriptor fan-out; this keeps who holds what.
 * Spec: "Crossing process boundaries: the generation fence", warning "Returning slots across processes can
 * limit throughput" (a dead or hung importer is reclaimed). Wire: docs/ipc-wire-protocol.md, "Lifecycle".
 */
export class SubscriberSessions {
  readonly #options: SubscriberSessionsOptions;
  readonly #subscribers = new Set<SubscriberSession>();
  /** Connections accepted before `open()`: they get their HELLO once the topic is open. */
  readonly #waiting: Socket[] = [];
  readonly #liveness: NodeJS.Timeout;
  #topic: SubscriberTopic | null = null;
  /** Per slot, the generation last published (0: none yet). */
  #generations = new Float64Array(0);
  /** Per slot, the tensor last published there: read leases are taken and returned on its backing. */
  #published: (Tensor | null)[] = [];
  #attachedCount = 0;
  #closed = false;

  constructor(options: SubscriberSessionsOptions) {
    this.#options = options;
    const limits = { attachTimeoutMs: options.attachTimeoutMs, leaseTimeoutMs: options.leaseTimeoutMs };
    this.#liveness = setInterval(() => dropLapsedSubscribers(this.#subscribers, options.topic, options.topicId, limits, (sub, loss) => this.#drop(sub, loss)), options.livenessIntervalMs);
    this.#liveness.unref();
  }

  /** Every subscriber not dropped, attached or not (publishing skips the `gone` ones a drop is removing). */
  get subscribers(): ReadonlySet<SubscriberSession> {
    return this.#subscribers;
  }

  /** Subscribers attached now (their ATTACH was read). */
  get attachedCount(): number {
    return this.#attachedCount;
  }

  /** The generation the next publish of `slot` carries (generations start at 1). */
  nextGeneration(slot: number): number {
    return (this.#generations[slot] as number) + 1;
  }

  /** Records that `tensor` went out as `generation` of `slot`: subscribers' leases on the slot are on its backing. */
  recordPublished(slot: number, generation: number, tensor: Tensor): void {
    this.#generations[slot] = generation;
    this.#published[slot] = tensor;
  }

  /**
   * Takes one read lease of `generation` of `slot` on `backing` for `sub`; false (nothing taken, nothing to
   * send) for a subscriber not attached yet or being dropped, or a backing that refuses the lease.
   */
  lend(sub: SubscriberSession, backing: TensorBacking, slot: number, generation: number, nowMs: number): boolean {
    if (sub.gone || !sub.attached || !backing.acquireLease().ok) return false;
    sub.leases.hold(slot, generation, nowMs);
    return true;
  }

  /** Starts serving: connections get their HELLO from now on (those that waited for it first). */
  open(topic: SubscriberTopic): void {
    this.#topic = topic;
    this.#generations = new Float64Array(topic.slotCount);
    this.#published = new Array<Tensor | null>(topic.slotCount).fill(null);
    for (const socket of this.#waiting.splice(0)) this.accept(socket);
  }

  /**
   * A new connection on the topic socket: refused (destroyed) when its peer is not this user, after
   * `close()` or at `maxSubscribers`; held until `open()`; else a subscriber, sent its HELLO.
   */
  accept(socket: Socket): void {
    const peer = checkedSocketPeer(socket);
    if (!peer.ok || this.#closed || this.#subscribers.size >= this.#options.maxSubscribers) {
      socket.destroy();
      return;
    }
    const topic = this.#topic;
    if (topic === null) {
      this.#waiting.push(socket);
      socket.on('error', () => undefined);
      return;
    }
    const slotCount = topic.slotCount;
    const sub: SubscriberSession = {
      socket,
      pid: peer.value.pid,
      attached: false,
      acceptedAtMs: performance.now(),
      mailbox: this.#options.offerMailbox?.(slotCount) ?? null,
      leases: new SubscriberLeases(slotCount),
      gone: false,
      corked: false,
    };
    // HELLO first, with the segments' descriptors (nothing was written on the connection before it).
    if (!sendHello(socket, topic.hello(sub.mailbox), topic.descriptors?.(sub.mailbox) ?? [])) {
      sub.mailbox?.close();
      socket.destroy();
      return;
    }
    // The subscriber holds the mailbox's descriptors now (or never will: it is then dropped and closed).
    sub.mailbox?.releaseDescriptors();
    this.#subscribers.add(sub);
    socket.setNoDelay(true);
    const reader = new FrameReader((view) => this.#onFrame(sub, view));
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (sub.gone) return;
      this.#drop(sub, { reason: 'closed', error: new HsError(ErrorCode.InvalidState, `topic ${this.#options.topic}: subscriber pid ${sub.pid} closed its connection`) });
    });
    this.#options.onAccepted?.();
  }

  /** Sends `sub` GOODBYE (protocol violation) and drops it, the error naming `detail`. Returns false (stop reading). */
  violation(sub: SubscriberSession, detail: string): boolean {
    const bye = goodbyeFrame(this.#options.topicId, GoodbyeReason.ProtocolViolation);
    sub.socket.end(bye);
    this.#drop(sub, { reason: 'protocolViolation', error: new HsError(ErrorCode.ProtocolError, `topic ${this.#options.topic}: subscriber pid ${sub.pid} dropped: ${detail}`) });
    return false;
  }

  /**
   * Stops the liveness checks, says GOODBYE (closed) to every subscriber and drops it, reclaiming its
   * leases (no loss is reported), and destroys the connections still waiting for `open()`. Idempotent.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#liveness);
    const bye = goodbyeFrame(this.#options.topicId, GoodbyeReason.Closed);
    for (const sub of [...this.#subscribers]) {
      sub.socket.end(bye);
      this.#drop(sub, null);
    }
    for (const socket of this.#waiting.splice(0)) socket.destroy();
  }

  /** A frame from the subscriber's socket: ATTACH first, then RELEASE or GOODBYE. */
  #onFrame(sub: SubscriberSession, view: DataView): boolean {
    const type = readFrameHeader(view, 0, this.#options.topicId);
    if (typeof type !== 'number') return this.violation(sub, type.error.detail);
    if (type === FrameType.Goodbye) {
      sub.socket.end();
      this.#drop(sub, { reason: 'closed', error: new HsError(ErrorCode.InvalidState, `topic ${this.#options.topic}: subscriber pid ${sub.pid} said goodbye`) });
      return false;
    }
    if (!sub.attached) {
      if (type !== FrameType.Attach) return this.violation(sub, `the first frame of a subscriber must be Attach, got ${FrameType[type]}`);
      return this.#attach(sub, view);
    }
    if (type !== FrameType.Release) return this.violation(sub, `an attached subscriber may only send Release and Goodbye frames, got ${FrameType[type]}`);
    return this.#release(sub, view);
  }

  /** ATTACH: the subscriber receives the descriptors published from now on, through its mailbox or the socket. */
  #attach(sub: SubscriberSession, view: DataView): boolean {
    const usesMailbox = attachUsesMailbox(view, 0);
    if (typeof usesMailbox !== 'boolean') return this.violation(sub, usesMailbox.error.detail);
    const mailbox = sub.mailbox;
    if (usesMailbox) {
      if (mailbox === null) return this.violation(sub, 'it attached through a mailbox it was not offered');
      const watched = mailbox.watch(
        (frame) => this.#onRingFrame(sub, frame),
        (error) => this.violation(sub, error.detail),
        this.#options.wait,
      );
      if (!watched.ok) return this.#mailboxFailed(sub, watched.error);
      // The watch drained what the subscriber wrote before its ATTACH; a bad frame there dropped it.
      if (sub.gone) return false;
    } else if (mailbox !== null) {
      mailbox.close();
      sub.mailbox = null;
    }
    sub.attached = true;
    this.#attachedCount++;
    this.#options.onAttached?.();
    return true;
  }

  /** A frame from the subscriber's release ring: only RELEASE travels there. */
  #onRingFrame(sub: SubscriberSession, view: DataView): boolean {
    if (sub.gone) return false;
    const type = readFrameHeader(view, 0, this.#options.topicId);
    if (typeof type !== 'number') return this.violation(sub, type.error.detail);
    if (type !== FrameType.Release) return this.violation(sub, `only Release frames travel through the mailbox, got ${FrameType[type]}`);
    return this.#release(sub, view);
  }

  #release(sub: SubscriberSession, view: DataView): boolean {
    const slot = sub.leases.releaseFrame(view);
    if (typeof slot === 'string') return this.violation(sub, slot);
    this.#releaseLease(slot);
    this.#options.onLeasesReturned(false);
    return true;
  }

  /** Returns one read lease of `slot`; the subscriber held it, so the slot was published (the guard is for a pool already disposed). */
  #releaseLease(slot: number): void {
    this.#published[slot]?.backing?.releaseLease(null);
  }

  /** This publisher cannot serve the mailbox `sub` attached through: GOODBYE (closed) and drop it, naming why. */
  #mailboxFailed(sub: SubscriberSession, cause: HsError): boolean {
    sub.socket.end(goodbyeFrame(this.#options.topicId, GoodbyeReason.Closed));
    const error = new HsError(ErrorCode.InvalidState, `topic ${this.#options.topic}: subscriber pid ${sub.pid} dropped: this publisher cannot serve the mailbox it attached through (${cause.detail})`, { cause });
    this.#drop(sub, { reason: 'mailboxFailed', error });
    return false;
  }

  /** Removes a subscriber and gives back every lease it held; reports it through `onLost` when `loss` is given. */
  #drop(sub: SubscriberSession, loss: Loss | null): void {
    if (sub.gone) return;
    // Releases the subscriber put in its ring before it went away (closed, died, timed out) count as
    // releases, not reclaims. One dropped for a protocol violation is not read any further, and at close()
    // (no loss) every lease is reclaimed anyway.
    if (loss !== null && loss.reason !== 'protocolViolation') sub.mailbox?.drain();
    if (sub.gone) return; // a bad frame in that drain dropped it already
    sub.gone = true;
    this.#subscribers.delete(sub);
    if (sub.attached) this.#attachedCount--;
    sub.mailbox?.close();
    const reclaimedLeases = sub.leases.reclaimAll((slot) => this.#releaseLease(slot));
    this.#options.onLeasesReturned(this.#closed);
    if (loss !== null) this.#options.onLost({ pid: sub.pid, reason: loss.reason, reclaimedLeases, error: loss.error });
  }
}
