import { type ExecutionContext, type InputPort, Graph, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { Device, type Result, MemoryKind, OK_VOID, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';

class FrameSource extends Operator {
  frames!: OutputPort;
  private sent = 0;
  private readonly shape: readonly number[];

  constructor(name: string, private readonly count: number, private readonly frameBytes: number) {
    super(name);
    this.shape = [frameBytes];
  }

  setup(spec: OperatorSpec): void {
    this.frames = spec.output('frames').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: this.frameBytes },
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.frames, { shape: this.shape, dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const guard = loan.value.write(ctx.cudaStream());
    if (!guard.ok) return guard;
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    this.sent += 1;
    if (this.sent === this.count) ctx.finish();
    return ctx.emit(this.frames, loan.value);
  }
}

class FrameSink extends Operator {
  frames!: InputPort;
  received = 0;

  setup(spec: OperatorSpec): void {
    this.frames = spec.input('frames', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
  }

  compute(ctx: ExecutionContext): Result<void> {
    if (ctx.receive(this.frames) !== undefined) this.received += 1;
    return OK_VOID;
  }
}

/** A two-operator chain through the full runtime (compile, session, scheduler) on the host backend. */
export async function runtimeChainNsPerFrame(frames: number, frameBytes: number, queueDepth: number): Promise<number> {
  const graph = new Graph('bench-chain');
  const source = graph.add(new FrameSource('source', frames, frameBytes));
  const sink = graph.add(new FrameSink('sink'));
  graph.addFlow(source.frames, sink.frames, { queueDepth });
  const plan = unwrap(compile(graph, { deployment: { bindOperatorDevice: { source: Device.cuda(0), sink: Device.cuda(0) } } }));
  const session = unwrap(RunSession.create(plan, { backend: 'host' }));
  const start = process.hrtime.bigint();
  unwrap(await session.run());
  const elapsed = Number(process.hrtime.bigint() - start);
  session.dispose();
  if (sink.received !== frames) throw new Error(`runtime chain lost frames: ${sink.received}/${frames}`);
  return elapsed / frames;
}
