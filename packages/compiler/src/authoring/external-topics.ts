import { ErrorCode, HsError } from '@hs/streams';
import type { InputPort, OutputPort } from './ports.js';

/**
 * Longest topic name, in bytes of UTF-8 (the names are ASCII, so characters); the wire descriptor holds it in a fixed field.
 * @example
 * ```ts
 * import { MAX_TOPIC_NAME_LENGTH } from '@hs/compiler';
 *
 * // A topic name travels in every descriptor's fixed field: derive one from a site and sensor, within the limit.
 * const site = 'warehouse-north';
 * const topic = `${site}.lidar-front.points`.slice(0, MAX_TOPIC_NAME_LENGTH);
 * console.log(`topic '${topic}': ${topic.length} of at most ${MAX_TOPIC_NAME_LENGTH} characters`);
 * ```
 */
export const MAX_TOPIC_NAME_LENGTH = 63;

const TOPIC_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/**
 * Options of `Graph.publish()`. Spec: "Crossing process boundaries: the generation fence", warning on
 * returning slots across processes.
 */
export interface TopicPublishOptions {
  /**
   * Slots one subscriber may hold at once (descriptors delivered and not yet returned), a positive
   * integer; default: the compile option `defaultQueueDepth`. It sizes the boundary pool: a slot crosses
   * back only after the subscriber's stream passed the generation fence and its lease was released, so a
   * producer that sends faster than slots return needs a deeper queue (or gets `ResourceExhausted`).
   * Checked by `compile()` (`QUEUE_DEPTH_INVALID`).
   */
  readonly subscriberQueueDepth?: number;
  /** Most subscribers attached at once, a positive integer (default 4); checked by `compile()` (`TOPIC_OPTION_INVALID`). */
  readonly maxSubscribers?: number;
  /**
   * Who fills the slots of a pinnedHost output published in place (spec "Pinned-host readiness follows the
   * writer"): `'host'` (default) the host writer, `write(null)`, no fence; `'cudaStream'` the operator's
   * planned stream, `write(ctx.cudaStream())`: the boundary pool's producer stream is that stream and each
   * publish records a generation fence on it, which importers wait for on their own streams. Only for
   * pinnedHost outputs; a pass-through output's copies are always host-written. Checked by `compile()`
   * (`TOPIC_OPTION_INVALID`).
   */
  readonly pinnedHostWriter?: 'host' | 'cudaStream';
}

/** Options of `Graph.subscribe()`. */
export interface TopicSubscribeOptions {
  /**
   * Imported entries queued in this process before the consumer's `compute()` takes them, a positive
   * integer; default: the compile option `defaultQueueDepth`. Checked by `compile()` (`QUEUE_DEPTH_INVALID`).
   */
  readonly queueDepth?: number;
  /**
   * The topic's byte bound: the most bytes one imported tensor may span, a positive safe integer (the
   * publisher's `maxByteSpan`, which its graph declares). The plan gives it to an `inputMaxByteSpan(input)`
   * derivation of this input's operator (the spec's "imported external-topic bound"), and the import
   * refuses a descriptor spanning more (`ProtocolError`), so pools sized from it stay sufficient.
   * Omit it when no derivation reads the input. Checked by `compile()` (`TOPIC_OPTION_INVALID`).
   * Spec: "Derive slot bytes from deployment parameters".
   */
  readonly maxByteSpan?: number;
}

/** One `Graph.publish()` declaration: a graph output exported to a named external topic. */
export interface TopicPublication {
  /** Topic name. */
  readonly topic: string;
  /** The graph output exported to the topic. */
  readonly output: OutputPort;
  /** As given, unchecked; `undefined` when omitted. */
  readonly subscriberQueueDepth: number | undefined;
  /** As given, unchecked; `undefined` when omitted. */
  readonly maxSubscribers: number | undefined;
  /** As given, unchecked; `undefined` when omitted. */
  readonly pinnedHostWriter: 'host' | 'cudaStream' | undefined;
}

/** One `Graph.subscribe()` declaration: a graph input imported from a named external topic. */
export interface TopicSubscription {
  /** Topic name. */
  readonly topic: string;
  /** The graph input fed from the topic. */
  readonly input: InputPort;
  /** As given, unchecked; `undefined` when omitted. */
  readonly queueDepth: number | undefined;
  /** As given, unchecked; `undefined` when omitted. */
  readonly maxByteSpan: number | undefined;
}

/**
 * Checks a topic name: 1 to `MAX_TOPIC_NAME_LENGTH` letters, digits, `_`, `-` and `.`, not starting
 * with `-` or `.` (the name travels in every descriptor and names the socket and shared segments).
 * @throws HsError `InvalidArgument` when `topic` is not such a string.
 * @example
 * ```ts
 * import { assertTopicName } from '@hs/compiler';
 * import { HsError } from '@hs/streams';
 *
 * for (const topic of ['camera.frames', '.hidden', 'frames/left']) {
 *   try {
 *     assertTopicName('--topic', topic); // what Graph.publish() and subscribe() check
 *     console.log(`'${topic}' is a valid topic name`);
 *   } catch (error) {
 *     if (!(error instanceof HsError)) throw error;
 *     console.log(`'${topic}' refused: ${error.code}`);
 *   }
 * }
 * ```
 */
export function assertTopicName(where: string, topic: unknown): asserts topic is string {
  if (typeof topic !== 'string' || topic.length > MAX_TOPIC_NAME_LENGTH || !TOPIC_PATTERN.test(topic)) {
    throw new HsError(
      ErrorCode.InvalidArgument,
      `${where}: topic name ${JSON.stringify(topic)} is not valid; use 1 to ${MAX_TOPIC_NAME_LENGTH} letters, digits, '_', '-' and '.' ` +
        `(not starting with '-' or '.'), for example 'camera.frames'`,
    );
  }
}
