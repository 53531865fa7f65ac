import { type EdgeDropPolicy, type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { TensorPool } from '@hs/pool';
import { Device, ErrorCode, HostBackend, MemoryKind, OK_VOID, type Result, err, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunSession } from '../src/index.js';
import { FRAME } from './test-operators.js';
import { rejectionOf } from './rejection.js';
import { bindDevices } from './deployment.js';

/** What the source does with a loan refused with Backpressured. */
type OnRefused = 'letGo' | 'retain';

/** A gate the test opens once; the sink's first activation waits on it. */
class Gate {
  open!: () => void;
  readonly opened = new Promise<void>((resolve) => (this.open = resolve));
}

/** Emits `count` frames (frame i filled with i + 1), counting allocations, fills and refusals. */
class CountingSource extends Operator {
  frames!: OutputPort;
  produced = 0;
  allocations = 0;
  fills = 0;
  refusals = 0;
  constructor(
    name: string,
    private readonly count: number,
    private readonly onRefused: OnRefused,
    private readonly gate: Gate,
    private readonly openGateAfterFirstRefusal: boolean,
  ) {
    super(name);
  }
  setup(spec: OperatorSpec): void {
    this.frames = spec.output('frames').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: FRAME },
      storage: 'runtimePool',
    });
    spec.requireCudaStream();
  }
  compute(ctx: ExecutionContext): Result<void> {
    const pending = ctx.pendingLoan(this.frames);
    if (pending !== undefined) return this.offer(ctx, pending);
    const loan = ctx.allocateTensor(this.frames, { shape: [FRAME], dtype: DType.uint8 });
    // No free slot (exhaustion is a value): produce nothing this activation; the scheduler polls again.
    if (!loan.ok) return loan.error.code === ErrorCode.ResourceExhausted ? OK_VOID : loan;
    this.allocations += 1;
    const guard = loan.value.write(ctx.cudaStream());
    if (!guard.ok) return guard;
    this.produced += 1;
    const filled = ctx.backend.memsetAsync(ctx.cudaStream(), guard.value.range, this.produced & 0xff);
    if (!filled.ok) return filled;
    this.fills += 1;
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    if (this.produced === this.count) ctx.finish();
    return this.offer(ctx, loan.value);
  }
  private offer(ctx: ExecutionContext, loan: Parameters<ExecutionContext['emit']>[1]): Result<void> {
    const emitted = ctx.emit(this.frames, loan);
    if (emitted.ok || emitted.error.code !== ErrorCode.Backpressured) {
      if (this.produced === this.count && !this.openGateAfterFirstRefusal) this.gate.open();
      return emitted;
    }
    this.refusals += 1;
    if (this.openGateAfterFirstRefusal) this.gate.open();
    if (this.onRefused === 'retain') return ctx.retainPending(this.frames, loan);
    if (this.produced === this.count) this.gate.open();
    return OK_VOID; // let it go: the loan returns to its pool when compute() returns
  }
}

/** Copies each frame to the host and records its first byte; its first activation waits on the gate. */
class GatedSink extends Operator {
  input!: InputPort;
  readonly firstBytes: number[] = [];
  private readonly host = new Uint8Array(FRAME);
  constructor(name: string, protected readonly gate: Gate) {
    super(name);
  }
  setup(spec: OperatorSpec): void {
    this.input = spec.input('input', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
  }
  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    if (this.firstBytes.length === 0) await this.gate.opened;
    await ctx.receive(this.input)!.copyToHost(this.host, ctx.cudaStream());
    this.firstBytes.push(this.host[0]!);
    return OK_VOID;
  }
}

const FRAMES = 10;
const DEPTH = 2;

async function runWith(policy: EdgeDropPolicy, onRefused: OnRefused, openGateAfterFirstRefusal = false) {
  const backend = new HostBackend({ orderingChecker: true, seed: 11 });
  const gate = new Gate();
  const graph = new Graph('slow-consumer');
  const source = graph.add(new CountingSource('source', FRAMES, onRefused, gate, openGateAfterFirstRefusal));
  const sink = graph.add(new GatedSink('sink', gate));
  graph.addFlow(source.frames, sink.input, { queueDepth: DEPTH, dropPolicy: policy });
  const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) }));
  const session = unwrap(RunSession.create(plan, { backend }));
  const metrics = await session.run();
  session.dispose();
  expect(backend.orderingChecker?.violations).toEqual([]);
  backend.dispose();
  for (const pool of metrics.pools) expect(pool.outstanding).toBe(0);
  return { source, sink, edge: metrics.edges[0]!, operators: metrics.operators };
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('drop policies under a slow consumer', () => {
  afterEach(() => vi.restoreAllMocks());

  // The sink takes frame 1 and holds it until the source produced every frame, so exactly
  // FRAMES - 1 - DEPTH frames meet a full queue.
  it('dropOldest: the producer never waits; the oldest queued frames are evicted and counted', async () => {
    const { source, sink, edge } = await runWith('dropOldest', 'letGo');
    expect(source.produced).toBe(FRAMES);
    expect(source.refusals).toBe(0);
    expect(sink.firstBytes).toEqual([1, ...range(FRAMES - DEPTH + 1, FRAMES)]);
    expect(edge).toMatchObject({ dropPolicy: 'dropOldest', dropped: FRAMES - 1 - DEPTH, backpressured: 0, highWater: DEPTH });
  });

  it('dropNewest: the producer never waits; frames arriving at a full queue are skipped and counted', async () => {
    const { source, sink, edge } = await runWith('dropNewest', 'letGo');
    expect(source.produced).toBe(FRAMES);
    expect(source.refusals).toBe(0);
    expect(sink.firstBytes).toEqual(range(1, DEPTH + 1));
    expect(edge).toMatchObject({ dropPolicy: 'dropNewest', dropped: FRAMES - 1 - DEPTH, backpressured: 0 });
  });

  it('reject: every emit onto the full queue returns Backpressured; a producer that lets go loses exactly those', async () => {
    const { source, sink, edge } = await runWith('reject', 'letGo');
    expect(source.produced).toBe(FRAMES);
    expect(source.refusals).toBe(FRAMES - 1 - DEPTH);
    expect(sink.firstBytes).toEqual(range(1, DEPTH + 1));
    expect(edge).toMatchObject({ dropPolicy: 'reject', dropped: 0, backpressured: FRAMES - 1 - DEPTH });
  });

  it('reject + retainPending: the retry re-emits the kept loan with no new allocation or device work', async () => {
    const allocate = vi.spyOn(TensorPool.prototype, 'allocateTensor');
    const memset = vi.spyOn(HostBackend.prototype, 'memsetAsync');
    const { source, sink, edge, operators } = await runWith('reject', 'retain', true);
    expect(sink.firstBytes).toEqual(range(1, FRAMES));
    expect(source.refusals).toBeGreaterThanOrEqual(1);
    expect(edge).toMatchObject({ dropped: 0, backpressured: source.refusals });
    // One retry activation per refusal, and each retry allocated and filled nothing.
    expect(operators.find((o) => o.name === 'source')?.retries).toBe(source.refusals);
    expect(allocate).toHaveBeenCalledTimes(FRAMES);
    expect(memset).toHaveBeenCalledTimes(FRAMES);
    expect(source.allocations).toBe(FRAMES);
  });
});

/** Fails once the gate opened (its first activation). */
class FailingGatedSink extends GatedSink {
  override async compute(): Promise<Result<void>> {
    await this.gate.opened;
    return err(ErrorCode.ProtocolError, 'planted failure');
  }
}

describe('pending loans', () => {
  it('a failed run gives back a loan kept with retainPending()', async () => {
    const gate = new Gate();
    const graph = new Graph('failing');
    const source = graph.add(new CountingSource('source', FRAMES, 'retain', gate, true));
    const sink = graph.add(new FailingGatedSink('sink', gate));
    graph.addFlow(source.frames, sink.input, { queueDepth: 1, dropPolicy: 'reject' });
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) }));
    const session = unwrap(RunSession.create(plan, { backend: 'host' }));
    const outcome = await rejectionOf(session.run());
    expect(outcome.code).toBe(ErrorCode.ProtocolError);
    expect(source.refusals).toBe(1);
    expect(session.metrics().pools.map((p) => p.outstanding)).toEqual([0]);
    session.dispose();
  });

  it('keeps one pending loan per output and offers it back on the retry; one left unused returns to its pool', async () => {
    const seen: { second: ErrorCode | null; offeredBack: boolean } = { second: null, offeredBack: false };
    let kept: unknown = null;
    class Keeper extends Operator {
      frames!: OutputPort;
      setup(spec: OperatorSpec): void {
        this.frames = spec.output('frames').producesTensor({
          representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 },
          bounds: { maxByteSpan: FRAME },
          storage: 'runtimePool',
        });
        spec.requireCudaStream();
      }
      compute(ctx: ExecutionContext): Result<void> {
        const offered = ctx.pendingLoan(this.frames);
        if (offered !== undefined) {
          seen.offeredBack = offered === kept;
          ctx.finish();
          return OK_VOID; // not emitted: it goes back to the pool
        }
        const loan = unwrap(ctx.allocateTensor(this.frames, { shape: [FRAME], dtype: DType.uint8 }));
        kept = loan;
        unwrap(ctx.retainPending(this.frames, loan));
        const again = ctx.retainPending(this.frames, loan);
        seen.second = again.ok ? null : again.error.code;
        return OK_VOID;
      }
    }
    const graph = new Graph('keeper');
    graph.add(new Keeper('keeper'));
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { keeper: Device.cuda(0) }) }));
    const session = unwrap(RunSession.create(plan, { backend: 'host' }));
    const metrics = await session.run();
    session.dispose();
    expect(seen).toEqual({ second: ErrorCode.InvalidState, offeredBack: true });
    expect(metrics.operators[0]).toMatchObject({ retries: 1, emitted: 0 });
    expect(metrics.pools[0]?.outstanding).toBe(0);
  });
});
