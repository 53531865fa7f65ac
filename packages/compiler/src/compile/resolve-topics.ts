import { MemoryKind } from '@hs/streams';
import type { InputPort, OutputPort } from '../authoring/ports.js';
import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { GraphIndex } from './graph-index.js';
import { isValidQueueDepth } from './queue-depths.js';
import type { ResolvedMemoryKind } from './resolve-memory-kinds.js';

/** Default and largest `maxSubscribers` of a publication. */
export const DEFAULT_MAX_SUBSCRIBERS = 4;
export const MAX_SUBSCRIBERS_LIMIT = 64;

/** A checked `publish()` declaration. */
export interface ResolvedPublication {
  readonly topic: string;
  readonly output: OutputPort;
  readonly memoryKind: MemoryKind;
  /** Slots one subscriber may hold at once. */
  readonly subscriberQueueDepth: number;
  readonly subscriberQueueDepthSource: 'explicit' | 'default';
  readonly maxSubscribers: number;
  /** Who fills a pinnedHost boundary pool published in place (`'host'` unless declared). */
  readonly pinnedHostWriter: 'host' | 'cudaStream';
}

/** A checked `subscribe()` declaration. */
export interface ResolvedSubscription {
  readonly topic: string;
  readonly input: InputPort;
  /** The import representation: the input's required memory kind. */
  readonly memoryKind: MemoryKind;
  /** Imported entries queued before the consumer. */
  readonly queueDepth: number;
  readonly queueDepthSource: 'explicit' | 'default';
  /** The topic's declared byte bound (`subscribe(..., { maxByteSpan })`), or `null` when none was given. */
  readonly maxByteSpan: number | null;
}

/** The graph's topic endpoints that passed every check. */
export interface ResolvedTopics {
  readonly publications: ReadonlyMap<OutputPort, ResolvedPublication>;
  readonly subscriptions: ReadonlyMap<InputPort, ResolvedSubscription>;
}

/**
 * Checks the external-topic declarations: one endpoint per topic and per output in a graph
 * (`TOPIC_ENDPOINT_CONFLICT`), a published output with a tensor declaration and a finite byte bound
 * (`TOPIC_BOUNDS_REQUIRED`; zero bounds too, which a local pool accepts), a subscribed input that requires a memory kind (`TOPIC_MEMORY_KIND_REQUIRED`),
 * no cudaManaged memory on either side (`TOPIC_MANAGED_MEMORY`), and the depths, subscriber count and a
 * subscription's byte bound (`QUEUE_DEPTH_INVALID`, `TOPIC_OPTION_INVALID`). Endpoints that fail are left out of the result.
 * Spec: "Crossing process boundaries: the generation fence", "Current limitations".
 */
export function resolveTopics(
  index: GraphIndex,
  kinds: ReadonlyMap<OutputPort, ResolvedMemoryKind>,
  defaultQueueDepth: number,
  log: DiagnosticLog,
): ResolvedTopics {
  const publications = new Map<OutputPort, ResolvedPublication>();
  const subscriptions = new Map<InputPort, ResolvedSubscription>();
  const publishedTopics = new Map<string, OutputPort>();
  for (const p of index.publications) {
    const subject = { kind: 'topic', topic: p.topic } as const;
    const earlier = publishedTopics.get(p.topic);
    if (earlier !== undefined) {
      log.error(
        DiagnosticCode.TopicEndpointConflict,
        subject,
        `topic '${p.topic}' is published by ${earlier.key} and ${p.output.key}; a topic has one publisher, so publish the other output to another topic`,
      );
      continue;
    }
    publishedTopics.set(p.topic, p.output);
    const others = (index.publicationsOf.get(p.output) ?? []).filter((q) => q.topic !== p.topic);
    if (others.length > 0 && others.some((q) => q.topic < p.topic)) {
      log.error(
        DiagnosticCode.TopicEndpointConflict,
        subject,
        `output ${p.output.key} is published to topics ${[p.topic, ...others.map((q) => q.topic)].map((t) => `'${t}'`).join(' and ')}; ` +
          'an output has one boundary pool and publishes to one topic, so let every subscriber attach to one of them',
      );
      continue;
    }
    const tensor = p.output.tensor;
    const kind = kinds.get(p.output);
    if (tensor === null || tensor.bounds === null) {
      log.error(
        DiagnosticCode.TopicBoundsRequired,
        subject,
        `output ${p.output.key} is published to topic '${p.topic}' but ${tensor === null ? 'declares no tensor' : 'declares no bounds.maxByteSpan'}; ` +
          'the boundary pool is sized before the graph runs, so declare producesTensor({ representation, bounds: { maxByteSpan } })',
      );
      continue;
    }
    if (tensor.bounds.maxByteSpan === 0 || tensor.bounds.maxRank === 0) {
      log.error(
        DiagnosticCode.TopicBoundsRequired,
        subject,
        `output ${p.output.key} is published to topic '${p.topic}' with bounds.${tensor.bounds.maxByteSpan === 0 ? 'maxByteSpan' : 'maxRank'} 0, ` +
          'a pool that rejects every allocation; a topic maps its slots into other processes, so declare positive bounds or do not publish the output',
      );
      continue;
    }
    if (kind === undefined) continue;
    if (kind.memoryKind === MemoryKind.CudaManaged) {
      log.error(
        DiagnosticCode.TopicManagedMemory,
        subject,
        `output ${p.output.key} publishes cudaManaged tensors to topic '${p.topic}'; managed memory has no cross-process representation, ` +
          'so publish cudaDevice (CUDA IPC), pinnedHost or host (shared memory) tensors instead',
      );
      continue;
    }
    const depth = checkedDepth(`publish(${p.output.key}, '${p.topic}') subscriberQueueDepth`, p.subscriberQueueDepth, subject, log);
    const maxSubscribers = p.maxSubscribers ?? DEFAULT_MAX_SUBSCRIBERS;
    if (!Number.isSafeInteger(maxSubscribers) || maxSubscribers < 1 || maxSubscribers > MAX_SUBSCRIBERS_LIMIT) {
      log.error(
        DiagnosticCode.TopicOptionInvalid,
        subject,
        `publish(${p.output.key}, '${p.topic}'): maxSubscribers ${String(p.maxSubscribers)} is not an integer in 1..${MAX_SUBSCRIBERS_LIMIT}; omit it for ${DEFAULT_MAX_SUBSCRIBERS}`,
      );
      continue;
    }
    const writer = p.pinnedHostWriter ?? 'host';
    if ((writer !== 'host' && writer !== 'cudaStream') || (writer === 'cudaStream' && kind.memoryKind !== MemoryKind.PinnedHost)) {
      log.error(
        DiagnosticCode.TopicOptionInvalid,
        subject,
        `publish(${p.output.key}, '${p.topic}'): pinnedHostWriter ${JSON.stringify(p.pinnedHostWriter)} ` +
          (writer === 'cudaStream' ? `is for pinnedHost outputs, and this one publishes ${kind.memoryKind} tensors` : "is not 'host' or 'cudaStream'"),
      );
      continue;
    }
    if (depth === null) continue;
    publications.set(p.output, {
      topic: p.topic,
      output: p.output,
      memoryKind: kind.memoryKind,
      subscriberQueueDepth: depth ?? defaultQueueDepth,
      subscriberQueueDepthSource: p.subscriberQueueDepth === undefined ? 'default' : 'explicit',
      maxSubscribers,
      pinnedHostWriter: writer,
    });
  }
  for (const s of index.subscriptions) {
    const subject = { kind: 'topic', topic: s.topic } as const;
    const publisher = publishedTopics.get(s.topic);
    if (publisher !== undefined) {
      log.error(
        DiagnosticCode.TopicEndpointConflict,
        subject,
        `topic '${s.topic}' is published by ${publisher.key} and subscribed by ${s.input.key} in the same graph; connect them with graph.addFlow() instead`,
      );
      continue;
    }
    const memoryKind = s.input.requirements.memoryKind;
    if (memoryKind === undefined) {
      log.error(
        DiagnosticCode.TopicMemoryKindRequired,
        subject,
        `input ${s.input.key} subscribes to topic '${s.topic}' but requires no memory kind; declare spec.input('${s.input.name}', { memoryKind, dtype, rank }) ` +
          'so the import representation is known when the graph is compiled',
      );
      continue;
    }
    if (memoryKind === MemoryKind.CudaManaged) {
      log.error(
        DiagnosticCode.TopicManagedMemory,
        subject,
        `input ${s.input.key} imports topic '${s.topic}' as cudaManaged memory, which has no cross-process representation; require cudaDevice, pinnedHost or host`,
      );
      continue;
    }
    const depth = checkedDepth(`subscribe('${s.topic}', ${s.input.key}) queueDepth`, s.queueDepth, subject, log);
    if (depth === null) continue;
    if (s.maxByteSpan !== undefined && !(Number.isSafeInteger(s.maxByteSpan) && s.maxByteSpan > 0)) {
      log.error(
        DiagnosticCode.TopicOptionInvalid,
        subject,
        `subscribe('${s.topic}', ${s.input.key}): maxByteSpan ${String(s.maxByteSpan)} is not a positive safe integer of bytes; ` +
          "pass the publisher's bounds.maxByteSpan, or omit it when no inputMaxByteSpan() derivation reads this input",
      );
      continue;
    }
    subscriptions.set(s.input, {
      topic: s.topic,
      input: s.input,
      memoryKind,
      queueDepth: depth ?? defaultQueueDepth,
      queueDepthSource: s.queueDepth === undefined ? 'default' : 'explicit',
      maxByteSpan: s.maxByteSpan ?? null,
    });
  }
  return { publications, subscriptions };
}

/** The given depth, `undefined` when omitted, or `null` after reporting an invalid one. */
function checkedDepth(where: string, value: number | undefined, subject: { kind: 'topic'; topic: string }, log: DiagnosticLog): number | undefined | null {
  if (value === undefined) return undefined;
  if (isValidQueueDepth(value)) return value;
  log.error(DiagnosticCode.QueueDepthInvalid, subject, `${where} ${String(value)} is not a positive integer of entries; pass N >= 1 or omit it`);
  return null;
}
