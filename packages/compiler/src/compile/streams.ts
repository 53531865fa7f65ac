import type { Device } from '@hs/streams';
import type { Operator } from '../authoring/operator.js';
import type { ComputeStreamPolicy } from './compile-options.js';
import type { PartitionDraft } from './partitions.js';

/** A planned compute stream. */
export interface StreamDraft {
  /** `stream:<partition head>@cuda:N` (perPartition) or `stream:shared@cuda:N` (sharedProcessDevice). */
  readonly id: string;
  readonly device: Device;
  /** Ids of the partitions that submit to it. */
  readonly partitions: string[];
}

/** Streams and the stream of each CUDA-active operator. */
export interface StreamAssignment {
  /** perPartition: in partition order, devices by ordinal; sharedProcessDevice: by device ordinal. */
  readonly streams: readonly StreamDraft[];
  /** Stream ids of each partition (empty for host-only partitions). */
  readonly streamsOfPartition: ReadonlyMap<PartitionDraft, readonly string[]>;
  /** Stream id of each CUDA-active operator. */
  readonly streamOf: ReadonlyMap<Operator, string>;
}

/**
 * Plans compute streams: under `perPartition`, one per (partition, device) of the partition's
 * CUDA-active operators; under `sharedProcessDevice`, one per device. Host-only partitions get none.
 * Every CUDA-active operator resolves to exactly one stream.
 * Spec: "One stream per active execution partition and device".
 */
export function assignStreams(
  partitions: readonly PartitionDraft[],
  operatorDevice: ReadonlyMap<Operator, Device | null>,
  policy: ComputeStreamPolicy,
): StreamAssignment {
  const byId = new Map<string, StreamDraft>();
  const streamsOfPartition = new Map<PartitionDraft, string[]>();
  const streamOf = new Map<Operator, string>();
  for (const partition of partitions) {
    const ids: string[] = [];
    const devices = [...new Set(partition.operators.map((op) => operatorDevice.get(op) ?? null))]
      .filter((d): d is Device => d !== null)
      .sort((a, b) => a.id - b.id);
    for (const device of devices) {
      const id = streamId(policy, partition, device);
      const stream = byId.get(id) ?? { id, device, partitions: [] };
      byId.set(id, stream);
      stream.partitions.push(partition.id);
      ids.push(id);
    }
    streamsOfPartition.set(partition, ids);
    for (const op of partition.operators) {
      const device = operatorDevice.get(op);
      if (device !== null && device !== undefined) {
        streamOf.set(op, streamId(policy, partition, device));
      }
    }
  }
  const streams = [...byId.values()];
  if (policy === 'sharedProcessDevice') streams.sort((a, b) => a.device.id - b.device.id);
  return { streams, streamsOfPartition, streamOf };
}

function streamId(policy: ComputeStreamPolicy, partition: PartitionDraft, device: Device): string {
  const owner = policy === 'perPartition' ? (partition.operators[0] as Operator).name : 'shared';
  return `stream:${owner}@${device.toString()}`;
}
