/**
 * Byte layout of the @hs/ipc wire protocol (version 2: a host topic's segments travel as descriptors with HELLO). Every frame on a topic socket is exactly
 * `FRAME_BYTES` bytes, little-endian, and starts with the same 12-byte header. docs/ipc-wire-protocol.md
 * has the full table. Spec: "Crossing process boundaries: the generation fence".
 */

/**
 * Size of every frame in bytes.
 *
 * @example
 * ```ts
 * import { DescriptorDecoder, DescriptorFlag, FRAME_BYTES, TensorDescriptor, encodeDescriptor } from '@hs/ipc';
 * import { unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * // every frame is FRAME_BYTES long: a reader of a byte stream cuts it there, whatever the chunks
 * const stream = new Uint8Array(3 * FRAME_BYTES);
 * for (let slot = 0; slot < 3; slot++) {
 *   encodeDescriptor(new DataView(stream.buffer, slot * FRAME_BYTES, FRAME_BYTES), 0, { topicId: 4, slot, generation: 1, fenceValue: 0, flags: DescriptorFlag.HostWriter, dtype: DType.uint8, shape: [8], strides: [1], byteOffset: 0, byteLength: 8 });
 * }
 * const decoder = new DescriptorDecoder({ topicId: 4, slotCount: 3, slotStride: 256, maxRank: 1 });
 * const d = new TensorDescriptor();
 * let pending = new Uint8Array(0);
 * for (let at = 0; at < stream.length; at += 100) { // chunks of 100 bytes, as a socket may deliver them
 *   pending = new Uint8Array([...pending, ...stream.subarray(at, at + 100)]);
 *   for (; pending.length >= FRAME_BYTES; pending = pending.slice(FRAME_BYTES)) {
 *     unwrap(decoder.decode(new DataView(pending.buffer, pending.byteOffset, FRAME_BYTES), 0, d));
 *     console.log(`frame of ${FRAME_BYTES} bytes: slot ${d.slot}`);
 *   }
 * }
 * ```
 */
export const FRAME_BYTES = 256;
/**
 * First four bytes of every frame: ASCII `HSIP` read as a little-endian u32.
 *
 * @example
 * ```ts
 * import { FRAME_BYTES, FRAME_MAGIC, decodeHello, encodeAttach } from '@hs/ipc';
 *
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * encodeAttach(frame, 0, 1, false);
 * const magic = frame.getUint32(0, true); // bytes 0..3 of every frame
 * console.log(`hs frame: ${magic === FRAME_MAGIC} ("${new TextDecoder().decode(new Uint8Array(frame.buffer, 0, 4))}")`);
 *
 * const http = new Uint8Array(FRAME_BYTES);
 * http.set(new TextEncoder().encode('GET / HTTP/1.1\r\n')); // something else connected to a topic socket
 * const refused = decodeHello(new DataView(http.buffer), 0);
 * if (!refused.ok) console.log(refused.error.message);
 * ```
 */
export const FRAME_MAGIC = 0x50495348;
/**
 * Wire protocol version this package speaks: 2, where a host topic's HELLO carries its sealed segments as
 * descriptors (SCM_RIGHTS) instead of naming them. Version 1 (named /dev/shm segments) is refused.
 *
 * @example
 * ```ts
 * import { FRAME_BYTES, WIRE_VERSION, WireMemoryKind, decodeHello, encodeHello } from '@hs/ipc';
 *
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * encodeHello(frame, 0, { topicId: 2, slotCount: 1, slotStride: 256, segmentBytes: 256, memoryKind: WireMemoryKind.Host, maxRank: 1, producerPid: process.pid, mailboxToken: null });
 * console.log(`this side speaks wire version ${frame.getUint16(4, true)} (WIRE_VERSION ${WIRE_VERSION})`); // header bytes 4..5
 * frame.setUint16(4, 1, true); // what a publisher of version 1 (named /dev/shm segments) sends
 * const old = decodeHello(frame, 0);
 * if (!old.ok) console.log(old.error.message);
 * ```
 */
export const WIRE_VERSION = 2;
/**
 * Largest tensor rank a descriptor can carry.
 *
 * @example
 * ```ts
 * import { HostBackend, MemoryKind } from '@hs/streams';
 * import { MAX_DESCRIPTOR_RANK, TopicPublisher } from '@hs/ipc';
 *
 * // a descriptor carries at most 8 dimensions: fold the leading ones of a deeper tensor before publishing it
 * const shape = [2, 2, 2, 3, 4, 5, 6, 7, 8, 9];
 * const lead = shape.length - MAX_DESCRIPTOR_RANK + 1;
 * const folded = [shape.slice(0, lead).reduce((n, e) => n * e, 1), ...shape.slice(lead)];
 * console.log(`[${shape.join(', ')}] travels as [${folded.join(', ')}]: rank ${folded.length} of at most ${MAX_DESCRIPTOR_RANK}`);
 * const options = { backend: new HostBackend(), topic: 'volumes', memoryKind: MemoryKind.Host, slotCount: 2, slotByteSpan: 1 << 16, maxRank: MAX_DESCRIPTOR_RANK + 1 };
 * await TopicPublisher.create(options).catch((error: Error) => console.log(error.message)); // refused before anything is made
 * ```
 */
export const MAX_DESCRIPTOR_RANK = 8;
/** Longest shared-memory segment name a HELLO frame carries, in ASCII bytes (with the leading `/`). */
export const MAX_SEGMENT_NAME_BYTES = 64;

/**
 * Frame types (header bytes 6..7).
 *
 * @example
 * ```ts
 * import { FRAME_BYTES, FrameType, WireMemoryKind, encodeAttach, encodeHello } from '@hs/ipc';
 *
 * // a frame's type is header bytes 6..7: a trace of what went over a topic socket
 * const wire = new DataView(new ArrayBuffer(2 * FRAME_BYTES));
 * encodeHello(wire, 0, { topicId: 8, slotCount: 2, slotStride: 256, segmentBytes: 512, memoryKind: WireMemoryKind.Host, maxRank: 1, producerPid: process.pid, mailboxToken: null });
 * encodeAttach(wire, FRAME_BYTES, 8, false);
 * const direction: Partial<Record<FrameType, string>> = { [FrameType.Hello]: 'publisher -> subscriber', [FrameType.Attach]: 'subscriber -> publisher' };
 * for (let at = 0; at < wire.byteLength; at += FRAME_BYTES) {
 *   const type = wire.getUint16(at + 6, true) as FrameType;
 *   console.log(`byte ${at}: ${FrameType[type]} (${direction[type] ?? 'either side'})`);
 * }
 * ```
 */
export enum FrameType {
  /** Publisher -> subscriber, once after the connection is accepted: the topic's geometry. */
  Hello = 1,
  /** Publisher -> subscriber: one published tensor in a slot. */
  Descriptor = 2,
  /** Subscriber -> publisher: the subscriber released the tensor of a slot generation. */
  Release = 3,
  /** Either side: an orderly close, with a reason. */
  Goodbye = 4,
  /**
   * Subscriber -> publisher of a host topic, once, before anything else: how the subscriber takes its
   * descriptors (flags bytes 12..15). The publisher sends a host subscriber nothing after HELLO until then.
   */
  Attach = 5,
}

/**
 * HELLO flag bits of a host topic (bytes 44..47). Unknown bits are rejected.
 *
 * @example
 * ```ts
 * import { FRAME_BYTES, HelloFlag, WireMemoryKind, encodeHello } from '@hs/ipc';
 *
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * const geometry = { topicId: 1, slotCount: 2, slotStride: 256, segmentBytes: 512, memoryKind: WireMemoryKind.Host, maxRank: 1, producerPid: process.pid };
 * for (const mailboxToken of [null, 'a1b2c3d4e5f60718']) {
 *   encodeHello(frame, 0, { ...geometry, mailboxToken });
 *   const flags = frame.getUint32(44, true); // HELLO flags, bytes 44..47
 *   console.log(`token ${mailboxToken}: MailboxOffered ${(flags & HelloFlag.MailboxOffered) !== 0}`);
 * }
 * ```
 */
export enum HelloFlag {
  /** The publisher made a mailbox for this subscriber; bytes 120..127 carry its token. */
  MailboxOffered = 1,
}

/**
 * ATTACH flag bits (bytes 12..15). Unknown bits are rejected.
 *
 * @example
 * ```ts
 * import { AttachFlag, FRAME_BYTES, encodeAttach } from '@hs/ipc';
 *
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * encodeAttach(frame, 0, 0x5eed, true);
 * const flags = frame.getUint32(12, true); // ATTACH flags, bytes 12..15
 * console.log(`flags 0x${flags.toString(16)}: ${(flags & AttachFlag.UsesMailbox) !== 0 ? 'UsesMailbox' : 'socket'}; unknown bits: ${(flags & ~AttachFlag.UsesMailbox) !== 0}`);
 * ```
 */
export enum AttachFlag {
  /** The subscriber opened the offered mailbox: descriptors and releases travel through its rings. */
  UsesMailbox = 1,
}

/**
 * Descriptor flag bits (descriptor bytes 32..35). Unknown bits are rejected.
 *
 * @example
 * ```ts
 * import { DescriptorDecoder, DescriptorFlag, FRAME_BYTES, TensorDescriptor, encodeDescriptor } from '@hs/ipc';
 * import { DType } from '@hs/tensor';
 *
 * // a host topic: its segment holds no fence counters, so only the host writer may publish there
 * const decoder = new DescriptorDecoder({ topicId: 5, slotCount: 2, slotStride: 256, maxRank: 1, fenceCounters: false });
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * const out = new TensorDescriptor();
 * const tensor = { topicId: 5, slot: 0, dtype: DType.uint8, shape: [256], strides: [1], byteOffset: 0, byteLength: 256 };
 * encodeDescriptor(frame, 0, { ...tensor, generation: 1, flags: DescriptorFlag.HostWriter, fenceValue: 0 });
 * if (decoder.decode(frame, 0, out).ok && (out.flags & DescriptorFlag.HostWriter) !== 0) console.log('HostWriter: complete when published, nothing to wait for');
 * encodeDescriptor(frame, 0, { ...tensor, generation: 2, flags: DescriptorFlag.DeviceFence, fenceValue: 2 }); // a CUDA-stream writer's
 * const fenced = decoder.decode(frame, 0, out);
 * if (!fenced.ok) console.log(fenced.error.message);
 * ```
 */
export enum DescriptorFlag {
  /** The tensor was written by the host: complete when published, fence value 0, nothing to wait on. */
  HostWriter = 1,
  /** A CUDA writer recorded the generation fence: wait on the topic's fence counter for `fenceValue`. */
  DeviceFence = 2,
}

/**
 * Memory kinds a HELLO frame names (bytes 32..35).
 *
 * @example
 * ```ts
 * import { FRAME_BYTES, WireMemoryKind, decodeDeviceHello, decodeHello, encodeDeviceHello, encodeHello, fenceCounterBytes } from '@hs/ipc';
 *
 * // which client a topic needs follows from its HELLO's memory kind (bytes 32..35)
 * function clientFor(hello: DataView): string {
 *   const kind = hello.getUint32(32, true) as WireMemoryKind;
 *   if (kind === WireMemoryKind.CudaDevice) {
 *     const device = decodeDeviceHello(hello, 0);
 *     return device.ok ? `a device subscription on cuda:${device.value.deviceOrdinal}` : device.error.message;
 *   }
 *   const host = decodeHello(hello, 0);
 *   return host.ok ? `ChannelRuntime over ${WireMemoryKind[kind]} memory` : host.error.message;
 * }
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * encodeHello(frame, 0, { topicId: 1, slotCount: 2, slotStride: 256, segmentBytes: 512 + fenceCounterBytes(2), memoryKind: WireMemoryKind.PinnedHost, maxRank: 1, producerPid: process.pid, mailboxToken: null });
 * console.log(clientFor(frame));
 * encodeDeviceHello(frame, 0, { topicId: 2, slotCount: 2, slotStride: 256, allocationBytes: 512 + fenceCounterBytes(2), maxRank: 1, producerPid: process.pid, deviceOrdinal: 0, handle: new Uint8Array(64) });
 * console.log(clientFor(frame));
 * ```
 */
export enum WireMemoryKind {
  /** Pageable host memory. */
  Host = 0,
  /** Pinned (page-locked) host memory; the segment may be registered with the CUDA runtime. */
  PinnedHost = 1,
  /** Reserved for a device boundary (one CUDA allocation exported once; slots are offsets). */
  CudaDevice = 2,
}

/**
 * GOODBYE reasons (bytes 12..15).
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from 'node:fs';
 * import { createConnection } from 'node:net';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { HostBackend, MemoryKind } from '@hs/streams';
 * import { FRAME_BYTES, FrameType, GoodbyeReason, TopicPublisher, ipcAvailability } from '@hs/ipc';
 *
 * const ipc = ipcAvailability();
 * if (!ipc.available) console.log(ipc.reason);
 * else {
 *   const runtimeDirectory = mkdtempSync(join(tmpdir(), 'hs-topics-'));
 *   const pub = await TopicPublisher.create({ backend: new HostBackend(), topic: 'camera', memoryKind: MemoryKind.Host, slotCount: 2, slotByteSpan: 64, maxRank: 1, attachTimeoutMs: 100, livenessIntervalMs: 20, runtimeDirectory });
 *   // a raw connection that reads frames but never sends ATTACH
 *   const socket = createConnection(pub.socketPath);
 *   const chunks: Buffer[] = [];
 *   socket.on('data', (chunk: Buffer) => chunks.push(chunk));
 *   await new Promise((resolve) => socket.once('close', resolve));
 *   const frames = Buffer.concat(chunks);
 *   const last = new DataView(frames.buffer, frames.byteOffset + frames.length - FRAME_BYTES, FRAME_BYTES);
 *   console.log(`${frames.length / FRAME_BYTES} frames; the last: ${FrameType[last.getUint16(6, true)]}, reason ${GoodbyeReason[last.getUint32(12, true)]}`);
 *   await pub.close();
 *   rmSync(runtimeDirectory, { recursive: true, force: true });
 * }
 * ```
 */
export enum GoodbyeReason {
  /** The sender closed the topic or channel normally. */
  Closed = 1,
  /** The sender rejected a frame of the receiver and drops the connection. */
  ProtocolViolation = 2,
  /** The publisher reclaimed this subscriber's slots because it held one past the lease timeout. */
  LeaseTimeout = 3,
  /** The publisher dropped a connection that sent no ATTACH within its attach timeout (host and device topics). */
  AttachTimeout = 4,
}

/** Byte offsets inside a frame. */
export const Offset = {
  magic: 0,
  version: 4,
  type: 6,
  topicId: 8,
  // DESCRIPTOR and RELEASE
  slot: 12,
  generation: 16,
  fenceValue: 24,
  flags: 32,
  dtypeCode: 36,
  dtypeBits: 37,
  dtypeLanes: 38,
  rank: 40,
  descriptorReserved: 44,
  byteOffset: 48,
  byteLength: 56,
  shape: 64,
  strides: 128,
  tail: 192,
  // HELLO
  slotCount: 12,
  slotStride: 16,
  segmentBytes: 24,
  memoryKind: 32,
  maxRank: 36,
  producerPid: 40,
  helloFlags: 44,
  deviceOrdinal: 48,
  helloReserved: 52,
  segmentName: 56,
  deviceHandle: 120,
  /** Host topics: the 8-byte mailbox token (when `HelloFlag.MailboxOffered` is set). */
  mailboxToken: 120,
  helloTail: 184,
  // GOODBYE
  reason: 12,
  // ATTACH
  attachFlags: 12,
} as const;

/** Bytes of a mailbox token in a HELLO frame. */
export const MAILBOX_TOKEN_BYTES = 8;

/** Bytes reserved in a HELLO frame for a device boundary's CUDA IPC handles (bytes 120..183). */
export const DEVICE_HANDLE_BYTES = 64;
