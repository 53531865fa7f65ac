import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { Device, HostBackend, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunSession } from '../src/index.js';
import { AddOne, FRAME, FillSource } from './test-operators.js';
import { bindDevices } from './deployment.js';

// Only setTimeout is frozen: the scheduler's back-off and source-pacing timers never fire unless the
// test advances the clock. setImmediate stays real (the scheduler's next-check turns and the host
// backend's stream work), so everything due "at once" still happens.

/** One real event-loop turn (a check phase). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Spends real turns (the frozen clock never moves) until `done()` holds, at most `turns` of them. */
async function turnsUntil(done: () => boolean, turns = 2_000): Promise<boolean> {
  for (let i = 0; i < turns && !done(); i++) await nextTurn();
  return done();
}

/** Lets the frozen timers fire, a millisecond at a time, until `running` settles. */
async function finishWithClock<T>(running: Promise<T>): Promise<T> {
  let settled = false;
  void running.then(() => (settled = true));
  while (!settled) {
    await nextTurn();
    vi.advanceTimersByTime(1);
  }
  return running;
}

/** AddOne's work, done only once the test opens the gate its compute() waits on. */
class GatedAddOne extends Operator {
  entered = false;
  open!: () => void;
  private readonly opened = new Promise<void>((resolve) => (this.open = resolve));
  private readonly work: AddOne;
  constructor(name: string) {
    super(name);
    this.work = new AddOne(name);
  }
  get input(): InputPort {
    return this.work.input;
  }
  get output(): OutputPort {
    return this.work.output;
  }
  setup(spec: OperatorSpec): void {
    this.work.setup(spec);
  }
  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    this.entered = true;
    await this.opened;
    return this.work.compute(ctx);
  }
}

/** Counts its activations synchronously (no host wait, no promise). */
class CountingSink extends Operator {
  input!: InputPort;
  seen = 0;
  setup(spec: OperatorSpec): void {
    this.input = spec.input('input', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
  }
  compute(): Result<void> {
    this.seen += 1;
    return OK_VOID;
  }
}

/** A source due again only an hour after each activation; it never emits. */
class HourlySource extends Operator {
  frames!: OutputPort;
  activations = 0;
  setup(spec: OperatorSpec): void {
    this.frames = spec.output('frames').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: FRAME },
      storage: 'runtimePool',
    });
    spec.requireCudaStream();
  }
  compute(ctx: ExecutionContext): Result<void> {
    this.activations += 1;
    ctx.deferUntil(ctx.activationTime + 3_600_000_000_000n);
    return OK_VOID;
  }
}

function onCuda0(graph: Graph): ReturnType<typeof compile> {
  const bind: Record<string, Device> = {};
  for (const op of graph.operators) bind[op.name] = Device.cuda(0);
  return compile(graph, { deployment: bindDevices(graph, bind) });
}

describe('Scheduler wake-ups', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
  afterEach(() => vi.useRealTimers());

  it('runs the downstream operator on the next turn after an async compute() settles, not after the back-off timer', async () => {
    const backend = new HostBackend({ orderingChecker: true, seed: 5 });
    const graph = new Graph('gated');
    const source = graph.add(new FillSource('source', 1));
    const gated = graph.add(new GatedAddOne('gated'));
    const sink = graph.add(new CountingSink('sink'));
    graph.addFlow(source.frames, gated.input, { queueDepth: 1 });
    graph.addFlow(gated.output, sink.input, { queueDepth: 1 });
    const session = unwrap(RunSession.create(unwrap(onCuda0(graph)), { backend }));
    const running = session.run();

    // The gated compute() is in flight and the idle scheduler has backed off to a timer.
    expect(await turnsUntil(() => gated.entered && vi.getTimerCount() > 0)).toBe(true);
    expect(sink.seen).toBe(0);

    gated.open();
    expect(await turnsUntil(() => sink.seen === 1)).toBe(true);

    const metrics = await finishWithClock(running);
    expect(metrics.frames).toBe(1);
    expect(backend.orderingChecker?.violations).toEqual([]);
    session.dispose();
    backend.dispose();
  });

  it('settles a stop request on the next turns, not when the paced source is next due', async () => {
    const backend = new HostBackend();
    const graph = new Graph('paced');
    const source = graph.add(new HourlySource('source'));
    graph.addFlow(source.frames, graph.add(new CountingSink('sink')).input, { queueDepth: 1 });
    const session = unwrap(RunSession.create(unwrap(onCuda0(graph)), { backend }));
    const abort = new AbortController();
    let settled = false;
    const running = session.run({ signal: abort.signal });
    void running.then(() => (settled = true));

    // The source ran once and the scheduler sleeps on a timer until it is due an hour later.
    expect(await turnsUntil(() => source.activations === 1 && vi.getTimerCount() > 0)).toBe(true);

    abort.abort();
    expect(await turnsUntil(() => settled)).toBe(true);
    await running;
    expect(source.activations).toBe(1);
    session.dispose();
    backend.dispose();
  });
});
