import { MemoryKind, isDeviceAccessible, type Device } from '@hs/streams';
import type { Operator } from '../authoring/operator.js';
import type { OutputPort } from '../authoring/ports.js';
import type { BoundaryPoolInfo, SlotCountTerm, TensorAllocationRecord } from '../plan/plan-records.js';
import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { GraphIndex, IndexedEdge } from './graph-index.js';
import type { ResolvedQueueDepth } from './queue-depths.js';
import type { ResolvedByteSpan } from './resolve-byte-spans.js';
import type { ResolvedMemoryKind } from './resolve-memory-kinds.js';
import { countCudaOperators, releaseStreamCap } from './release-stream-caps.js';
import type { ResolvedPublication, ResolvedTopics } from './resolve-topics.js';
import { compareText } from './text-order.js';

/** Slot alignment in bytes. */
const SLOT_ALIGNMENT = 256;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** What `buildAllocationRecords()` reads besides the graph. */
export interface AllocationInputs {
  readonly order: readonly Operator[];
  readonly depths: ReadonlyMap<IndexedEdge, ResolvedQueueDepth>;
  readonly outputDevice: ReadonlyMap<OutputPort, Device | null>;
  readonly streamOf: ReadonlyMap<Operator, string>;
  readonly kinds: ReadonlyMap<OutputPort, ResolvedMemoryKind>;
  readonly spans: ReadonlyMap<OutputPort, ResolvedByteSpan | null>;
  /** Device of each CUDA-active operator (`null`: host-only). */
  readonly operatorDevice: ReadonlyMap<Operator, Device | null>;
  /** Checked topic endpoints (published outputs get boundary pools). */
  readonly topics: ResolvedTopics;
}

/**
 * Builds one `TensorAllocationRecord` per `runtimePool` output and per published pass-through output,
 * in topological order of producers: slot bytes = resolved per-slot byte span rounded up to 256; slot
 * count (admitted) = max admitted consumer queue depth (a published output's `subscriberQueueDepth`
 * counts as one consumer's depth) + retained history (1 in hand unless a consumer retains more, or a
 * consumer's window takes more into one activation) + 1
 * retirement + 1 producer loan, + 1 boundary return for a published output; the active count uses
 * active depths. A published output's record carries `boundary` (topic, transport, staging, fence); a
 * pass-through output gets its own boundary pool `boundary:<topic>` that its tensors are copied into
 * (it has no local consumers). Arithmetic is exact (BigInt); a result beyond 2^53 - 1 is reported as
 * `ARITHMETIC_OVERFLOW` and no record is made. A pool without consumers or topic is reported as
 * `UNCONSUMED_POOL` (warning); pools naming one provider with different memory, `PROVIDER_MEMORY_MISMATCH`.
 * Spec: "Sized cold, borrowed hot", "Size queue entries from nominal rates" (slot-count terms),
 * "Crossing process boundaries: the generation fence" (the warning on returning slots).
 */
export function buildAllocationRecords(index: GraphIndex, inputs: AllocationInputs, log: DiagnosticLog): Map<OutputPort, TensorAllocationRecord> {
  const records = new Map<OutputPort, TensorAllocationRecord>();
  const cudaOperatorsOn = countCudaOperators(inputs.operatorDevice);
  for (const op of inputs.order) {
    for (const port of index.specs.get(op)?.outputs ?? []) {
      const tensor = port.tensor;
      const device = inputs.outputDevice.get(port);
      const kind = inputs.kinds.get(port);
      const span = inputs.spans.get(port);
      const publication = inputs.topics.publications.get(port);
      if (tensor === null || tensor.bounds === null || device === null || device === undefined) continue;
      if (tensor.storage !== 'runtimePool' && publication === undefined) continue;
      if (kind === undefined || span === undefined || span === null) continue;
      const staged = tensor.storage !== 'runtimePool';
      const subject = { kind: 'port', operator: op.name, port: port.name } as const;
      const consumers = staged ? [] : [...(index.fromOutput.get(port) ?? [])].sort((a, b) => compareText(a.id, b.id));
      if (consumers.length === 0 && publication === undefined) {
        log.warning(
          DiagnosticCode.UnconsumedPool,
          subject,
          `output ${port.key} reserves a runtime pool that no flow consumes; connect it to a consumer, or declare storage 'passThrough' if it needs no runtime-owned backing`,
        );
      }
      const terms = slotCountTerms(index, consumers, inputs.depths, publication);
      const slotBytes = (BigInt(span.bytes) + BigInt(SLOT_ALIGNMENT - 1)) / BigInt(SLOT_ALIGNMENT) * BigInt(SLOT_ALIGNMENT);
      const slotCount = terms.reduce((sum, t) => sum + BigInt(t.admittedValue), 0n);
      const activeSlotCount = terms.reduce((sum, t) => sum + BigInt(t.value), 0n);
      const totalBytes = slotBytes * slotCount;
      const admittedLogicalBytes = BigInt(span.bytes) * slotCount;
      const activeLogicalBytes = BigInt(span.bytes) * activeSlotCount;
      const overflow = [
        ['slot bytes', slotBytes],
        ['slot count', slotCount],
        ['pool bytes (slot bytes x slot count)', totalBytes],
        ['logical bytes (byte span x slot count)', admittedLogicalBytes],
      ].find(([, value]) => (value as bigint) > MAX_SAFE);
      if (overflow !== undefined) {
        log.error(
          DiagnosticCode.ArithmeticOverflow,
          subject,
          `output ${port.key}: ${overflow[0] as string} = ${String(overflow[1])} exceeds 2^53 - 1 and cannot be planned exactly; ` +
            'declare a smaller maxByteSpan or smaller queue depths',
        );
        continue;
      }
      // A pinnedHost boundary pool is filled by the host writer (no fence) unless the publication declares
      // the CUDA-stream writer (pinnedHostWriter 'cudaStream', in place): then its slots are written on the
      // producer's stream and each publish records a generation fence in the segment. Copies of a
      // pass-through output are host-written.
      const hostWrittenBoundary =
        publication !== undefined && kind.memoryKind === MemoryKind.PinnedHost && (staged || publication.pinnedHostWriter !== 'cudaStream');
      const producerStream = isDeviceAccessible(kind.memoryKind) && !hostWrittenBoundary ? (inputs.streamOf.get(op) ?? null) : null;
      const id = staged ? `boundary:${(publication as ResolvedPublication).topic}` : `pool:${port.key}`;
      const cap = releaseStreamCap(op, eventDevice(device, producerStream === null ? null : (inputs.operatorDevice.get(op) ?? null), consumers, inputs.operatorDevice), inputs.operatorDevice, cudaOperatorsOn);
      records.set(port, {
        id,
        provider: staged ? id : (tensor.provider ?? id),
        producer: { operator: op.name, port: port.name },
        memoryKind: kind.memoryKind,
        memoryKindSource: kind.source,
        device,
        dtype: tensor.representation.dtype,
        maxByteSpan: span.bytes,
        byteSpanSource: span.derivation === null ? 'declared' : 'derived',
        maxRank: tensor.bounds.maxRank,
        rank: tensor.representation.rank,
        alignment: SLOT_ALIGNMENT,
        slotBytes: Number(slotBytes),
        slotCount: Number(slotCount),
        activeSlotCount: Number(activeSlotCount),
        totalBytes: Number(totalBytes),
        activeLogicalBytes: Number(activeLogicalBytes),
        admittedLogicalBytes: Number(admittedLogicalBytes),
        maxReleaseStreams: cap.cap,
        releaseStreamCap: cap,
        producerStream,
        consumers: consumers.map((e) => e.id),
        boundary: publication === undefined ? null : boundaryInfo(publication, staged, producerStream),
        derivation: {
          terms,
          text:
            `slotCount = ${terms.map((t) => `${t.admittedValue} (${t.term})`).join(' + ')} = ${slotCount}` +
            (activeSlotCount === slotCount ? '' : ` admitted, ${terms.map((t) => t.value).join(' + ')} = ${activeSlotCount} active`) +
            `; slotBytes = ${span.bytes} B rounded up to ${SLOT_ALIGNMENT} B = ${slotBytes} B`,
        },
      });
    }
  }
  checkSharedProviders(records, log);
  return records;
}

/** Reports `PROVIDER_MEMORY_MISMATCH` for each pool whose provider another pool of other memory already names. */
function checkSharedProviders(records: ReadonlyMap<OutputPort, TensorAllocationRecord>, log: DiagnosticLog): void {
  const first = new Map<string, TensorAllocationRecord>();
  for (const record of records.values()) {
    const seen = first.get(record.provider);
    if (seen === undefined) {
      first.set(record.provider, record);
      continue;
    }
    if (seen.memoryKind === record.memoryKind && seen.device === record.device) continue;
    log.error(
      DiagnosticCode.ProviderMemoryMismatch,
      { kind: 'port', operator: record.producer.operator, port: record.producer.port },
      `provider '${record.provider}' backs ${seen.id} (${seen.memoryKind} on ${seen.device.toString()}) and ${record.id} (${record.memoryKind} on ${record.device.toString()}); ` +
        'one resource hands out one memory kind on one device: give the outputs different providers',
    );
  }
}

function boundaryInfo(publication: ResolvedPublication, staged: boolean, producerStream: string | null): BoundaryPoolInfo {
  return {
    topic: publication.topic,
    transport: publication.memoryKind === MemoryKind.CudaDevice ? 'cudaIpc' : 'posixShm',
    staging: staged ? 'copy' : 'direct',
    fence: producerStream === null ? 'none' : 'generation',
    subscriberQueueDepth: publication.subscriberQueueDepth,
    maxSubscribers: publication.maxSubscribers,
  };
}

function slotCountTerms(
  index: GraphIndex,
  consumers: readonly IndexedEdge[],
  depths: ReadonlyMap<IndexedEdge, ResolvedQueueDepth>,
  publication: ResolvedPublication | undefined,
): SlotCountTerm[] {
  let deepest: { edge: IndexedEdge; depth: ResolvedQueueDepth } | null = null;
  let active = 0;
  for (const edge of consumers) {
    const depth = depths.get(edge);
    if (depth === undefined) continue;
    active = Math.max(active, depth.queueDepth);
    if (deepest === null || depth.admittedQueueDepth > deepest.depth.admittedQueueDepth) deepest = { edge, depth };
  }
  const subscriberDepth = publication?.subscriberQueueDepth ?? 0;
  const subscribersDeepest = publication !== undefined && subscriberDepth > (deepest?.depth.admittedQueueDepth ?? 0);
  let history: IndexedEdge | null = null;
  for (const edge of consumers) if (edge.flow.input.retainedHistory > (history?.flow.input.retainedHistory ?? 1)) history = edge;
  const retained = history?.flow.input.retainedHistory ?? 1;
  // A window takes up to `entries` queued entries into one activation; the queue refills meanwhile.
  let window: { edge: IndexedEdge; entries: number } | null = null;
  for (const edge of consumers) {
    for (const w of index.specs.get(edge.consumer)?.contract?.windows ?? []) {
      if (w.input === edge.flow.input && w.entries > Math.max(retained, window?.entries ?? 0)) window = { edge, entries: w.entries };
    }
  }
  return [
    subscribersDeepest
      ? {
          term: 'maxConsumerQueueDepth',
          value: Math.max(active, subscriberDepth),
          admittedValue: subscriberDepth,
          source: `subscriberQueueDepth of topic '${publication.topic}' (${publication.subscriberQueueDepthSource})`,
        }
      : {
          term: 'maxConsumerQueueDepth',
          value: Math.max(active, subscriberDepth),
          admittedValue: deepest?.depth.admittedQueueDepth ?? 0,
          source: deepest === null ? 'no consuming edge' : `queueDepth of edge ${deepest.edge.id} (${deepest.depth.source})`,
        },
    window !== null
      ? { term: 'consumerInHand', value: window.entries, admittedValue: window.entries, source: `the window of ${window.entries} entries input ${window.edge.flow.input.key} takes into one activation` }
      : history === null
      ? { term: 'consumerInHand', value: 1, admittedValue: 1, source: 'the tensor a consumer holds during compute()' }
      : { term: 'retainedHistory', value: retained, admittedValue: retained, source: `retainHistory(${retained}) of input ${history.flow.input.key}` },
    { term: 'retirement', value: 1, admittedValue: 1, source: 'a released slot waiting for its release events' },
    { term: 'producerLoan', value: 1, admittedValue: 1, source: 'the slot the producer holds between allocateTensor() and emit()' },
    ...(publication === undefined
      ? []
      : [{ term: 'boundaryReturn' as const, value: 1, admittedValue: 1, source: `a slot whose release is on its way back from a subscriber of topic '${publication.topic}'` }]),
  ];
}

/**
 * The device whose events order a pool: its own CUDA device, else its producer stream's device, else
 * the single device of its stream-owning consumers; `null` when none (two consumer devices are left
 * to the runtime, which rejects them).
 */
function eventDevice(
  poolDevice: Device,
  producerDevice: Device | null,
  consumers: readonly IndexedEdge[],
  operatorDevice: ReadonlyMap<Operator, Device | null>,
): Device | null {
  if (poolDevice.isCuda) return poolDevice;
  if (producerDevice !== null) return producerDevice;
  const devices = new Set<Device>();
  for (const edge of consumers) {
    const device = operatorDevice.get(edge.consumer) ?? null;
    if (device !== null) devices.add(device);
  }
  return devices.size === 1 ? ([...devices][0] as Device) : null;
}
