import { type ExecutionContext, Graph, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { Device, ErrorCode, HostBackend, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { RunSession, SubmissionPacer } from '../src/index.js';
import { CollectSink, FRAME } from './test-operators.js';
import { bindDevices } from './deployment.js';

/** A source that admits each frame through a pacer before submitting its fill. */
class PacedSource extends Operator {
  frames!: OutputPort;
  pacer!: SubmissionPacer;
  sent = 0;
  maxInFlight = 0;
  constructor(name: string, private readonly count: number, private readonly window: number) {
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
  compute(ctx: ExecutionContext): Result<void> | Promise<Result<void>> {
    this.pacer ??= unwrap(SubmissionPacer.create(ctx.backend, Device.cuda(0), this.window));
    const wait = this.pacer.admit();
    return wait === null ? this.produce(ctx) : wait.then(() => this.produce(ctx));
  }
  private produce(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.frames, { shape: [FRAME], dtype: DType.uint8 });
    // No free slot (exhaustion is a value): produce nothing this activation; the scheduler polls again.
    if (!loan.ok) return loan.error.code === ErrorCode.ResourceExhausted ? OK_VOID : loan;
    const guard = unwrap(loan.value.write(ctx.cudaStream()));
    unwrap(ctx.backend.memsetAsync(ctx.cudaStream(), guard.range, (this.sent + 1) & 0xff));
    unwrap(this.pacer.record(ctx.cudaStream()));
    this.maxInFlight = Math.max(this.maxInFlight, this.pacer.inFlight);
    unwrap(guard.commit());
    this.sent += 1;
    if (this.sent === this.count) ctx.finish();
    return ctx.emit(this.frames, loan.value);
  }
  override stop(): Promise<void> {
    return this.pacer.close();
  }
}

describe('SubmissionPacer', () => {
  it('keeps at most `window` frames of producer work in flight; every frame still arrives in order', async () => {
    const backend = new HostBackend({ orderingChecker: true, seed: 9 });
    const graph = new Graph('paced');
    const source = graph.add(new PacedSource('source', 24, 2));
    const sink = graph.add(new CollectSink('sink'));
    graph.addFlow(source.frames, sink.input, { queueDepth: 4 });
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) }));
    const session = unwrap(RunSession.create(plan, { backend }));
    await session.run();
    session.dispose();
    expect(sink.firstBytes).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    expect(source.maxInFlight).toBeGreaterThanOrEqual(1);
    expect(source.maxInFlight).toBeLessThanOrEqual(2);
    expect(source.pacer.inFlight).toBe(0);
    expect(backend.orderingChecker?.violations).toEqual([]);
    backend.dispose();
  });

  it('refuses a bad window and a record() past the window', async () => {
    const backend = new HostBackend();
    for (const window of [0, -1, 1.5, 2000]) {
      const made = SubmissionPacer.create(backend, Device.cuda(0), window);
      expect(made.ok ? null : made.error.code).toBe(ErrorCode.InvalidArgument);
    }
    const noBackend = SubmissionPacer.create(null as never, Device.cuda(0), 1);
    expect(noBackend.ok ? '' : noBackend.error.message).toBe('InvalidArgument: SubmissionPacer: expected a Backend (for example new HostBackend()), got null');
    const pacer = unwrap(SubmissionPacer.create(backend, Device.cuda(0), 1));
    const stream = unwrap(backend.createStream(Device.cuda(0)));
    unwrap(pacer.record(stream));
    const over = pacer.record(stream);
    expect(over.ok ? null : over.error.code).toBe(ErrorCode.InvalidState);
    await pacer.close();
    backend.destroyStream(stream);
    backend.dispose();
  });
});
