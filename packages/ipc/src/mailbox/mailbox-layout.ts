import { FRAME_BYTES } from '../wire/frame-layout.js';

/**
 * Byte layout of a topic mailbox (wire version 1): one shared-memory segment per host subscriber, made by
 * the publisher, holding two single-producer single-consumer rings of `FRAME_BYTES` entries — descriptors
 * (publisher -> subscriber) and releases (subscriber -> publisher). docs/ipc-wire-protocol.md has the table.
 *
 * Header (bytes 0..63): magic `HSMB` (u32), version (u32), capacity in entries (u32, a power of two),
 * entry bytes (u32, 256). Each ring's control block is three u32 counters on their own 64-byte lines:
 * tail (writer), head (reader), parked (1 while the reader sleeps on its doorbell).
 */
export const MAILBOX_MAGIC = 0x424d5348;
/** Mailbox layout version. */
export const MAILBOX_VERSION = 1;
/** Header fields (byte offsets). */
export const MailboxHeader = { magic: 0, version: 4, capacity: 8, entryBytes: 12 } as const;
/** Byte offsets of the control-block words inside one control block. */
export const RingWord = { tail: 0, head: 64, parked: 128 } as const;
/** Bytes of one control block (three 64-byte lines). */
export const RING_CONTROL_BYTES = 192;
/** Control block of the descriptor ring (publisher writes). */
export const DESCRIPTOR_RING_CONTROL = 64;
/** Control block of the release ring (subscriber writes). */
export const RELEASE_RING_CONTROL = 256;
/** First descriptor entry. */
export const RING_ENTRIES = 512;

/**
 * Entries per ring for a pool of `slotCount` slots: the next power of two at or above it. A subscriber
 * holds at most one lease per slot, so neither ring can hold more than `slotCount` frames in flight from
 * a peer that follows the protocol; a full ring means the peer broke it.
 */
export function mailboxCapacity(slotCount: number): number {
  let capacity = 1;
  while (capacity < slotCount) capacity *= 2;
  return capacity;
}

/** Bytes of the mailbox segment for rings of `capacity` entries. */
export function mailboxByteSize(capacity: number): number {
  return RING_ENTRIES + 2 * capacity * FRAME_BYTES;
}

/** Where the release ring's entries start. */
export function releaseEntries(capacity: number): number {
  return RING_ENTRIES + capacity * FRAME_BYTES;
}
