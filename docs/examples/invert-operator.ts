// Getting started: an operator that inverts grey images on its stream, in a three-operator graph
// (source -> invert -> sink), compiled and run on the host backend. `pnpm test` runs this file.
import { Graph, Operator, compile, type ExecutionContext, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
import { RunSession, formatMetrics } from '@hs/runtime';
import { Device, MemoryKind, OK_VOID, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';

const WIDTH = 8;
const HEIGHT = 4;

/** Emits `count` grey frames in device memory; frame i is filled with the value 10 * i. */
class FrameSource extends Operator {
  frames!: OutputPort;
  private sent = 0;

  constructor(name: string, private readonly count: number) {
    super(name);
  }

  setup(spec: OperatorSpec): void {
    this.frames = spec.output('frames').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 },
      bounds: { maxByteSpan: WIDTH * HEIGHT },
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.frames, { shape: [HEIGHT, WIDTH], dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const guard = loan.value.write(ctx.cudaStream());
    if (!guard.ok) return guard;
    const filled = ctx.backend.memsetAsync(ctx.cudaStream(), guard.value.range, 10 * this.sent);
    if (!filled.ok) return filled;
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    this.sent += 1;
    if (this.sent === this.count) ctx.finish();
    return ctx.emit(this.frames, loan.value);
  }
}

export class Invert extends Operator {
  input!: InputPort;
  output!: OutputPort;

  setup(spec: OperatorSpec): void {
    this.input = spec.input('input', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 });
    this.output = spec.output('output').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 },
      bounds: { maxByteSpan: 1920 * 1080 }, // bytes per slot
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const src = ctx.receive(this.input); // already ordered on ctx.cudaStream()
    if (src === undefined) return OK_VOID;
    const loan = ctx.allocateTensor(this.output, { shape: src.shape, dtype: DType.uint8 });
    if (!loan.ok) return loan; // ResourceExhausted: no free slot; nothing waited
    const stream = ctx.cudaStream();
    const guard = loan.value.write(stream);
    if (!guard.ok) return guard;
    const launched = ctx.backend.launchKernel(stream, {
      name: 'example.invert',
      reads: [src.data()],
      writes: [guard.value.range],
      params: [src.byteSize],
      host: ([from], [to], [bytes]) => {
        for (let i = 0; i < bytes!; i++) to![i] = 255 - from![i]!;
      },
    });
    if (!launched.ok) return launched;
    const committed = guard.value.commit(); // records readiness on the stream; never waits
    if (!committed.ok) return committed;
    return ctx.emit(this.output, loan.value);
  }
}

/** Copies each frame to the host (the explicit wait) and keeps its first pixel. */
class FrameSink extends Operator {
  frames!: InputPort;
  readonly firstPixels: number[] = [];
  private readonly host = new Uint8Array(WIDTH * HEIGHT);

  setup(spec: OperatorSpec): void {
    this.frames = spec.input('frames', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 });
  }

  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const frame = ctx.receive(this.frames);
    if (frame === undefined) return OK_VOID;
    await frame.copyToHost(this.host, ctx.cudaStream()); // rejects with HsError on failure; compute() passes it on and the run fails with it
    this.firstPixels.push(this.host[0]!);
    return OK_VOID;
  }
}

const graph = new Graph('invert-demo');
const source = graph.add(new FrameSource('source', 4)); // add() calls setup() at once
const invert = graph.add(new Invert('invert'));
const sink = graph.add(new FrameSink('sink'));
graph.addFlow(source.frames, invert.input, { queueDepth: 2 });
graph.addFlow(invert.output, sink.frames, { queueDepth: 2 });

const plan = compile(graph, {
  deployment: { bindTensorOutputDevice: { 'source.frames': Device.cuda(0), 'invert.output': Device.cuda(0) } },
});
if (!plan.ok) throw plan.error;           // CompileError with diagnostics
console.log(plan.value.toText());         // partitions, streams, pools and how each pool was sized

const session = RunSession.create(plan.value, { backend: 'host' });
if (!session.ok) throw session.error;
try {
  console.log(formatMetrics(await session.value.run())); // a failed run rejects with its HsError
} finally {
  session.value.dispose();
}
console.log(`first pixels: ${sink.firstPixels.join(' ')}`); // 255 245 235 225
