import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ErrorCode, HsError, OK_VOID, err, ok, type Result } from '@hs/streams';
import { errnoCode, errnoErrorCode, loadIpcNative, type DoorbellBinding } from '../ipc-native.js';
import { SharedSegment } from '../shared-segment.js';
import { FRAME_BYTES } from '../wire/frame-layout.js';
import { DrainOutcome, FrameRing } from './frame-ring.js';
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

/** Where a mailbox lives: the topic it belongs to and the publisher that made it. */
export interface MailboxAddress {
  /** The topic's socket directory (0700, see `topicDirectory`); the doorbell FIFOs are made there. */
  readonly directory: string;
  readonly topic: string;
  /** Topic id of the HELLO. */
  readonly topicId: number;
  /** The publisher's process id (names its segments). */
  readonly publisherPid: number;
  /** Slots of the boundary pool; sizes the rings. */
  readonly slotCount: number;
}

/**
 * The doorbell functions when this addon has them; `NotSupported` when it was built without libuv's
 * header (topics then carry descriptors over their socket).
 */
export function mailboxSupport(): Result<DoorbellBinding> {
  const native = loadIpcNative();
  if (!native.ok) return native;
  const n = native.value;
  if (typeof n.watchDoorbell !== 'function') {
    return err(ErrorCode.NotSupported, 'the @hs/ipc addon was built without topic doorbells (libuv headers were not found next to Node); descriptors go over the socket');
  }
  return ok(n as DoorbellBinding);
}

/**
 * The typed error of a doorbell call, by the errno name (`errnoErrorCode`, as for segments): ENOSPC or
 * EDQUOT (the runtime directory's file system has no room or no inodes left) `OutOfMemory`, EFBIG, EMFILE,
 * ENFILE `ResourceExhausted`, each with what to check. @internal (exported for tests)
 */
export function doorbellError(thrown: unknown, path: string): Result<never> {
  const code = errnoCode(thrown);
  const what = `mailbox doorbell ${path}: ${(thrown as Error).message}`;
  const errorCode = errnoErrorCode(code);
  if (code === 'EPERM' || code === 'EACCES' || code === 'ELOOP') return err(errorCode, `${what}; a doorbell must be a FIFO of this user with mode 0600`, thrown);
  if (code === 'ENOENT') return err(errorCode, `${what}; the publisher removed it (attach again)`, thrown);
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return err(errorCode, `${what}; the file system of ${dirname(path)} has no room or no inodes left (\`df -h ${dirname(path)}\`, \`df -i ${dirname(path)}\`)`, thrown);
  }
  if (code === 'EMFILE' || code === 'ENFILE') return err(errorCode, `${what}; too many open files (\`ulimit -n\`)`, thrown);
  return err(errorCode, what, thrown);
}

/**
 * A topic mailbox: the fast path of a host topic between a publisher and one subscriber. One sealed, nameless
 * shared segment (passed with the subscriber's HELLO) holds two frame rings — descriptors out, releases back — and each side has a
 * doorbell, a FIFO in the topic directory that its event loop watches. Sending a frame copies its 256
 * bytes into the ring; the doorbell is rung only when the reader sleeps, and a ring wakes the reader
 * with one kernel wake-up and no socket stream in between. The socket stays for HELLO, ATTACH, GOODBYE and
 * liveness. Frames read from a ring are copied into private memory before use and validated like socket
 * frames; a peer that corrupts a ring's counters is reported through `watch`'s `onCorrupt`.
 *
 * The publisher `create`s it per subscriber and offers its token in HELLO; the subscriber `open`s it and
 * says so in ATTACH; the publisher then `unlinkNames()`, so nothing named stays behind. Spec: "Crossing
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
  readonly #paths: readonly string[];
  readonly #staging = new Uint32Array(FRAME_BYTES / 4);
  readonly #view = new DataView(this.#staging.buffer);
  #watch: object | null = null;
  #onFrame: ((view: DataView) => boolean) | null = null;
  #onCorrupt: ((error: HsError) => void) | null = null;
  #closed = false;

  private constructor(native: DoorbellBinding, segment: SharedSegment, publisherEnd: boolean, capacity: number, bells: { own: number; peer: number }, paths: readonly string[], token: string) {
    this.#native = native;
    this.#segment = segment;
    const descriptors = new FrameRing(native, segment.bytes, DESCRIPTOR_RING_CONTROL, RING_ENTRIES, capacity);
    const releases = new FrameRing(native, segment.bytes, RELEASE_RING_CONTROL, releaseEntries(capacity), capacity);
    this.#outbox = publisherEnd ? descriptors : releases;
    this.#inbox = publisherEnd ? releases : descriptors;
    this.#ownBell = bells.own;
    this.#peerBell = bells.peer;
    this.#paths = paths;
    this.token = token;
  }

  /** 16 lowercase hex digits naming the segment and the doorbells (carried by HELLO). */
  readonly token: string;

  /**
   * The publisher's end: makes the segment (both readers start parked) and both doorbells. `NotSupported`
   * without doorbells in the addon; `OutOfMemory` when /dev/shm is full; nothing is left behind on failure.
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
    const [ownPath, peerPath] = doorbellPaths(address, token, true);
    const made: number[] = [];
    const undo = (failure: Result<never>): Result<never> => {
      for (const fd of made) native.closeDoorbell(fd);
      for (const path of [ownPath, peerPath].slice(0, made.length)) unlinkQuietly(path);
      segment.value.close();
      return failure;
    };
    for (const path of [ownPath, peerPath]) {
      try {
        made.push(native.createDoorbell(path));
      } catch (thrown) {
        return undo(doorbellError(thrown, path));
      }
    }
    return ok(new TopicMailbox(native, segment.value, true, capacity, { own: made[0] as number, peer: made[1] as number }, [ownPath, peerPath], token));
  }

  /**
   * The subscriber's end of the mailbox `token` offered in HELLO: opens both doorbells (FIFOs of this user,
   * mode 0600, never through a symlink) and maps the segment received with HELLO (`fd`), and checks its header against the topic.
   * `PermissionDenied` for a doorbell or segment of another user or mode, `NotFound` when gone,
   * `ProtocolError` for a header that does not match, `NotSupported` without doorbells in the addon.
   */
  static open(address: MailboxAddress, token: string, fd: number): Result<TopicMailbox> {
    const support = mailboxSupport();
    if (!support.ok) return support;
    const native = support.value;
    const capacity = mailboxCapacity(address.slotCount);
    // Read/write: the subscriber advances the release ring and parks on the descriptor ring. The segment came
    // with the HELLO (descriptor `fd`, still the caller's); one not sealed against shrinking is refused.
    const segment = SharedSegment.fromDescriptor({ fd, byteSize: mailboxByteSize(capacity), access: 'readWrite' });
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
    const paths = doorbellPaths(address, token, false);
    const opened: number[] = [];
    for (const path of paths) {
      try {
        opened.push(native.openDoorbell(path));
      } catch (thrown) {
        for (const fd of opened) native.closeDoorbell(fd);
        segment.value.close();
        return doorbellError(thrown, path);
      }
    }
    return ok(new TopicMailbox(native, segment.value, false, capacity, { own: opened[0] as number, peer: opened[1] as number }, [], token));
  }

  /** Sends one frame (`FRAME_BYTES` bytes) through the outgoing ring; false when it is full or closed. */
  send(frame: Uint8Array): boolean {
    return !this.#closed && this.#outbox.push(frame, this.#peerBell);
  }

  /**
   * Starts watching this side's doorbell: every frame that arrives is handed to `onFrame` (a private
   * copy; return false to stop reading), and a corrupted ring to `onCorrupt` (`ProtocolError`).
   */
  watch(onFrame: (view: DataView) => boolean, onCorrupt: (error: HsError) => void): Result<void> {
    if (this.#closed || this.#watch !== null) return err(ErrorCode.InvalidState, 'TopicMailbox.watch: closed or already watching');
    this.#onFrame = onFrame;
    this.#onCorrupt = onCorrupt;
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

  /** Hands out every frame that arrived, then parks (the peer rings the doorbell for the next one). */
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
      if (this.#inbox.park()) return;
    }
  }

  /** The segment's descriptor, to pass with the subscriber's HELLO (publisher's end; -1 once released). */
  get descriptor(): number {
    return this.#segment.descriptor;
  }

  /** Closes the publisher's descriptor of the segment once the HELLO carried it (the mapping stays). */
  releaseDescriptor(): void {
    this.#segment.closeDescriptor();
  }

  /** Removes the doorbell FIFOs (both ends hold them open); the segment has no name. Idempotent. */
  unlinkNames(): void {
    for (const path of this.#paths) unlinkQuietly(path);
  }

  /** Stops watching, closes the doorbells, unmaps the segment and (publisher's end) removes the names. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.unlinkNames();
    this.#closed = true;
    if (this.#watch !== null) this.#native.unwatchDoorbell(this.#watch);
    this.#watch = null;
    this.#native.closeDoorbell(this.#ownBell);
    this.#native.closeDoorbell(this.#peerBell);
    this.#segment.close();
  }
}

/**
 * [this side's doorbell, the peer's]: `<topic>.<publisher pid>.<token>.pub` is the publisher's, `.sub` the
 * subscriber's; the pid lets `reapStaleDoorbells` remove those of a crashed publisher.
 */
function doorbellPaths(address: MailboxAddress, token: string, publisherEnd: boolean): [string, string] {
  const stem = join(address.directory, `${address.topic}.${address.publisherPid}.${token}`);
  const publisher = `${stem}.pub`;
  const subscriber = `${stem}.sub`;
  return publisherEnd ? [publisher, subscriber] : [subscriber, publisher];
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone: the names are removed once both ends attached, or at close.
  }
}
