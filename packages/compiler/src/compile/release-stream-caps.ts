import type { Device } from '@hs/streams';
import type { Operator } from '../authoring/operator.js';
import type { ReleaseStreamCapDerivation } from '../plan/plan-records.js';

/** Streams reserved per other CUDA-active operator of the domain: its runtime stream and one application-selected stream. */
const STREAMS_PER_OTHER_OPERATOR = 2;

/**
 * The per-slot release-stream cap of one pool, over its process/device domain (the device its events
 * live on): two streams for every other CUDA-active operator on that device, plus the producer stream,
 * plus compatible descriptor-staging streams (hs has none yet). A pool with no event device (host
 * writer, no stream-owning reader) never registers a stream and gets a cap of 1. The runtime
 * preallocates `cap` release events per slot at cold setup and rejects a stream past the cap.
 * Spec: "Fanout release-stream caps".
 */
export function releaseStreamCap(
  producer: Operator,
  eventDevice: Device | null,
  operatorDevice: ReadonlyMap<Operator, Device | null>,
  cudaOperatorsOn: ReadonlyMap<Device, number>,
): ReleaseStreamCapDerivation {
  if (eventDevice === null) {
    return { domain: null, otherCudaOperators: 0, streamsPerOtherOperator: STREAMS_PER_OTHER_OPERATOR, producerStreams: 0, stagingStreams: 0, cap: 1 };
  }
  const producerStreams = operatorDevice.get(producer) === eventDevice ? 1 : 0;
  const others = (cudaOperatorsOn.get(eventDevice) ?? 0) - producerStreams;
  return {
    domain: eventDevice.toString(),
    otherCudaOperators: others,
    streamsPerOtherOperator: STREAMS_PER_OTHER_OPERATOR,
    producerStreams,
    stagingStreams: 0,
    cap: Math.max(1, others * STREAMS_PER_OTHER_OPERATOR + producerStreams),
  };
}

/**
 * The per-slot release-stream bound of an imported topic slot in the consuming process: the same
 * device-wide domain as a pool's cap, with no producer stream in this process, so two streams for every
 * CUDA-active operator on `domain` (a forwarded import can reach any of them). 1 for a consumer without
 * a CUDA stream domain (`null`). Spec: "Fanout release-stream caps" (imported buffers track every
 * registered consumer stream).
 */
export function importedReleaseStreamCap(domain: Device | null, cudaOperatorsOn: ReadonlyMap<Device, number>): number {
  if (domain === null) return 1;
  return Math.max(1, (cudaOperatorsOn.get(domain) ?? 0) * STREAMS_PER_OTHER_OPERATOR);
}

/** CUDA-active operators per device (the domains of `releaseStreamCap`). */
export function countCudaOperators(operatorDevice: ReadonlyMap<Operator, Device | null>): Map<Device, number> {
  const counts = new Map<Device, number>();
  for (const device of operatorDevice.values()) if (device !== null) counts.set(device, (counts.get(device) ?? 0) + 1);
  return counts;
}
