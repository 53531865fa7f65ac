/**
 * Byte layout of the @hs/ipc wire protocol (version 2: a host topic's segments travel as descriptors with HELLO). Every frame on a topic socket is exactly
 * `FRAME_BYTES` bytes, little-endian, and starts with the same 12-byte header. docs/ipc-wire-protocol.md
 * has the full table. Spec: "Crossing process boundaries: the generation fence".
 */

/** Size of every frame in bytes. */
export const FRAME_BYTES = 256;
/** First four bytes of every frame: ASCII `HSIP` read as a little-endian u32. */
export const FRAME_MAGIC = 0x50495348;
/**
 * Wire protocol version this package speaks: 2, where a host topic's HELLO carries its sealed segments as
 * descriptors (SCM_RIGHTS) instead of naming them. Version 1 (named /dev/shm segments) is refused.
 */
export const WIRE_VERSION = 2;
/** Largest tensor rank a descriptor can carry. */
export const MAX_DESCRIPTOR_RANK = 8;
/** Longest shared-memory segment name a HELLO frame carries, in ASCII bytes (with the leading `/`). */
export const MAX_SEGMENT_NAME_BYTES = 64;

/** Frame types (header bytes 6..7). */
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

/** HELLO flag bits of a host topic (bytes 44..47). Unknown bits are rejected. */
export enum HelloFlag {
  /** The publisher made a mailbox for this subscriber; bytes 120..127 carry its token. */
  MailboxOffered = 1,
}

/** ATTACH flag bits (bytes 12..15). Unknown bits are rejected. */
export enum AttachFlag {
  /** The subscriber opened the offered mailbox: descriptors and releases travel through its rings. */
  UsesMailbox = 1,
}

/** Descriptor flag bits (descriptor bytes 32..35). Unknown bits are rejected. */
export enum DescriptorFlag {
  /** The tensor was written by the host: complete when published, fence value 0, nothing to wait on. */
  HostWriter = 1,
  /** A CUDA writer recorded the generation fence: wait on the topic's fence counter for `fenceValue`. */
  DeviceFence = 2,
}

/** Memory kinds a HELLO frame names (bytes 32..35). */
export enum WireMemoryKind {
  /** Pageable host memory. */
  Host = 0,
  /** Pinned (page-locked) host memory; the segment may be registered with the CUDA runtime. */
  PinnedHost = 1,
  /** Reserved for a device boundary (one CUDA allocation exported once; slots are offsets). */
  CudaDevice = 2,
}

/** GOODBYE reasons (bytes 12..15). */
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
