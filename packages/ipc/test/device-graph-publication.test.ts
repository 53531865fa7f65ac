import { EventEmitter } from 'node:events';
import { TensorPool } from '@hs/pool';
import { Device, ErrorCode, HostBackend, HsError, MemoryKind, type MemoryRange, type Result, type Stream, ok, unwrap } from '@hs/streams';
import { DType, Tensor } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { DeviceGraphPublication } from '../src/device/device-graph-publication.js';
import type { DeviceTopicPublisher, SubscriberLost } from '../src/index.js';

// The producer side of a device topic without CUDA IPC: the emulated devices of the host backend and a
// stand-in for DeviceTopicPublisher that records what would be fenced and sent. The cross-process run
// on a real GPU is tooling/reliability/test/cross-process-topics.cuda.test.ts.
const BYTES = 256;

/** Records what the publication hands the publisher; the publication listens to its `subscriberLost` events. */
class RecordingPublisher extends EventEmitter {
  readonly topic = 'device-frames';
  readonly published: Tensor[] = [];
  subscriberCount = 1;
  publish(tensor: Tensor): Result<number> {
    this.published.push(tensor);
    return ok(this.subscriberCount);
  }
  async close(): Promise<void> {}
}

/** Counts the backend calls that copy bytes or wait on the host. */
function countCalls(backend: HostBackend): { copies: { dst: MemoryRange; src: MemoryRange }[]; hostCalls: string[] } {
  const seen = { copies: [] as { dst: MemoryRange; src: MemoryRange }[], hostCalls: [] as string[] };
  const memcpy = backend.memcpyAsync.bind(backend);
  backend.memcpyAsync = (stream: Stream, dst: MemoryRange, src: MemoryRange) => {
    seen.copies.push({ dst, src });
    return memcpy(stream, dst, src);
  };
  for (const name of ['synchronizeStream', 'synchronizeEvent', 'copyToHostAsync', 'copyFromHostAsync'] as const) {
    const original = (backend[name] as (...args: unknown[]) => unknown).bind(backend);
    (backend as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      seen.hostCalls.push(name);
      return original(...args);
    };
  }
  return seen;
}

function setup(slotCount = 2) {
  const backend = new HostBackend({ deviceCount: 2 });
  const stream = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
  const pool = unwrap(
    TensorPool.materialize(backend, { name: 'topic device-frames', memoryKind: MemoryKind.CudaDevice, device: Device.cuda(0), slotCount, slotByteSpan: BYTES, maxRank: 1, producerStream: stream }),
  );
  const publisher = new RecordingPublisher();
  const publication = new DeviceGraphPublication(backend, publisher as unknown as DeviceTopicPublisher, pool, stream, 0, 1000);
  return { backend, stream, pool, publisher, publication };
}

/** A foreign device tensor (not a pool slot) on `device`, filled with `value` on `stream`, its readiness on that stream. */
function foreignTensor(backend: HostBackend, stream: Stream, value: number, device = Device.cuda(0), withReadiness = true): Tensor {
  const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: BYTES, label: 'foreign' }));
  const fillStream = device === stream.device ? stream : unwrap(backend.createStream(device));
  unwrap(backend.memsetAsync(fillStream, { memory, byteOffset: 0, byteLength: BYTES, label: 'foreign' }, value));
  const tensor = unwrap(Tensor.import({ backend, memory, shape: [BYTES], dtype: DType.uint8 }));
  if (withReadiness) unwrap(tensor.setReadinessStream(fillStream));
  return tensor;
}

describe('DeviceGraphPublication: a foreign device tensor at a device-contract boundary', () => {
  it('costs one same-device copy into a boundary slot on the producer stream, no host wait or host copy; the slot tensor is published with the bytes', async () => {
    const { backend, stream, pool, publisher, publication } = setup();
    const foreign = foreignTensor(backend, stream, 0x5a);
    const calls = countCalls(backend);
    unwrap(publication.publishCopy(foreign, stream));
    expect(calls.hostCalls).toEqual([]);
    expect(calls.copies).toHaveLength(1);
    expect(calls.copies[0]!.src.memory).toBe(foreign.memory);
    expect(calls.copies[0]!.dst.memory).toBe(pool.backing.memory);
    expect(calls.copies[0]!.dst.memory.kind).toBe(MemoryKind.CudaDevice);
    expect(calls.copies[0]!.dst.memory.device).toBe(Device.cuda(0));
    expect(publisher.published).toHaveLength(1);
    const slot = publisher.published[0]!;
    expect(slot.memory).toBe(pool.backing.memory);
    expect(slot.readOnly).toBe(true);
    const host = new Uint8Array(BYTES);
    await slot.copyToHost(host, stream);
    expect(host.every((b) => b === 0x5a)).toBe(true);
    expect(pool.available).toBe(1);
  });

  it('refuses what it cannot copy without a host block, with typed errors and no slot taken', () => {
    const { backend, stream, pool, publisher, publication } = setup(1);
    const other = unwrap(backend.createStream(Device.cuda(0), { label: 'other' }));
    const wrongStream = publication.publishCopy(foreignTensor(backend, stream, 1), other);
    expect(wrongStream.ok ? null : wrongStream.error.code).toBe(ErrorCode.InvalidArgument);
    const unordered = publication.publishCopy(foreignTensor(backend, stream, 1, Device.cuda(0), false), stream);
    expect(unordered.ok ? null : unordered.error.code).toBe(ErrorCode.ProtocolError);
    const otherDevice = publication.publishCopy(foreignTensor(backend, stream, 1, Device.cuda(1)), stream);
    expect(otherDevice.ok ? null : otherDevice.error.code).toBe(ErrorCode.NotSupported);
    expect(otherDevice.ok ? '' : otherDevice.error.message).toContain('hs never copies across devices');
    expect(pool.available).toBe(1);
    expect(publisher.published).toHaveLength(0);
    // The one slot is out (published, not yet released by the subscribers): the next copy has nowhere to go.
    unwrap(publication.publishCopy(foreignTensor(backend, stream, 2), stream));
    const exhausted = publication.publishCopy(foreignTensor(backend, stream, 3), stream);
    expect(exhausted.ok ? null : exhausted.error.code).toBe(ErrorCode.ResourceExhausted);
  });

  it("reports the publisher's dropped subscribers in stats() (the session's RunMetrics.topics)", () => {
    const { publisher, publication } = setup();
    expect(publication.stats()).toEqual({ subscribers: 1, subscribersLost: 0, reclaimedLeases: 0, lastLoss: null, losses: [] });
    publisher.subscriberCount = 0;
    const lost: SubscriberLost = { pid: 77, reason: 'processGone', reclaimedLeases: 3, error: new HsError(ErrorCode.InvalidState, 'topic device-frames: subscriber process 77 is gone') };
    publisher.emit('subscriberLost', lost);
    expect(publication.stats()).toEqual({
      subscribers: 0,
      subscribersLost: 1,
      reclaimedLeases: 3,
      lastLoss: { pid: 77, reason: 'processGone', code: ErrorCode.InvalidState, detail: 'topic device-frames: subscriber process 77 is gone' },
      losses: [{ pid: 77, reason: 'processGone', code: ErrorCode.InvalidState, detail: 'topic device-frames: subscriber process 77 is gone' }],
    });
  });
});
