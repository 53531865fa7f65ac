import { randomBytes } from 'node:crypto';
import { ErrorCode, HsError, OK_VOID, err, ok, type Result } from '@hs/streams';
import { errnoCode, errnoErrorCode, loadIpcNative, type DoorbellBinding } from '../ipc-native.js';
import { SharedSegment } from '../shared-segment.js';
import { FRAME_BYTES } from '../wire/frame-layout.js';
import { DrainOutcome, FrameRing } from './frame-ring.js';
import { IMMEDIATE_SCHEDULER, PARK, type MailboxWait, type SpinScheduler } from './mailbox-wait.js';
import {
  DESCRIPTOR_RING_CONTROL,
  MAILBOX_MAGIC,
  MAILBOX_VERSION,
  MailboxHeader,
  RELEASE_RING_CONTROL,
  RING_ENTRIES,
  RingWord,
  mailboxByteSize,
  mailboxCapacity,
  releaseEntries,
} from './mailbox-layout.js';

/** Which topic a mailbox belongs to. */
export interface MailboxAddress {
  readonly topic: string;
  /** Topic id of the HELLO. */
  readonly topicId: number;
  /** Slots of the boundary pool; sizes the rings. */
  readonly slotCount: number;
}

/**
 * What a subscriber received for its mailbox with HELLO (descriptors 2..4, still the caller's): the mailbox
 * segment, the read end of its own doorbell and the write end of the publisher's.
 */
export interface ReceivedMailbox {
  readonly segment: number;
  readonly ownBell: number;
  readonly peerBell: number;
}

/**
 * The doorbell functions when this addon has them; `NotSupported` when it was built without libuv's
 * header, or is older than ABI 6 (no doorbell pipes: `createDoorbellPipe`), and topics then carry
 * descriptors over their socket. `hs doctor` (`@hs/cli`) decides "mailboxes available" the same way.
 */
export function mailboxSupport(): Result<DoorbellBinding> {
  const native = loadIpcNative();
  if (!native.ok) return native;
  const n = native.value;
  if (typeof n.watchDoorbell !== 'function' || typeof n.createDoorbellPipe !== 'function') {
    return err(ErrorCode.NotSupported, 'the @hs/ipc addon was built without topic doorbells (libuv headers were not found next to Node); descriptors go over the socket');
  }
  return ok(n as DoorbellBinding);
}

/**
 * The typed error of a doorbell call, by the errno name (`errnoErrorCode`, as for segments): EMFILE and
 * ENFILE (no descriptor left for the pipe) `ResourceExhausted` naming `ulimit -n`; EPERM a received end
 * that is not the doorbell pipe end the protocol passes. @internal (exported for tests)
 */
export function doorbellError(thrown: unknown, what: string): Result<never> {
  const code = errnoCode(thrown);
  const text = `${what}: ${(thrown as Error).message}`;
  const errorCode = errnoErrorCode(code);
  if (code === 'EPERM') return err(errorCode, `${text}; a doorbell is the end of a pipe the publisher passed with HELLO (its own read end, the publisher's write end)`, thrown);
  if (code === 'EMFILE' || code === 'ENFILE') return err(errorCode, `${text}; too many open files (\`ulimit -n\`)`, thrown);
  return err(errorCode, text, thrown);
}

/**
 * A topic mailbox: the fast path of a host topic between a publisher and one subscriber. One sealed, nameless
 * shared segment (passed with the subscriber's HELLO) holds two frame rings — descriptors out, releases back — and each side has a
 * doorbell, an anonymous pipe whose read end its event loop watches (the subscriber's ends travel with HELLO
 * too, so nothing is named and nobody can squat or replace a doorbell). Sending a frame copies its 256
 * bytes into the ring; the doorbell is rung only when the reader sleeps, and a ring wakes the reader
 * with one kernel wake-up and no socket stream in between. The socket stays for HELLO, ATTACH, GOODBYE and
 * liveness. Frames read from a ring are copied into private memory before use and validated like socket
 * frames; a peer that corrupts a ring's counters is reported through `watch`'s `onCorrupt`.
 *
 * The publisher `create`s it per subscriber and offers it in HELLO (token and descriptors); the subscriber
 * `open`s it and says so in ATTACH. Spec: "Crossing
 * process boundaries: the generation fence" (descriptors), warning "Returning slots across processes can
 * limit throughput" (releases).
 */
export class TopicMailbox {
  readonly #native: DoorbellBinding;
  readonly #segment: SharedSegment;
  readonly #outbox: FrameRing;
  readonly #inbox: FrameRing;
  /** The peer's doorbell (rung after a send) and this side's (watched). */
  readonly #peerBell: number;
  readonly #ownBell: number;
  /** Publisher's end: the subscriber's doorbell ends [its read end, the publisher's write end] until HELLO carried them. */
  #subscriberBells: number[];
  readonly #staging = new Uint32Array(FRAME_BYTES / 4);
  readonly #view = new DataView(this.#staging.buffer);
  #watch: object | null = null;
  #onFrame: ((view: DataView) => boolean) | null = null;
  #onCorrupt: ((error: HsError) => void) | null = null;
  #closed = false;
  /** The spin window after each drained batch, in ms; 0 parks at once. */
  #spinMs = 0;
  #scheduler: SpinScheduler = IMMEDIATE_SCHEDULER;
  /** A poll is scheduled (its handle in `#spinHandle`). */
  #spinning = false;
  #spinHandle: unknown = null;
  /** When the current spin window ends (the scheduler's clock, ms). */
  #spinUntil = 0;
  #polls = 0;
  readonly #poll = (): void => this.#pollRing();

  private constructor(native: DoorbellBinding, segment: SharedSegment, publisherEnd: boolean, capacity: number, bells: { own: number; peer: number }, subscriberBells: number[], token: string) {
    this.#native = native;
    this.#segment = segment;
    const descriptors = new FrameRing(native, segment.bytes, DESCRIPTOR_RING_CONTROL, RING_ENTRIES, capacity);
    const releases = new FrameRing(native, segment.bytes, RELEASE_RING_CONTROL, releaseEntries(capacity), capacity);
    this.#outbox = publisherEnd ? descriptors : releases;
    this.#inbox = publisherEnd ? releases : descriptors;
    this.#ownBell = bells.own;
    this.#peerBell = bells.peer;
    this.#subscriberBells = subscriberBells;
    this.token = token;
  }

  /** 16 lowercase hex digits naming the mailbox (carried by HELLO; its segment's label). */
  readonly token: string;

  /**
   * The publisher's end: makes the segment (both readers start parked) and both doorbell pipes.
   * `NotSupported` without doorbells in the addon; `OutOfMemory` when memory cannot back the segment;
   * `ResourceExhausted` without descriptors left for the pipes; nothing is left behind on failure.
   */
  static create(address: MailboxAddress): Result<TopicMailbox> {
    const support = mailboxSupport();
    if (!support.ok) return support;
    const native = support.value;
    const token = randomBytes(8).toString('hex');
    const capacity = mailboxCapacity(address.slotCount);
    // Sealed and nameless (wire version 2): the subscriber receives it with its HELLO and cannot shrink it.
    const segment = SharedSegment.createSealed({ label: `hs.${address.topic}.m${token}`, byteSize: mailboxByteSize(capacity) });
    if (!segment.ok) return segment;
    const header = new DataView(segment.value.bytes.buffer, segment.value.bytes.byteOffset, RING_ENTRIES);
    header.setUint32(MailboxHeader.magic, MAILBOX_MAGIC, true);
    header.setUint32(MailboxHeader.version, MAILBOX_VERSION, true);
    header.setUint32(MailboxHeader.capacity, capacity, true);
    header.setUint32(MailboxHeader.entryBytes, FRAME_BYTES, true);
    header.setUint32(DESCRIPTOR_RING_CONTROL + RingWord.parked, 1, true);
    header.setUint32(RELEASE_RING_CONTROL + RingWord.parked, 1, true);
    const pipes: [number, number][] = [];
    for (const side of ['publisher', 'subscriber']) {
      try {
        pipes.push(native.createDoorbellPipe());
      } catch (thrown) {
        for (const fd of pipes.flat()) native.closeDoorbell(fd);
        segment.value.close();
        return doorbellError(thrown, `topic ${address.topic}: the ${side}'s mailbox doorbell`);
      }
    }
    const [[ownRead, ownWrite], [peerRead, peerWrite]] = pipes as [[number, number], [number, number]];
    // This side watches its own pipe and rings the subscriber's; the other two ends go with HELLO.
    return ok(new TopicMailbox(native, segment.value, true, capacity, { own: ownRead, peer: peerWrite }, [peerRead, ownWrite], token));
  }

  /**
   * The subscriber's end of the mailbox `token` offered in HELLO: maps the segment and adopts the two doorbell
   * ends received with HELLO (`received`, still the caller's: checked and duplicated), and checks the segment's
   * header against the topic. `PermissionDenied` for a doorbell end that is not a pipe's end of the right
   * direction, `ProtocolError` for a header that does not match or an unsealed segment, `NotSupported`
   * without doorbells in the addon.
   */
  static open(address: MailboxAddress, token: string, received: ReceivedMailbox): Result<TopicMailbox> {
    const support = mailboxSupport();
    if (!support.ok) return support;
    const native = support.value;
    const capacity = mailboxCapacity(address.slotCount);
    // Read/write: the subscriber advances the release ring and parks on the descriptor ring. The segment came
    // with the HELLO; one not sealed against shrinking is refused.
    const segment = SharedSegment.fromDescriptor({ fd: received.segment, byteSize: mailboxByteSize(capacity), access: 'readWrite' });
    if (!segment.ok) return segment;
    const header = new DataView(segment.value.bytes.buffer, segment.value.bytes.byteOffset, RING_ENTRIES);
    const bad =
      header.getUint32(MailboxHeader.magic, true) !== MAILBOX_MAGIC ||
      header.getUint32(MailboxHeader.version, true) !== MAILBOX_VERSION ||
      header.getUint32(MailboxHeader.capacity, true) !== capacity ||
      header.getUint32(MailboxHeader.entryBytes, true) !== FRAME_BYTES;
    if (bad) {
      segment.value.close();
      return err(ErrorCode.ProtocolError, `topic ${address.topic}: mailbox ${token} has a header that does not match the topic (magic, version, ${capacity} entries of ${FRAME_BYTES} bytes)`);
    }
    const adopted: number[] = [];
    for (const [fd, readEnd] of [[received.ownBell, true], [received.peerBell, false]] as const) {
      try {
        adopted.push(native.adoptDoorbell(fd, readEnd));
      } catch (thrown) {
        for (const own of adopted) native.closeDoorbell(own);
        segment.value.close();
        return doorbellError(thrown, `topic ${address.topic}: mailbox ${token}: the ${readEnd ? "subscriber's doorbell (read end)" : "publisher's doorbell (write end)"}`);
      }
    }
    return ok(new TopicMailbox(native, segment.value, false, capacity, { own: adopted[0] as number, peer: adopted[1] as number }, [], token));
  }

  /** Sends one frame (`FRAME_BYTES` bytes) through the outgoing ring; false when it is full or closed. */
  send(frame: Uint8Array): boolean {
    return !this.#closed && this.#outbox.push(frame, this.#peerBell);
  }

  /**
   * Starts watching this side's doorbell: every frame that arrives is handed to `onFrame` (a private
   * copy; return false to stop reading), and a corrupted ring to `onCorrupt` (`ProtocolError`). `wait`
   * (checked by `resolveMailboxWait`) says what happens once the ring is empty: park on the doorbell at
   * once, or poll the ring once per event-loop turn for a spin window first. `scheduler` is for tests.
   */
  watch(onFrame: (view: DataView) => boolean, onCorrupt: (error: HsError) => void, wait: MailboxWait = PARK, scheduler: SpinScheduler = IMMEDIATE_SCHEDULER): Result<void> {
    if (this.#closed || this.#watch !== null) return err(ErrorCode.InvalidState, 'TopicMailbox.watch: closed or already watching');
    this.#onFrame = onFrame;
    this.#onCorrupt = onCorrupt;
    this.#spinMs = wait.kind === 'spin' ? wait.spinMicroseconds / 1000 : 0;
    this.#scheduler = scheduler;
    try {
      this.#watch = this.#native.watchDoorbell(this.#ownBell, () => this.drain());
    } catch (thrown) {
      return err(ErrorCode.InvalidState, `mailbox ${this.token}: its doorbell cannot be watched: ${(thrown as Error).message}`, thrown);
    }
    // Frames sent before the watch began rang a doorbell nobody polled yet; the poll sees those bytes too,
    // but draining now hands them out without waiting for the next turn of the loop.
    this.drain();
    return OK_VOID;
  }

  /**
   * Hands out every frame that arrived, then parks (the peer rings the doorbell for the next one), or,
   * with a spin window, (re)starts the window: the ring is polled once per event-loop turn until it ends.
   */
  drain(): void {
    const onFrame = this.#onFrame;
    if (this.#closed || onFrame === null) return;
    for (;;) {
      const outcome = this.#inbox.drain(this.#staging, this.#view, onFrame);
      if (outcome === DrainOutcome.Stopped || this.#closed) return;
      if (outcome === DrainOutcome.Corrupt) {
        this.#onCorrupt?.(new HsError(ErrorCode.ProtocolError, `mailbox ${this.token}: the peer's ring tail is beyond the ring's capacity (corrupted control block)`));
        return;
      }
      if (this.#spinMs > 0) {
        this.#spin();
        return;
      }
      if (this.#inbox.park()) return;
    }
  }

  /** Polls made by spin windows so far. @internal (tests) */
  get spinPolls(): number {
    return this.#polls;
  }

  /** True while a spin window is open (a poll is scheduled). @internal (tests) */
  get spinning(): boolean {
    return this.#spinning;
  }

  /** Opens (or extends) the spin window: awake, so the writer commits without ringing, and one poll per turn. */
  #spin(): void {
    this.#spinUntil = this.#scheduler.now() + this.#spinMs;
    if (this.#spinning) return;
    this.#inbox.unpark();
    this.#spinning = true;
    this.#spinHandle = this.#scheduler.schedule(this.#poll);
  }

  /** One poll of a spin window: drain what came, else poll again next turn, else park once the window is over. */
  #pollRing(): void {
    this.#spinning = false;
    this.#spinHandle = null;
    if (this.#closed || this.#onFrame === null) return;
    this.#polls++;
    if (this.#inbox.pending() !== 0) {
      this.drain();
      return;
    }
    if (this.#scheduler.now() < this.#spinUntil) {
      this.#spinning = true;
      this.#spinHandle = this.#scheduler.schedule(this.#poll);
      return;
    }
    // The window is over: sleep on the doorbell, unless a frame came between the last look and parking.
    if (!this.#inbox.park()) this.drain();
  }

  /**
   * The descriptors to pass with the subscriber's HELLO, after the data segment (publisher's end): the
   * mailbox segment, the subscriber's doorbell read end, the publisher's doorbell write end. Empty once released.
   */
  get descriptors(): readonly number[] {
    const segment = this.#segment.descriptor;
    return segment < 0 ? [] : [segment, ...this.#subscriberBells];
  }

  /** Closes the publisher's copies of what HELLO carried (the segment's descriptor, the subscriber's doorbell ends); the mapping stays. */
  releaseDescriptors(): void {
    this.#segment.closeDescriptor();
    for (const fd of this.#subscriberBells) this.#native.closeDoorbell(fd);
    this.#subscriberBells = [];
  }

  /** Stops watching, closes the doorbells and unmaps the segment. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#spinning) this.#scheduler.cancel(this.#spinHandle);
    this.#spinning = false;
    this.#spinHandle = null;
    if (this.#watch !== null) this.#native.unwatchDoorbell(this.#watch);
    this.#watch = null;
    this.releaseDescriptors();
    this.#native.closeDoorbell(this.#ownBell);
    this.#native.closeDoorbell(this.#peerBell);
    this.#segment.close();
  }
}
