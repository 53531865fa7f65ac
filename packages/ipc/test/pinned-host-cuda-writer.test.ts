import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TopicEndpointRecord } from '@hs/compiler';
import { Device, ErrorCode, HostBackend, MemoryKind, unwrap, type Stream } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { TopicPublisher, ipcAvailability } from '../src/index.js';
import { fenceCounterOffset } from '../src/device/fence-counters.js';
import type { ImportedSlot } from '../src/graph/imported-slot.js';
import { TopicGraphSubscription } from '../src/graph/topic-graph-subscription.js';

// Two backends in one process stand for two processes: they share nothing but the topic's shared-memory
// segment and socket. The producer's host backend runs manually, so its CUDA-stream writes (and the
// generation fence behind them) happen exactly when the test says.
const dir = mkdtempSync(join(tmpdir(), 'hs-pinned-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let topicCounter = 0;

function endpoint(topic: string): TopicEndpointRecord {
  return {
    topic,
    direction: 'subscribe',
    port: { operator: 'sink', port: 'frames' },
    memoryKind: MemoryKind.PinnedHost,
    device: Device.cpu(),
    transport: 'posixShm',
    stream: 'stream:sink@cuda:0',
    queueDepth: 2,
    queueDepthSource: 'default',
    maxSubscribers: null,
    pool: null,
    dtype: DType.uint8,
    rank: 1,
    maxByteSpan: null,
    maxReleaseStreams: 2,
  };
}

interface Pair {
  readonly producer: HostBackend;
  readonly consumer: HostBackend;
  readonly producerStream: Stream;
  readonly consumerStream: Stream;
  readonly publisher: TopicPublisher;
  readonly subscription: TopicGraphSubscription;
  /** Resolves with the next tensor the subscription hands out. */
  next(): Promise<Tensor>;
  close(): Promise<void>;
}

async function pair(cudaWriter: boolean): Promise<Pair> {
  const topic = `pinned-${process.pid}-${topicCounter++}`;
  const producer = new HostBackend({ scheduling: 'manual' });
  const consumer = new HostBackend();
  const producerStream = unwrap(producer.createStream(Device.cuda(0), { label: 'producer' }));
  const consumerStream = unwrap(consumer.createStream(Device.cuda(0), { label: 'consumer' }));
  const publisher = await TopicPublisher.create({
    backend: producer,
    topic,
    memoryKind: MemoryKind.PinnedHost,
    slotCount: 2,
    slotByteSpan: 256,
    maxRank: 1,
    runtimeDirectory: dir,
    producerStream: cudaWriter ? producerStream : null,
  });
  let waiting: (() => void) | null = null;
  const subscription = new TopicGraphSubscription(consumer, endpoint(topic), consumerStream, { runtimeDirectory: dir, connectTimeoutMs: 5000 }, () => waiting?.());
  await subscription.start();
  const attached = Date.now();
  while (publisher.subscriberCount === 0 && Date.now() - attached < 5000) await new Promise((r) => setTimeout(r, 5));
  const next = async (): Promise<Tensor> => {
    for (;;) {
      if (subscription.failure !== null) throw subscription.failure;
      const tensor = subscription.next();
      if (tensor !== undefined) return tensor;
      await new Promise<void>((resolve) => {
        waiting = resolve;
        setTimeout(resolve, 20);
      });
    }
  };
  const close = async (): Promise<void> => {
    subscription.dispose();
    await publisher.close();
    producer.dispose();
    consumer.dispose();
  };
  return { producer, consumer, producerStream, consumerStream, publisher, subscription, next, close };
}

describe.skipIf(!ipcAvailability().available)('pinnedHost topics: the CUDA-stream writer and its generation fence', () => {
  it('records the fence on the producer stream at publish; the consumer stream waits for it, and host readers see exact bytes only after', async () => {
    const p = await pair(true);
    try {
      const generations = [0, 0];
      for (let frame = 1; frame <= 4; frame++) {
        const loan = unwrap(p.publisher.pool.allocateTensor({ shape: [64], dtype: DType.uint8 }));
        // The host writer is refused on a CUDA-written pool: writes go on the producer stream.
        expect(loan.write(null).ok).toBe(false);
        const guard = unwrap(loan.write(p.producerStream));
        unwrap(p.producer.memsetAsync(p.producerStream, unwrap(guard.tensor.mutableData()), 0x10 + frame));
        unwrap(guard.commit());
        const published = unwrap(loan.emit());
        expect(unwrap(p.publisher.publish(published))).toBe(1);
        const received = await p.next();
        // The descriptor carried a fence: the import has a readiness event (recorded after the fence wait).
        const readiness = unwrap(received.readinessFor(null));
        expect(readiness).not.toBeNull();
        let complete = false;
        const sync = received.synchronizeForHost().then(() => {
          complete = true;
        });
        await new Promise((r) => setTimeout(r, 15));
        // The producer's memset and fence have not run (manual scheduling): the consumer is still waiting.
        expect(complete).toBe(false);
        expect(unwrap(received.hostView())[0]).not.toBe(0x10 + frame);
        p.producer.runUntilIdle();
        await sync;
        expect(Array.from(unwrap(received.hostView()))).toEqual(new Array(64).fill(0x10 + frame));
        // The slot's counter in the segment holds the generation the descriptor named.
        const slot = Math.floor(published.byteOffset / 256);
        generations[slot] = (generations[slot] as number) + 1;
        const segment = unwrap(p.producer.hostView(published.memory));
        const counter = new DataView(segment.buffer, segment.byteOffset).getBigUint64(fenceCounterOffset(2, 256, slot), true);
        expect(counter).toBe(BigInt(generations[slot] as number));
        (received.backing as ImportedSlot).releaseLease(null);
        // Wait until the slot came back before reusing the pool.
        const start = Date.now();
        while (p.publisher.occupancy > 0 && Date.now() - start < 5000) {
          p.subscription.poll();
          p.publisher.retire();
          p.producer.runUntilIdle();
          await new Promise((r) => setTimeout(r, 5));
        }
        expect(p.publisher.occupancy).toBe(0);
      }
      expect(p.subscription.failure).toBeNull();
    } finally {
      await p.close();
    }
  });

  it('keeps the host writer on a pinnedHost topic: fence 0, host-complete at once, no stream wait', async () => {
    const p = await pair(false);
    try {
      const loan = unwrap(p.publisher.pool.allocateTensor({ shape: [32], dtype: DType.uint8 }));
      const guard = unwrap(loan.write(null));
      unwrap(guard.tensor.mutableHostView()).fill(0x5a);
      unwrap(guard.commit());
      const published = unwrap(loan.emit());
      unwrap(p.publisher.publish(published));
      const received = await p.next();
      expect(unwrap(received.readinessFor(null))).toBeNull();
      await received.synchronizeForHost();
      expect(Array.from(unwrap(received.hostView()))).toEqual(new Array(32).fill(0x5a));
      const segment = unwrap(p.producer.hostView(published.memory));
      expect(new DataView(segment.buffer, segment.byteOffset).getBigUint64(fenceCounterOffset(2, 256, 0), true)).toBe(0n);
      (received.backing as ImportedSlot).releaseLease(null);
    } finally {
      await p.close();
    }
  });

  it('refuses a CUDA-stream writer on a host topic (InvalidArgument)', async () => {
    const backend = new HostBackend();
    const stream = unwrap(backend.createStream(Device.cuda(0)));
    const made = TopicPublisher.create({ backend, topic: `host-${process.pid}`, memoryKind: MemoryKind.Host, slotCount: 2, slotByteSpan: 256, maxRank: 1, runtimeDirectory: dir, producerStream: stream });
    await expect(made).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    backend.dispose();
  });
});
