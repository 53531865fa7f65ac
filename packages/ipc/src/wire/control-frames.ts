import { ErrorCode, err, ok, type Err, type Result } from '@hs/streams';
import { readFrameHeader, writeFrameHeader } from './frame-header.js';
import {
  AttachFlag,
  FRAME_BYTES,
  FrameType,
  GoodbyeReason,
  HelloFlag,
  MAILBOX_TOKEN_BYTES,
  MAX_DESCRIPTOR_RANK,
  MAX_SEGMENT_NAME_BYTES,
  Offset,
  WireMemoryKind,
} from './frame-layout.js';
import { allZero, readSafeU64, writeSafeU64 } from './wire-integers.js';

/**
 * Most slots a boundary pool may announce.
 *
 * @example
 * ```ts
 * import { FRAME_BYTES, MAX_TOPIC_SLOTS, WireMemoryKind, decodeHello, encodeHello } from '@hs/ipc';
 *
 * // slots from a rate and a history to keep (120 Hz, 10 minutes), within what a topic may announce
 * const slotCount = Math.min(120 * 600, MAX_TOPIC_SLOTS);
 * console.log(`${slotCount} slots (at most ${MAX_TOPIC_SLOTS})`);
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * const slots = MAX_TOPIC_SLOTS + 1;
 * encodeHello(frame, 0, { topicId: 1, slotCount: slots, slotStride: 256, segmentBytes: slots * 256, memoryKind: WireMemoryKind.Host, maxRank: 1, producerPid: process.pid, mailboxToken: null });
 * const hello = decodeHello(frame, 0);
 * if (!hello.ok) console.log(hello.error.message);
 * ```
 */
export const MAX_TOPIC_SLOTS = 65536;

/** The topic geometry a publisher announces once per connection (a HELLO frame). */
export interface TopicHello {
  /** Random id of the topic; every later frame carries it. */
  readonly topicId: number;
  /** Slots in the boundary pool, 1..65536. */
  readonly slotCount: number;
  /** Bytes from one slot's start to the next (a positive multiple of 256). */
  readonly slotStride: number;
  /** Bytes of the shared segment; at least `slotCount * slotStride`. */
  readonly segmentBytes: number;
  /** Where the segment lives (host or pinned host for this reader). */
  readonly memoryKind: WireMemoryKind;
  /** Largest rank the topic admits, 0..8. */
  readonly maxRank: number;
  /** The publisher's process id (checked against the socket's peer credentials). */
  readonly producerPid: number;
  /**
   * The mailbox the publisher made for this subscriber, as 16 lowercase hex digits (8 random bytes), or
   * null when it offers none (descriptors then come over the socket). See `TopicMailbox`.
   */
  readonly mailboxToken: string | null;
}

function bad(field: string, problem: string): Err {
  return err(ErrorCode.ProtocolError, `hello rejected: ${field} ${problem}`);
}

function clear(view: DataView, offset: number): void {
  for (let i = offset; i < offset + FRAME_BYTES; i += 4) view.setUint32(i, 0, true);
}

/**
 * Writes a HELLO frame at `offset`. The publisher builds `hello` itself, so it is trusted here.
 *
 * @example
 * ```ts
 * import { FRAME_BYTES, WireMemoryKind, decodeHello, encodeHello } from '@hs/ipc';
 * import { unwrap } from '@hs/streams';
 *
 * // what a publisher sends each new connection: its topic's geometry (TopicPublisher does this for you)
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * encodeHello(frame, 0, {
 *   topicId: 0x5eed,
 *   slotCount: 8,
 *   slotStride: 307_200, // 480 x 640 bytes, a multiple of 256
 *   segmentBytes: 8 * 307_200,
 *   memoryKind: WireMemoryKind.Host,
 *   maxRank: 2,
 *   producerPid: process.pid,
 *   mailboxToken: '0123456789abcdef', // the mailbox offered to this subscriber, or null
 * });
 * const hello = unwrap(decodeHello(frame, 0));
 * console.log(`${hello.slotCount} slots of ${hello.slotStride} bytes, mailbox ${hello.mailboxToken}`);
 * ```
 */
export function encodeHello(view: DataView, offset: number, hello: TopicHello): void {
  clear(view, offset);
  writeFrameHeader(view, offset, FrameType.Hello, hello.topicId);
  view.setUint32(offset + Offset.slotCount, hello.slotCount, true);
  writeSafeU64(view, offset + Offset.slotStride, hello.slotStride);
  writeSafeU64(view, offset + Offset.segmentBytes, hello.segmentBytes);
  view.setUint32(offset + Offset.memoryKind, hello.memoryKind, true);
  view.setUint32(offset + Offset.maxRank, hello.maxRank, true);
  view.setUint32(offset + Offset.producerPid, hello.producerPid, true);
  if (hello.mailboxToken !== null) {
    view.setUint32(offset + Offset.helloFlags, HelloFlag.MailboxOffered, true);
    for (let i = 0; i < MAILBOX_TOKEN_BYTES; i++) view.setUint8(offset + Offset.mailboxToken + i, parseInt(hello.mailboxToken.slice(2 * i, 2 * i + 2), 16));
  }
}

/**
 * Reads and validates a HELLO frame: header, slot count 1..65536, slot stride a positive multiple of 256,
 * segment bytes covering every slot, a known host memory kind (a device boundary is `NotSupported` by this
 * reader), rank bound 0..8, a positive pid, bytes 56..119 zero (wire version 2 names no segment: it comes
 * as a descriptor with the HELLO), reserved bytes zero.
 * `ProtocolError` names the first bad field.
 *
 * @example
 * ```ts
 * import { FRAME_BYTES, WireMemoryKind, decodeHello, encodeHello } from '@hs/ipc';
 *
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * encodeHello(frame, 0, { topicId: 7, slotCount: 4, slotStride: 1024, segmentBytes: 4096, memoryKind: WireMemoryKind.PinnedHost, maxRank: 1, producerPid: process.pid, mailboxToken: null });
 * const hello = decodeHello(frame, 0); // a subscriber trusts nothing the socket brings
 * if (hello.ok) console.log(`topic ${hello.value.topicId}: ${WireMemoryKind[hello.value.memoryKind]} segment of ${hello.value.segmentBytes} bytes, publisher pid ${hello.value.producerPid}`);
 *
 * frame.setUint32(24, 2048, true); // segment bytes (24..31) too small for 4 slots of 1024 bytes
 * const forged = decodeHello(frame, 0);
 * if (!forged.ok) console.log(forged.error.message); // ProtocolError naming the first bad field
 * ```
 */
export function decodeHello(view: DataView, offset: number): Result<TopicHello> {
  const header = readFrameHeader(view, offset, null);
  if (typeof header !== 'number') return header;
  if (header !== FrameType.Hello) return bad('frame type', `is ${FrameType[header]}, expected Hello`);
  const topicId = view.getUint32(offset + Offset.topicId, true);
  const slotCount = view.getUint32(offset + Offset.slotCount, true);
  if (slotCount < 1 || slotCount > MAX_TOPIC_SLOTS) return bad('slot count', `${slotCount} is outside 1..${MAX_TOPIC_SLOTS}`);
  const slotStride = readSafeU64(view, offset + Offset.slotStride);
  if (slotStride <= 0 || slotStride % 256 !== 0) return bad('slot stride', `${slotStride} is not a positive multiple of 256 bytes`);
  const segmentBytes = readSafeU64(view, offset + Offset.segmentBytes);
  if (segmentBytes < 0 || segmentBytes < slotCount * slotStride) {
    return bad('segment bytes', `${segmentBytes} do not cover ${slotCount} slots of ${slotStride} bytes`);
  }
  const memoryKind = view.getUint32(offset + Offset.memoryKind, true);
  if (memoryKind === WireMemoryKind.CudaDevice) {
    return err(ErrorCode.NotSupported, 'hello: the topic is a device boundary (CUDA IPC), which this host subscriber cannot attach to');
  }
  if (memoryKind !== WireMemoryKind.Host && memoryKind !== WireMemoryKind.PinnedHost) return bad('memory kind', `${memoryKind} is unknown`);
  const maxRank = view.getUint32(offset + Offset.maxRank, true);
  if (maxRank > MAX_DESCRIPTOR_RANK) return bad('max rank', `${maxRank} exceeds ${MAX_DESCRIPTOR_RANK}`);
  const producerPid = view.getUint32(offset + Offset.producerPid, true);
  if (producerPid === 0 || producerPid > 0x7fffffff) return bad('producer pid', `${producerPid} is not a process id`);
  const flags = view.getUint32(offset + Offset.helloFlags, true);
  if ((flags & ~HelloFlag.MailboxOffered) !== 0) return bad('flags', `0x${flags.toString(16)} have unknown bits`);
  if (!allZero(view, offset + Offset.helloFlags + 4, offset + Offset.segmentName)) return bad('reserved bytes 48..55', 'are not zero');
  // Wire version 2 names no segment: it travels as a descriptor with the HELLO.
  if (!allZero(view, offset + Offset.segmentName, offset + Offset.segmentName + MAX_SEGMENT_NAME_BYTES)) {
    return bad('bytes 56..119', 'are not zero (wire version 2 passes the segment as a descriptor, not by name)');
  }
  let mailboxToken: string | null = null;
  if ((flags & HelloFlag.MailboxOffered) !== 0) {
    mailboxToken = '';
    for (let i = 0; i < MAILBOX_TOKEN_BYTES; i++) mailboxToken += view.getUint8(offset + Offset.mailboxToken + i).toString(16).padStart(2, '0');
    if (mailboxToken === '0000000000000000') return bad('mailbox token', 'is zero');
  }
  const tokenEnd = Offset.mailboxToken + (mailboxToken === null ? 0 : MAILBOX_TOKEN_BYTES);
  if (!allZero(view, offset + tokenEnd, offset + FRAME_BYTES)) return bad(`bytes ${tokenEnd}..${FRAME_BYTES - 1}`, 'are not zero');
  return ok({ topicId, slotCount, slotStride, segmentBytes, memoryKind, maxRank, producerPid, mailboxToken });
}

/** Writes a RELEASE frame: the subscriber is done with `generation` of `slot`. */
export function encodeRelease(view: DataView, offset: number, topicId: number, slot: number, generation: number): void {
  clear(view, offset);
  writeFrameHeader(view, offset, FrameType.Release, topicId);
  view.setUint32(offset + Offset.slot, slot, true);
  writeSafeU64(view, offset + Offset.generation, generation);
}

/**
 * Writes an ATTACH frame: the subscriber takes its descriptors through the mailbox (`usesMailbox`) or the socket.
 *
 * @example
 * ```ts
 * import { FRAME_BYTES, attachUsesMailbox, encodeAttach } from '@hs/ipc';
 *
 * // a subscriber's answer to HELLO (ChannelRuntime sends it once it mapped the segment); until the publisher
 * // read it the connection is sent nothing and holds no lease
 * const topicId = 0x5eed; // from the HELLO
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * encodeAttach(frame, 0, topicId, false); // descriptors over the socket, not through a mailbox
 * const usesMailbox = attachUsesMailbox(frame, 0); // what the publisher checks
 * if (typeof usesMailbox !== 'boolean') throw usesMailbox.error;
 * console.log(`ATTACH for topic 0x${frame.getUint32(8, true).toString(16)}: descriptors ${usesMailbox ? 'through the mailbox' : 'over the socket'}`);
 * ```
 */
export function encodeAttach(view: DataView, offset: number, topicId: number, usesMailbox: boolean): void {
  clear(view, offset);
  writeFrameHeader(view, offset, FrameType.Attach, topicId);
  view.setUint32(offset + Offset.attachFlags, usesMailbox ? AttachFlag.UsesMailbox : 0, true);
}

/** A new ATTACH frame (its own buffer, for a socket write that keeps it). */
export function attachFrame(topicId: number, usesMailbox: boolean): Buffer {
  const frame = Buffer.alloc(FRAME_BYTES);
  encodeAttach(new DataView(frame.buffer, frame.byteOffset, FRAME_BYTES), 0, topicId, usesMailbox);
  return frame;
}

/**
 * Validates the body of an ATTACH frame whose header was checked: known flag bits, reserved bytes zero.
 * Returns whether the subscriber uses the mailbox, or `ProtocolError`.
 *
 * @example
 * ```ts
 * import { FRAME_BYTES, attachUsesMailbox, encodeAttach } from '@hs/ipc';
 *
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * encodeAttach(frame, 0, 0x5eed, true); // the subscriber opened the offered mailbox
 * const uses = attachUsesMailbox(frame, 0); // a publisher validates the body after the header
 * if (typeof uses === 'boolean') console.log(`descriptors travel ${uses ? 'through the mailbox rings' : 'over the socket'}`);
 *
 * frame.setUint8(100, 1); // a reserved byte set: a peer this side does not understand
 * const refused = attachUsesMailbox(frame, 0);
 * if (typeof refused !== 'boolean') console.log(refused.error.message);
 * ```
 */
export function attachUsesMailbox(view: DataView, offset: number): boolean | Err {
  const flags = view.getUint32(offset + Offset.attachFlags, true);
  if ((flags & ~AttachFlag.UsesMailbox) !== 0) return err(ErrorCode.ProtocolError, `attach rejected: flags 0x${flags.toString(16)} have unknown bits`);
  if (!allZero(view, offset + Offset.attachFlags + 4, offset + FRAME_BYTES)) return err(ErrorCode.ProtocolError, 'attach rejected: reserved bytes 16..255 are not zero');
  return flags === AttachFlag.UsesMailbox;
}

/** Writes a GOODBYE frame with its reason. */
export function encodeGoodbye(view: DataView, offset: number, topicId: number, reason: GoodbyeReason): void {
  clear(view, offset);
  writeFrameHeader(view, offset, FrameType.Goodbye, topicId);
  view.setUint32(offset + Offset.reason, reason, true);
}

/** A new GOODBYE frame (its own buffer, for a socket write that keeps it). */
export function goodbyeFrame(topicId: number, reason: GoodbyeReason): Buffer {
  const frame = Buffer.alloc(FRAME_BYTES);
  encodeGoodbye(new DataView(frame.buffer, frame.byteOffset, FRAME_BYTES), 0, topicId, reason);
  return frame;
}

/**
 * Validates the body of a RELEASE frame whose header was checked: slot below `slotCount`, a safe
 * generation, reserved bytes zero. Returns the generation (the slot is at `Offset.slot`), or
 * `ProtocolError`. Allocates nothing on success.
 */
export function releaseGeneration(view: DataView, offset: number, slotCount: number): number | Err {
  const slot = view.getUint32(offset + Offset.slot, true);
  if (slot >= slotCount) return err(ErrorCode.ProtocolError, `release rejected: slot ${slot} is out of range (the topic has ${slotCount} slots)`);
  const generation = readSafeU64(view, offset + Offset.generation);
  if (generation <= 0) return err(ErrorCode.ProtocolError, `release rejected: generation is not a positive safe integer`);
  if (!allZero(view, offset + 24, offset + FRAME_BYTES)) return err(ErrorCode.ProtocolError, 'release rejected: reserved bytes 24..255 are not zero');
  return generation;
}

/** The reason of a GOODBYE frame (unknown values are reported as they are). */
export function goodbyeReason(view: DataView, offset: number): number {
  return view.getUint32(offset + Offset.reason, true);
}

/**
 * What a publisher's GOODBYE `reason` did, as a phrase after "the publisher (pid N)" in a subscriber's
 * error texts. Every reason but `Closed` means the publisher reclaimed the subscriber's slots.
 */
export function publisherGoodbyeText(reason: number): string {
  switch (reason) {
    case GoodbyeReason.Closed:
      return 'closed the topic';
    case GoodbyeReason.ProtocolViolation:
      return 'dropped this subscriber for a protocol violation and reclaimed its slots';
    case GoodbyeReason.LeaseTimeout:
      return "reclaimed this subscriber's slots: it held a lease past the publisher's leaseTimeoutMs";
    case GoodbyeReason.AttachTimeout:
      return "dropped this connection: its ATTACH did not arrive within the publisher's attachTimeoutMs";
    default:
      return `said goodbye (unknown reason ${reason}) and reclaimed this subscriber's slots`;
  }
}
