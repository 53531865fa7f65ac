import { ErrorCode, HsError, MemoryKind, type Backend, type Device, type Stream } from '@hs/streams';
import type { DType } from '@hs/tensor';
import { resolveMailboxWait, type MailboxWait } from './mailbox/mailbox-wait.js';
import { checkTopicName } from './topic-endpoint.js';
import { MAX_DESCRIPTOR_RANK } from './wire/frame-layout.js';

/** Options of `TopicPublisher.create`. */
export interface TopicPublisherOptions {
  /** Backend the boundary pool's tensors belong to; it must implement `adoptHostMemory`. */
  readonly backend: Backend;
  /** Topic name, 1..64 characters of `[A-Za-z0-9._-]`. */
  readonly topic: string;
  /** `host` or `pinnedHost` (a device boundary is not part of this publisher). */
  readonly memoryKind: MemoryKind;
  /** Slots in the boundary pool, 1..65536. */
  readonly slotCount: number;
  /** Largest tensor one slot holds, in bytes (positive). */
  readonly slotByteSpan: number;
  /** Largest rank, 1..8. */
  readonly maxRank: number;
  /**
   * The exact rank every tensor of the topic must have (a graph output's declared rank), 0..`maxRank`;
   * any rank up to `maxRank` when omitted. The boundary pool refuses another rank at allocation.
   */
  readonly rank?: number;
  /** The only dtype tensors may have; any when omitted. */
  readonly dtype?: DType;
  /**
   * Most subscribers at once, attached or still on their way (more are refused: the connection is closed
   * before its HELLO); default 8. A connection that has not attached counts only until `attachTimeoutMs`.
   */
  readonly maxSubscribers?: number;
  /**
   * Longest a connection may go without sending ATTACH after its HELLO, in ms, before it is dropped with a
   * GOODBYE (attach timeout) and a `subscriberLost` event (`attachTimeout`, `ProtocolError`); default 2000.
   * Checked every `livenessIntervalMs`, so a silent connection is dropped within `attachTimeoutMs +
   * livenessIntervalMs`. Until it attached a connection is sent no descriptor and holds no lease, so
   * connections that never attach cannot pin slots, only take places under `maxSubscribers` until then.
   * A positive finite number (hs subscribers attach as soon as they mapped the segment).
   */
  readonly attachTimeoutMs?: number;
  /**
   * Longest a subscriber may hold one tensor, in ms, before it is dropped and its slots reclaimed (a hung
   * importer); default 5000. `Infinity` disables the limit (a dead importer is still reclaimed).
   */
  readonly leaseTimeoutMs?: number;
  /** How often subscriber pids, attach deadlines and lease ages are checked, in ms; default 250. */
  readonly livenessIntervalMs?: number;
  /** Directory of the topic socket; default the per-user runtime directory (see `topicDirectory`). */
  readonly runtimeDirectory?: string;
  /**
   * The CUDA device whose events order in-process readers of the slots that run on CUDA streams (their
   * release streams: a slot is reused only after those streams passed it). Omit it when only host code and
   * other processes read the slots.
   */
  readonly eventDevice?: Device;
  /** Release streams each slot tracks for those readers; default the pool's (8). */
  readonly maxReleaseStreams?: number;
  /**
   * pinnedHost only: the CUDA stream the slots are written on (the CUDA-stream writer). Loans are then
   * written with `write(producerStream)`, and every publish records the slot's generation fence on that
   * stream (a 64-bit stream memory write of the generation into the slot's counter in the segment) and
   * sends it in the descriptor, which importers wait on, on their own stream. Omitted or `null`: the host
   * writer (`write(null)`, fence 0). Needs `backend.streamMemoryOps`.
   */
  readonly producerStream?: Stream | null;
  /**
   * How the publisher waits for its subscribers' RELEASE frames once their mailbox rings are empty:
   * `{ kind: 'park' }` (default) or `{ kind: 'spin', spinMicroseconds }` (see `MailboxWait`). Spinning
   * returns slots sooner at the price of the publisher's CPU during each window.
   */
  readonly wait?: MailboxWait;
}

/** Where `DeviceTopicPublisher.listen` serves a topic. */
export interface DeviceTopicListenOptions {
  /** Topic name (letters, digits, `_`, `-`, `.`; it names the socket). */
  readonly topic: string;
  /**
   * Most subscribers at once, attached or still on their way (more are refused: the connection is closed
   * before its HELLO); default 8. A connection that has not attached counts only until `attachTimeoutMs`.
   */
  readonly maxSubscribers?: number;
  /**
   * Longest a connection may go without sending ATTACH after its HELLO, in ms, before it is dropped with a
   * GOODBYE (attach timeout) and a `subscriberLost` event (`attachTimeout`, `ProtocolError`); default 2000,
   * checked every `livenessIntervalMs`. A device subscriber sends ATTACH once it imported the CUDA IPC
   * handle; until then it is sent no descriptor and holds no lease (wire version 2). A positive finite number.
   */
  readonly attachTimeoutMs?: number;
  /** Longest a subscriber may hold one slot before it is dropped and its slots reclaimed, in ms; default 5000. */
  readonly leaseTimeoutMs?: number;
  /** How often subscriber pids, attach deadlines and lease ages are checked, in ms; default 250. */
  readonly livenessIntervalMs?: number;
  /** Directory of the topic socket; default the per-user runtime directory. */
  readonly runtimeDirectory?: string;
}

/** The subscriber limits both publishers pass to their `SubscriberSessions`, defaults applied. */
export interface SubscriberLimits {
  readonly topic: string;
  /** Most subscribers at once. */
  readonly maxSubscribers: number;
  /** Longest a connection may stay unattached after its HELLO, in ms. */
  readonly attachTimeoutMs: number;
  /** Longest one lease may be held, in ms (`Infinity`: no limit). */
  readonly leaseTimeoutMs: number;
  /** Period of the liveness checks, in ms. */
  readonly livenessIntervalMs: number;
}

/** `TopicPublisherOptions` checked, with the defaults applied. */
export interface ResolvedTopicPublisherOptions extends SubscriberLimits {
  readonly slotCount: number;
  readonly slotByteSpan: number;
  readonly maxRank: number;
  /** Exact rank of every tensor, or `null` for any up to `maxRank`. */
  readonly rank: number | null;
  /** `host` or `pinnedHost`. */
  readonly memoryKind: MemoryKind;
  /** How the release rings are waited on. */
  readonly wait: MailboxWait;
}

/** Most slots a host topic's pool may have (the wire's slot field and the mailbox rings are sized for it). */
const MAX_SLOTS = 65536;

function positiveInteger(value: unknown, what: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new HsError(ErrorCode.InvalidArgument, `TopicPublisher: ${what} must be an integer in 1..${max}, got ${String(value)}`);
  }
  return value;
}

/**
 * Checks the options of `TopicPublisher.create` and applies their defaults (8 subscribers, 2000 ms attach
 * timeout, 5000 ms lease timeout, 250 ms liveness period). The backend is not checked here (`create` returns
 * `NotSupported` for one that cannot adopt shared memory).
 * @throws HsError `InvalidArgument` for a malformed topic name, a count out of its range, an attach timeout
 *   that is not a positive finite number of ms, a lease timeout that is not a positive number of ms (or
 *   `Infinity`), a `rank` outside 0..`maxRank`, a memory kind other than host and pinnedHost, or a
 *   malformed `wait` (`resolveMailboxWait`).
 */
export function resolveTopicPublisherOptions(options: TopicPublisherOptions): ResolvedTopicPublisherOptions {
  const topic = checkTopicName(options.topic, 'TopicPublisher.create');
  const slotCount = positiveInteger(options.slotCount, 'slotCount', MAX_SLOTS);
  const slotByteSpan = positiveInteger(options.slotByteSpan, 'slotByteSpan');
  const maxRank = positiveInteger(options.maxRank, 'maxRank', MAX_DESCRIPTOR_RANK);
  const rank = options.rank ?? null;
  if (rank !== null && (typeof rank !== 'number' || !Number.isSafeInteger(rank) || rank < 0 || rank > maxRank)) {
    throw new HsError(ErrorCode.InvalidArgument, `TopicPublisher: rank must be an integer in 0..maxRank (${maxRank}), got ${String(rank)}`);
  }
  const maxSubscribers = positiveInteger(options.maxSubscribers ?? 8, 'maxSubscribers', 1024);
  const livenessIntervalMs = positiveInteger(options.livenessIntervalMs ?? 250, 'livenessIntervalMs', 60_000);
  const attachTimeoutMs = resolveAttachTimeout(options.attachTimeoutMs, 'TopicPublisher');
  const leaseTimeoutMs = options.leaseTimeoutMs ?? 5000;
  if (typeof leaseTimeoutMs !== 'number' || !(leaseTimeoutMs > 0)) {
    throw new HsError(ErrorCode.InvalidArgument, `TopicPublisher: leaseTimeoutMs must be a positive number of ms (or Infinity), got ${String(leaseTimeoutMs)}`);
  }
  const memoryKind = options.memoryKind;
  if (memoryKind !== MemoryKind.Host && memoryKind !== MemoryKind.PinnedHost) {
    throw new HsError(ErrorCode.InvalidArgument, `TopicPublisher: memoryKind must be host or pinnedHost, got ${String(memoryKind)} (managed memory never crosses a process)`);
  }
  const wait = resolveMailboxWait(options.wait, 'TopicPublisher');
  if (!wait.ok) throw wait.error;
  return { topic, slotCount, slotByteSpan, maxRank, rank, maxSubscribers, livenessIntervalMs, attachTimeoutMs, leaseTimeoutMs, memoryKind, wait: wait.value };
}

/** `attachTimeoutMs` with its default (2000 ms); `InvalidArgument` (thrown) unless a positive finite number. */
function resolveAttachTimeout(value: number | undefined, who: string): number {
  const attachTimeoutMs = value ?? 2000;
  if (typeof attachTimeoutMs !== 'number' || !(attachTimeoutMs > 0) || !Number.isFinite(attachTimeoutMs)) {
    throw new HsError(ErrorCode.InvalidArgument, `${who}: attachTimeoutMs must be a positive finite number of ms (a deadline for ATTACH), got ${String(attachTimeoutMs)}`);
  }
  return attachTimeoutMs;
}

/**
 * Checks the options of `DeviceTopicPublisher.listen` and applies their defaults (8 subscribers, 2000 ms
 * attach timeout, 5000 ms lease timeout, 250 ms liveness period).
 * @throws HsError `InvalidArgument` for a malformed topic name, a subscriber count, lease timeout or
 *   liveness period that is not positive, or an attach timeout that is not a positive finite number of ms.
 */
export function resolveDeviceListenOptions(options: DeviceTopicListenOptions): SubscriberLimits {
  const topic = checkTopicName(options.topic, 'DeviceTopicPublisher.listen');
  const maxSubscribers = options.maxSubscribers ?? 8;
  const leaseTimeoutMs = options.leaseTimeoutMs ?? 5000;
  const livenessIntervalMs = options.livenessIntervalMs ?? 250;
  if (!Number.isSafeInteger(maxSubscribers) || maxSubscribers < 1 || !(leaseTimeoutMs > 0) || !(livenessIntervalMs > 0)) {
    throw new HsError(ErrorCode.InvalidArgument, 'DeviceTopicPublisher.listen: maxSubscribers, leaseTimeoutMs and livenessIntervalMs must be positive');
  }
  const attachTimeoutMs = resolveAttachTimeout(options.attachTimeoutMs, 'DeviceTopicPublisher.listen');
  return { topic, maxSubscribers, attachTimeoutMs, leaseTimeoutMs, livenessIntervalMs };
}
