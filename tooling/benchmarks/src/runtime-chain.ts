import { type ExecutionContext, type InputPort, Graph, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { Device, ErrorCode, type Result, MemoryKind, OK_VOID, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';

class FrameSource extends Operator {
  frames!: OutputPort;
  private sent = 0;
  /** One request for every frame (a literal per call would be the bench's own per-frame garbage). */
  private readonly request: { readonly shape: readonly number[]; readonly dtype: DType };

  constructor(name: string, private readonly count: number, private readonly frameBytes: number) {
    super(name);
    this.request = { shape: [frameBytes], dtype: DType.uint8 };
  }

  setup(spec: OperatorSpec): void {
    this.frames = spec.output('frames').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: this.frameBytes },
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.frames, this.request);
    // Every slot still retiring (exhaustion is a value): produce nothing now; the scheduler polls again.
    if (!loan.ok) return loan.error.code === ErrorCode.ResourceExhausted ? OK_VOID : loan;
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
  /** heapUsed after a forced GC at frame `probeAt` and at the last frame (bytes); not read without a probe. */
  heapAtProbe = 0;
  heapAtEnd = 0;

  /** @param probeAt the frame of the first heap probe; `null`: no probes (no forced GC inside a timed run). */
  constructor(name: string, private readonly probeAt: number | null, private readonly last: number) {
    super(name);
  }

  setup(spec: OperatorSpec): void {
    this.frames = spec.input('frames', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
  }

  compute(ctx: ExecutionContext): Result<void> {
    if (ctx.receive(this.frames) !== undefined) this.received += 1;
    if (this.probeAt !== null) {
      if (this.received === this.probeAt) this.heapAtProbe = heapAfterGc();
      if (this.received === this.last) this.heapAtEnd = heapAfterGc();
    }
    return OK_VOID;
  }
}

function heapAfterGc(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

/** Figures of one run of the chain. */
export interface ChainRun {
  /** Wall time of `session.run()` per frame; includes the two forced GCs of a heap probe when there is one. */
  readonly nsPerFrame: number;
  /** JS heap growth between frame `heapProbeAt` and the last frame, after forced GCs (bytes); `null` without a probe. */
  readonly heapGrowthBytes: number | null;
}

/**
 * A two-operator chain through the full runtime (compile, session, scheduler) on the host backend. Its
 * one edge is a proven fused edge; `fullFences` keeps every fence on it anyway (the comparison);
 * `latencySampleInterval` times one activation in that many for the latency metrics (1: every one).
 * `heapProbeAt` (a frame number) makes the sink force a GC there and at the last frame to report the heap
 * growth between them; `null` (the timing rows) forces none, so no collection is timed as hop cost.
 */
export async function runRuntimeChain(frames: number, frameBytes: number, queueDepth: number, heapProbeAt: number | null, fullFences = false, latencySampleInterval = 1): Promise<ChainRun> {
  const graph = new Graph('bench-chain');
  const source = graph.add(new FrameSource('source', frames, frameBytes));
  const sink = graph.add(new FrameSink('sink', heapProbeAt, frames));
  graph.addFlow(source.frames, sink.frames, { queueDepth });
  const plan = unwrap(compile(graph, { deployment: { bindOperatorDevice: { source: Device.cuda(0), sink: Device.cuda(0) }, bindTensorOutputDevice: { 'source.frames': Device.cuda(0) } } }));
  const session = unwrap(RunSession.create(plan, { backend: 'host', fullFences, latencySampleInterval }));
  const start = process.hrtime.bigint();
  await session.run();
  const elapsed = Number(process.hrtime.bigint() - start);
  session.dispose();
  if (sink.received !== frames) throw new Error(`runtime chain lost frames: ${sink.received}/${frames}`);
  return { nsPerFrame: elapsed / frames, heapGrowthBytes: heapProbeAt === null ? null : sink.heapAtEnd - sink.heapAtProbe };
}
