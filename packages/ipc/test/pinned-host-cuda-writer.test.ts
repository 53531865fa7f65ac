import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { Device, ErrorCode, HostBackend, MemoryKind, OK_VOID, type Result, unwrap, type Stream } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { ChannelRuntime, IpcBoundaries, TopicPublisher, ipcAvailability } from '../src/index.js';
import { fenceCounterOffset } from '../src/device/fence-counters.js';
import type { ImportedSlot } from '../src/graph/imported-slot.js';
import { TopicGraphSubscription } from '../src/graph/topic-graph-subscription.js';
import { subscribeEndpoint, testRuntimeDirectory } from './fixtures/topic-test-setup.js';

// Two backends in one process stand for two processes: they share nothing but the topic's shared-memory
// segment and socket. The producer's host backend runs manually, so its CUDA-stream writes (and the
// generation fence behind them) happen exactly when the test says.
const dir = testRuntimeDirectory('hs-pinned-writer-');

let topicCounter = 0;

const endpoint = (topic: string) => subscribeEndpoint(topic, { memoryKind: MemoryKind.PinnedHost, device: Device.cpu(), transport: 'posixShm', stream: 'stream:sink@cuda:0', maxReleaseStreams: 2 });

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

async function pair(cudaWriter: boolean, consumerHasStream = true): Promise<Pair> {
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
  const subscription = new TopicGraphSubscription(consumer, endpoint(topic), consumerHasStream ? consumerStream : null, { runtimeDirectory: dir, connectTimeoutMs: 5000 }, () => waiting?.());
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

/** A graph input of a pinnedHost topic on a planned stream: checks every byte after the host-access wait. */
class PinnedSink extends Operator {
  in!: InputPort;
  received = 0;
  wrong = 0;
  fenced = 0;
  constructor() {
    super('sink');
  }
  setup(spec: OperatorSpec): void {
    this.in = spec.input('frames', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 });
    spec.requireCudaStream();
  }
  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const tensor = ctx.receive(this.in)!;
    if (unwrap(tensor.readinessFor(null)) !== null) this.fenced += 1;
    await tensor.synchronizeForHost();
    const view = unwrap(tensor.hostView());
    for (let k = 0; k < view.length; k++) if (view[k] !== ((this.received * 7 + k) & 0xff)) this.wrong += 1;
    this.received += 1;
    return OK_VOID;
  }
}

/** A graph producer of a pinnedHost output written on its planned stream, 2 ms after compute() returned. */
class StreamWrittenSource extends Operator {
  out!: OutputPort;
  sent = 0;
  constructor(readonly frames: number) {
    super('source');
  }
  setup(spec: OperatorSpec): void {
    this.out = spec.output('frames').producesTensor({
      representation: { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: 200 },
      storage: 'runtimePool',
    });
    spec.requireCudaStream();
  }
  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.out, { shape: [200], dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const stream = ctx.cudaStream();
    const guard = unwrap(loan.value.write(stream));
    const range = unwrap(guard.tensor.mutableData());
    const value = this.sent;
    const backend = ctx.backend;
    unwrap(backend.launchHostFunc(stream, () => {
      const until = Date.now() + 2;
      while (Date.now() < until);
      const bytes = unwrap(backend.hostView(range.memory)).subarray(range.byteOffset, range.byteOffset + range.byteLength);
      for (let k = 0; k < bytes.length; k++) bytes[k] = (value * 7 + k) & 0xff;
    }));
    unwrap(guard.commit());
    this.sent += 1;
    if (this.sent === this.frames) ctx.finish();
    return ctx.emit(this.out, loan.value);
  }
}

describe.skipIf(!ipcAvailability().available)('pinnedHost topics: the CUDA-stream writer and its generation fence', () => {
  it("carries a graph's CUDA-written pinnedHost output to a consumer session: fenced descriptors, exact bytes", async () => {
    const topic = `pinned-graphs-${process.pid}`;
    const producerBackend = new HostBackend();
    const consumerBackend = new HostBackend();
    const pg = new Graph('pinned-producer');
    const source = pg.add(new StreamWrittenSource(40));
    pg.publish(source.out, topic, { pinnedHostWriter: 'cudaStream', subscriberQueueDepth: 2 });
    const pplan = unwrap(compile(pg, { deployment: { bindTopicDevice: { [topic]: Device.cuda(0) } } }));
    expect(pplan.pool('pool:source.frames')?.boundary).toMatchObject({ transport: 'posixShm', fence: 'generation' });
    const cg = new Graph('pinned-consumer');
    const sink = cg.add(new PinnedSink());
    cg.subscribe(topic, sink.in);
    const cplan = unwrap(compile(cg, { deployment: { bindTopicDevice: { [topic]: Device.cuda(0) } } }));
    const pub = unwrap(RunSession.create(pplan, { backend: producerBackend, boundaries: await IpcBoundaries.prepare(pplan, { backend: producerBackend, runtimeDirectory: dir, awaitSubscribers: 1 }) }));
    const sub = unwrap(RunSession.create(cplan, { backend: consumerBackend, boundaries: await IpcBoundaries.prepare(cplan, { backend: consumerBackend, runtimeDirectory: dir }) }));
    const [produced] = await Promise.all([pub.run(), sub.run()]);
    expect([sink.received, sink.wrong, sink.fenced]).toEqual([40, 0, 40]);
    expect(produced.pools).toEqual([expect.objectContaining({ id: 'pool:source.frames', outstanding: 0 })]);
    pub.dispose();
    sub.dispose();
    producerBackend.dispose();
    consumerBackend.dispose();
  }, 30_000);

  it('feeds a graph input: the consumer session waits for each fence on its own stream and reads exact bytes', async () => {
    const topic = `pinned-graph-${process.pid}`;
    const producer = new HostBackend();
    const consumer = new HostBackend();
    const stream = unwrap(producer.createStream(Device.cuda(0), { label: 'producer' }));
    const publisher = await TopicPublisher.create({ backend: producer, topic, memoryKind: MemoryKind.PinnedHost, slotCount: 3, slotByteSpan: 256, maxRank: 1, runtimeDirectory: dir, producerStream: stream });
    const graph = new Graph('pinned-consumer');
    const sink = graph.add(new PinnedSink());
    graph.subscribe(topic, sink.in);
    const plan = unwrap(compile(graph, { deployment: { bindTopicDevice: { [topic]: Device.cuda(0) } } }));
    expect(plan.topic(topic)[0]).toMatchObject({ memoryKind: MemoryKind.PinnedHost, transport: 'posixShm' });
    expect(plan.topic(topic)[0]?.stream).not.toBeNull();
    const session = unwrap(RunSession.create(plan, { backend: consumer, boundaries: await IpcBoundaries.prepare(plan, { backend: consumer, runtimeDirectory: dir }) }));
    const run = session.run();
    const frames = 30;
    const attached = Date.now();
    while (publisher.subscriberCount === 0 && Date.now() - attached < 5000) await new Promise((r) => setTimeout(r, 5));
    for (let frame = 0; frame < frames; ) {
      const loan = publisher.pool.allocateTensor({ shape: [200], dtype: DType.uint8 });
      if (!loan.ok) {
        await new Promise((r) => setTimeout(r, 2));
        continue;
      }
      const guard = unwrap(loan.value.write(stream));
      const range = unwrap(guard.tensor.mutableData());
      const value = frame;
      // The "kernel": runs on the producer stream 2 ms after publish() returned, so only the fence orders the reader.
      unwrap(producer.launchHostFunc(stream, () => {
        const until = Date.now() + 2;
        while (Date.now() < until);
        const bytes = unwrap(producer.hostView(range.memory)).subarray(range.byteOffset, range.byteOffset + range.byteLength);
        for (let k = 0; k < bytes.length; k++) bytes[k] = (value * 7 + k) & 0xff;
      }));
      unwrap(guard.commit());
      unwrap(publisher.publish(unwrap(loan.value.emit())));
      frame++;
      await new Promise((r) => setImmediate(r));
    }
    await producer.synchronizeStream(stream);
    await new Promise((r) => setTimeout(r, 50));
    await publisher.close();
    await run;
    expect([sink.received, sink.wrong, sink.fenced]).toEqual([frames, 0, frames]);
    session.dispose();
    producer.dispose();
    consumer.dispose();
  }, 30_000);

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

  it('ChannelRuntime hands out a CUDA-written slot only once its fence counter was reached, in publish order', async () => {
    const topic = `pinned-channel-${process.pid}`;
    const producer = new HostBackend({ scheduling: 'manual' });
    const consumer = new HostBackend();
    const stream = unwrap(producer.createStream(Device.cuda(0), { label: 'producer' }));
    const publisher = await TopicPublisher.create({ backend: producer, topic, memoryKind: MemoryKind.PinnedHost, slotCount: 3, slotByteSpan: 256, maxRank: 1, runtimeDirectory: dir, producerStream: stream });
    const channel = await ChannelRuntime.connect({ backend: consumer, topic, runtimeDirectory: dir });
    try {
      const attached = Date.now();
      while (publisher.subscriberCount === 0 && Date.now() - attached < 5000) await new Promise((r) => setTimeout(r, 5));
      for (let frame = 0; frame < 2; frame++) {
        const loan = unwrap(publisher.pool.allocateTensor({ shape: [16], dtype: DType.uint8 }));
        const guard = unwrap(loan.write(stream));
        unwrap(producer.memsetAsync(stream, unwrap(guard.tensor.mutableData()), 0x40 + frame));
        unwrap(guard.commit());
        unwrap(publisher.publish(unwrap(loan.emit())));
      }
      let got = 0;
      const first = channel.receive().then((lease) => {
        got++;
        return lease;
      });
      await new Promise((r) => setTimeout(r, 20));
      // Both descriptors arrived; neither fence ran (manual producer): nothing is handed out.
      expect(got).toBe(0);
      expect(channel.receivedCount).toBe(2);
      expect(unwrap(channel.tryReceive())).toBeNull();
      producer.runUntilIdle();
      const a = await first;
      expect(Array.from(unwrap(a.tensor.hostView()))).toEqual(new Array(16).fill(0x40));
      const b = await channel.receive();
      expect(Array.from(unwrap(b.tensor.hostView()))).toEqual(new Array(16).fill(0x41));
      a.release();
      b.release();
    } finally {
      channel.close();
      await publisher.close();
      producer.dispose();
      consumer.dispose();
    }
  });

  it('refuses a fenced descriptor for an input without a stream (NotSupported, what to do)', async () => {
    const p = await pair(true, false);
    try {
      const loan = unwrap(p.publisher.pool.allocateTensor({ shape: [8], dtype: DType.uint8 }));
      unwrap(unwrap(loan.write(p.producerStream)).commit());
      unwrap(p.publisher.publish(unwrap(loan.emit())));
      await expect(p.next()).rejects.toMatchObject({ code: ErrorCode.NotSupported, message: expect.stringContaining('has no stream to wait on it') });
    } finally {
      p.producer.runUntilIdle();
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
