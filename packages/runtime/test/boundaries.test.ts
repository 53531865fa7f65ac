import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { TensorPool } from '@hs/pool';
import { ErrorCode, HostBackend, HsError, MemoryKind, OK_VOID, type Result, type Stream, err, ok, unwrap } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { rejectionOf } from './rejection.js';
import {
  type BoundaryProvider,
  type BoundaryPublication,
  type BoundaryPublicationStats,
  type BoundarySubscription,
  type PublicationRequest,
  RunSession,
  type SubscriptionRequest,
  formatMetrics,
} from '../src/index.js';

const VALUES = 16;

/** Host source: frame i holds float32 values i*100 + k (host writer, no fence). */
class HostSource extends Operator {
  out!: OutputPort;
  sent = 0;
  constructor(
    name: string,
    readonly count: number,
    readonly storage: 'runtimePool' | 'passThrough' = 'runtimePool',
  ) {
    super(name);
  }
  setup(spec: OperatorSpec): void {
    this.out = spec.output('out').producesTensor({
      representation: { memoryKind: MemoryKind.Host, dtype: DType.float32, rank: 1 },
      bounds: { maxByteSpan: VALUES * 4 },
      storage: this.storage,
    } as never);
  }
  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.out, { shape: [VALUES], dtype: DType.float32 });
    // No free slot (exhaustion is a value): produce nothing this activation; the scheduler polls again.
    if (!loan.ok) return loan.error.code === ErrorCode.ResourceExhausted ? OK_VOID : loan;
    const guard = unwrap(loan.value.write(null));
    const view = unwrap(guard.tensor.mutableHostView());
    const values = new Float32Array(view.buffer, view.byteOffset, VALUES);
    for (let k = 0; k < VALUES; k++) values[k] = this.sent * 100 + k;
    unwrap(guard.commit());
    this.sent += 1;
    if (this.sent === this.count) ctx.finish();
    return ctx.emit(this.out, loan.value);
  }
}

/** Host sink: records the first value of every frame after the host-access wait. */
class HostSink extends Operator {
  in!: InputPort;
  readonly seen: number[] = [];
  setup(spec: OperatorSpec): void {
    this.in = spec.input('in', { memoryKind: MemoryKind.Host, dtype: DType.float32, rank: 1 });
  }
  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const tensor = ctx.receive(this.in)!;
    await tensor.synchronizeForHost();
    const view = unwrap(tensor.hostView());
    this.seen.push(new Float32Array(view.buffer, view.byteOffset, VALUES)[1]!);
    return OK_VOID;
  }
}

/**
 * An in-process stand-in for @hs/ipc: a publication queues each published tensor (with one lease)
 * for the one subscription of the same topic; `finish()` ends the topic. Records every call.
 */
class LoopbackBoundaries implements BoundaryProvider {
  readonly calls: string[] = [];
  readonly queues = new Map<string, Tensor[]>();
  readonly ended = new Set<string>();
  failure: HsError | null = null;
  /** What every publication's `start()` rejects with, or `null` to resolve. */
  startFailure: HsError | null = null;
  copyPool: TensorPool | null = null;
  /** What every publication reports to the session's metrics (a test changes it mid-run). */
  stats: BoundaryPublicationStats = { subscribers: 1, subscribersLost: 0, reclaimedLeases: 0, lastLoss: null };

  publish(request: PublicationRequest): Result<BoundaryPublication> {
    const { record, backend } = request;
    const topic = record.boundary!.topic;
    this.calls.push(`publish ${topic} ${record.id} ${record.boundary!.staging} slots=${record.slotCount}`);
    const pool = TensorPool.materialize(backend, {
      name: record.id,
      memoryKind: record.memoryKind,
      device: record.device,
      slotCount: record.slotCount,
      slotByteSpan: record.maxByteSpan,
      maxRank: record.maxRank,
      dtype: record.dtype,
      producerStream: request.producerStream,
    });
    if (!pool.ok) return pool;
    const queue: Tensor[] = [];
    this.queues.set(topic, queue);
    const provider = this;
    if (record.boundary!.staging === 'copy') this.copyPool = pool.value;
    return ok({
      pool: pool.value,
      publish(tensor: Tensor): Result<void> {
        const leased = tensor.backing!.acquireLease();
        if (!leased.ok) return leased;
        queue.push(tensor);
        return OK_VOID;
      },
      publishCopy(tensor: Tensor, stream: Stream | null): Result<void> {
        provider.calls.push(`publishCopy ${tensor.name} on ${stream === null ? 'host' : stream.label}`);
        const loan = pool.value.allocateTensor({ shape: [...tensor.shape], dtype: tensor.dtype });
        if (!loan.ok) return loan;
        const guard = unwrap(loan.value.write(null));
        unwrap(guard.tensor.mutableHostView()).set(unwrap(tensor.hostView()));
        unwrap(guard.commit());
        const published = unwrap(loan.value.emit());
        return this.publish(published);
      },
      start: async () => {
        this.calls.push(`start publication ${topic}`);
        if (provider.startFailure !== null) throw provider.startFailure;
      },
      poll: () => undefined,
      stats: () => provider.stats,
      finish: async () => {
        this.calls.push(`finish ${topic}`);
        this.ended.add(topic);
      },
      dispose: () => {
        this.calls.push(`dispose publication ${topic}`);
        pool.value.dispose();
      },
    });
  }

  subscribe(request: SubscriptionRequest): Result<BoundarySubscription> {
    const topic = request.endpoint.topic;
    this.calls.push(`subscribe ${topic} ${request.endpoint.port.operator}.${request.endpoint.port.port} depth=${request.endpoint.queueDepth}`);
    const provider = this;
    return ok({
      next: () => provider.queues.get(topic)?.shift(),
      get ended() {
        return provider.ended.has(topic) && (provider.queues.get(topic)?.length ?? 0) === 0;
      },
      get failure() {
        return provider.failure;
      },
      start: async () => undefined,
      poll: () => undefined,
      dispose: () => provider.calls.push(`dispose subscription ${topic}`),
    });
  }
}

function producerPlan(count: number, storage: 'runtimePool' | 'passThrough' = 'runtimePool') {
  const graph = new Graph('producer');
  const source = graph.add(new HostSource('source', count, storage));
  graph.publish(source.out, 'frames', { subscriberQueueDepth: 3 });
  return { plan: unwrap(compile(graph)), source };
}

function consumerPlan() {
  const graph = new Graph('consumer');
  const sink = graph.add(new HostSink('sink'));
  graph.subscribe('frames', sink.in);
  return { plan: unwrap(compile(graph)), sink };
}

describe('RunSession boundaries (the @hs/ipc injection point)', () => {
  it('refuses a plan with topics and no provider, leaving nothing behind', () => {
    const backend = new HostBackend();
    const created = RunSession.create(producerPlan(1).plan, { backend });
    expect(created.ok).toBe(false);
    if (!created.ok) {
      expect(created.error.code).toBe(ErrorCode.NotSupported);
      expect(created.error.message).toContain('external topics (frames)');
    }
  });

  it('runs a producer session and a consumer session joined by a topic; every slot comes back', async () => {
    const backend = new HostBackend();
    const boundaries = new LoopbackBoundaries();
    const producer = producerPlan(20);
    const consumer = consumerPlan();
    const pub = unwrap(RunSession.create(producer.plan, { backend, boundaries }));
    const sub = unwrap(RunSession.create(consumer.plan, { backend, boundaries }));
    const [metrics] = await Promise.all([pub.run(), sub.run()]);
    expect(consumer.sink.seen).toEqual(Array.from({ length: 20 }, (_, i) => i * 100 + 1));
    expect(metrics.pools).toEqual([expect.objectContaining({ id: 'pool:source.out', outstanding: 0 })]);
    pub.dispose();
    sub.dispose();
    expect(boundaries.calls).toEqual([
      'publish frames pool:source.out direct slots=7',
      'subscribe frames sink.in depth=2',
      'start publication frames',
      'finish frames',
      'dispose publication frames',
      'dispose subscription frames',
    ]);
  });

  it('copies a pass-through output into its boundary pool on the producer side', async () => {
    const backend = new HostBackend();
    const boundaries = new LoopbackBoundaries();
    const producer = producerPlan(3, 'passThrough');
    // A pass-through output publishes caller-owned tensors: the source fills them from a pool of its own.
    const own = unwrap(TensorPool.materialize(backend, { name: 'own', memoryKind: MemoryKind.Host, device: producer.plan.pools[0]!.device, slotCount: 2, slotByteSpan: 64, maxRank: 1, producerStream: null }));
    producer.source.compute = (ctx: ExecutionContext): Result<void> => {
      own.retire();
      const loan = own.allocateTensor({ shape: [VALUES], dtype: DType.float32 });
      if (!loan.ok) return loan;
      const guard = unwrap(loan.value.write(null));
      const view = unwrap(guard.tensor.mutableHostView());
      new Float32Array(view.buffer, view.byteOffset, VALUES).fill(producer.source.sent + 7);
      unwrap(guard.commit());
      producer.source.sent += 1;
      if (producer.source.sent === producer.source.count) ctx.finish();
      return ctx.emitTensor(producer.source.out, unwrap(loan.value.emit()));
    };
    const consumer = consumerPlan();
    const pub = unwrap(RunSession.create(producer.plan, { backend, boundaries }));
    const sub = unwrap(RunSession.create(consumer.plan, { backend, boundaries }));
    const [produced] = await Promise.all([pub.run(), sub.run()]);
    expect(consumer.sink.seen).toEqual([7, 8, 9]);
    // 3 (subscriber queue) + 1 in hand + 1 retirement + 1 loan + 1 boundary return.
    const published = boundaries.calls.filter((c) => c.startsWith('publish'));
    expect(published[0]).toBe('publish frames boundary:frames copy slots=7');
    expect(published.slice(1)).toHaveLength(3);
    for (const call of published.slice(1)) expect(call).toMatch(/^publishCopy own\[slot \d\] on host$/);
    expect(produced.pools).toEqual([expect.objectContaining({ id: 'boundary:frames', outstanding: 0 })]);
    pub.dispose();
    sub.dispose();
    own.dispose();
  });

  it("reports each published topic's subscribers and dropped subscribers in metrics() and the 'metrics' event", async () => {
    const backend = new HostBackend();
    const boundaries = new LoopbackBoundaries();
    const producer = producerPlan(30);
    const consumer = consumerPlan();
    const pub = unwrap(RunSession.create(producer.plan, { backend, boundaries, metricsIntervalMs: 1 }));
    const sub = unwrap(RunSession.create(consumer.plan, { backend, boundaries }));
    expect(pub.metrics().topics).toEqual([{ topic: 'frames', poolId: 'pool:source.out', subscribers: 1, subscribersLost: 0, reclaimedLeases: 0, lastLoss: null }]);
    const seen: number[] = [];
    pub.on('metrics', (m) => seen.push(m.topics[0]!.subscribersLost));
    // The provider drops a subscriber mid-run (at frame 10): the snapshots after it carry the drop.
    const compute = producer.source.compute.bind(producer.source);
    producer.source.compute = (ctx: ExecutionContext): Result<void> => {
      if (producer.source.sent !== 10) return compute(ctx);
      boundaries.stats = {
        subscribers: 0,
        subscribersLost: 1,
        reclaimedLeases: 2,
        lastLoss: { pid: 4242, reason: 'processGone', code: ErrorCode.InvalidState, detail: 'topic frames: subscriber process 4242 is gone' },
      };
      return compute(ctx);
    };
    const [produced, consumed] = await Promise.all([pub.run(), sub.run()]);
    const topics = produced.topics;
    expect(topics).toEqual([
      {
        topic: 'frames',
        poolId: 'pool:source.out',
        subscribers: 0,
        subscribersLost: 1,
        reclaimedLeases: 2,
        lastLoss: { pid: 4242, reason: 'processGone', code: ErrorCode.InvalidState, detail: 'topic frames: subscriber process 4242 is gone' },
      },
    ]);
    expect(seen.at(-1)).toBe(1);
    expect(formatMetrics(produced)).toContain('frames                       subscribers 0  lost 1  reclaimed leases 2  last: InvalidState: topic frames: subscriber process 4242 is gone');
    expect(consumed.topics).toEqual([]);
    pub.dispose();
    sub.dispose();
  });

  it('ends the consumer run with the subscription failure (the publisher died)', async () => {
    const backend = new HostBackend();
    const boundaries = new LoopbackBoundaries();
    boundaries.queues.set('frames', []);
    const consumer = consumerPlan();
    const sub = unwrap(RunSession.create(consumer.plan, { backend, boundaries }));
    const running = sub.run({ drainTimeoutMs: 1000 });
    setTimeout(() => {
      boundaries.failure = new HsError(ErrorCode.InvalidState, 'producer pid 123 went away');
    }, 20);
    const result = await rejectionOf(running);
    expect(result.code).toBe(ErrorCode.InvalidState);
    expect(result.message).toContain('input sink.in (topic frames)');
    expect(result.message).toContain('producer pid 123 went away');
    sub.dispose();
  });

  it("rejects run() with a boundary start()'s rejection, its code kept and the publication named", async () => {
    const backend = new HostBackend();
    const boundaries = new LoopbackBoundaries();
    boundaries.startFailure = new HsError(ErrorCode.NotFound, 'topic frames: 1 of the 2 awaited subscribers attached within 50 ms');
    const producer = producerPlan(3);
    const pub = unwrap(RunSession.create(producer.plan, { backend, boundaries }));
    const failure = await rejectionOf(pub.run());
    expect(failure.code).toBe(ErrorCode.NotFound);
    expect(failure.message).toBe('NotFound: publication of pool:source.out: topic frames: 1 of the 2 awaited subscribers attached within 50 ms');
    expect(failure.cause).toBe(boundaries.startFailure);
    expect(producer.source.sent).toBe(0); // nothing ran
    pub.dispose();
  });

  it('reports a provider failure at create() by topic, releasing what was made', () => {
    const backend = new HostBackend();
    const failing: BoundaryProvider = {
      publish: () => err(ErrorCode.AlreadyExists, 'segment hs-frames exists'),
      subscribe: () => err(ErrorCode.NotSupported, 'unused'),
    };
    const created = RunSession.create(producerPlan(1).plan, { backend, boundaries: failing });
    expect(created.ok).toBe(false);
    if (!created.ok) expect(created.error.message).toContain('cannot publish topic frames');
  });
});
