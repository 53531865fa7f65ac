import { MemoryKind, type Device } from '@hs/streams';
import type { Operator } from '../authoring/operator.js';
import type { OutputPort } from '../authoring/ports.js';
import type { TensorAllocationRecord, TopicEndpointRecord } from '../plan/plan-records.js';
import type { ResolvedTopics } from './resolve-topics.js';
import { countCudaOperators, importedReleaseStreamCap } from './release-stream-caps.js';
import { compareText } from './text-order.js';

/**
 * The plan's topic endpoint records, sorted by topic then direction: each resolved publication with
 * its boundary pool and each resolved subscription, with the endpoint's device, transport and stream.
 * Endpoints without a resolved device (reported by placement) are left out.
 * Spec: "Crossing process boundaries: the generation fence".
 */
export function buildTopicEndpoints(
  topics: ResolvedTopics,
  topicDevice: ReadonlyMap<string, Device | null>,
  streamOf: ReadonlyMap<Operator, string>,
  pools: ReadonlyMap<OutputPort, TensorAllocationRecord>,
  operatorDevice: ReadonlyMap<Operator, Device | null>,
): TopicEndpointRecord[] {
  const cudaOperatorsOn = countCudaOperators(operatorDevice);
  const records: TopicEndpointRecord[] = [];
  const transport = (kind: MemoryKind): 'posixShm' | 'cudaIpc' => (kind === MemoryKind.CudaDevice ? 'cudaIpc' : 'posixShm');
  for (const p of topics.publications.values()) {
    const device = topicDevice.get(p.topic) ?? null;
    const pool = pools.get(p.output);
    if (device === null || pool === undefined) continue;
    records.push({
      topic: p.topic,
      direction: 'publish',
      port: { operator: p.output.operator.name, port: p.output.name },
      memoryKind: p.memoryKind,
      device,
      transport: transport(p.memoryKind),
      stream: streamOf.get(p.output.operator) ?? null,
      queueDepth: p.subscriberQueueDepth,
      queueDepthSource: p.subscriberQueueDepthSource,
      maxSubscribers: p.maxSubscribers,
      pool: pool.id,
      dtype: p.output.tensor?.representation.dtype ?? null,
      rank: p.output.tensor?.representation.rank ?? null,
      maxByteSpan: pool.maxByteSpan,
      maxReleaseStreams: pool.maxReleaseStreams,
    });
  }
  for (const s of topics.subscriptions.values()) {
    const device = topicDevice.get(s.topic) ?? null;
    if (device === null) continue;
    records.push({
      topic: s.topic,
      direction: 'subscribe',
      port: { operator: s.input.operator.name, port: s.input.name },
      memoryKind: s.memoryKind,
      device,
      transport: transport(s.memoryKind),
      stream: streamOf.get(s.input.operator) ?? null,
      queueDepth: s.queueDepth,
      queueDepthSource: s.queueDepthSource,
      maxSubscribers: null,
      pool: null,
      dtype: s.input.requirements.dtype ?? null,
      rank: s.input.requirements.rank ?? null,
      maxByteSpan: s.maxByteSpan,
      maxReleaseStreams: importedReleaseStreamCap(operatorDevice.get(s.input.operator) ?? null, cudaOperatorsOn),
    });
  }
  return records.sort((a, b) => compareText(a.topic, b.topic) || compareText(a.direction, b.direction) || compareText(`${a.port.operator}.${a.port.port}`, `${b.port.operator}.${b.port.port}`));
}
