import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { Device, ErrorCode, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { RunSession } from '../src/index.js';
import { bindDevices } from './deployment.js';

/** A source whose runtime pool has a zero bound: records what every allocation returned. */
class ZeroBoundSource extends Operator {
  out!: OutputPort;
  readonly results: Result<unknown>[] = [];
  constructor(
    name: string,
    readonly bounds: { maxByteSpan: number; maxRank?: number },
    readonly frames = 3,
  ) {
    super(name);
  }
  setup(spec: OperatorSpec): void {
    this.out = spec.output('frames').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 },
      bounds: this.bounds,
      storage: 'runtimePool',
    });
    spec.requireCudaStream();
  }
  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.out, { shape: [16], dtype: DType.uint8 });
    this.results.push(loan);
    if (loan.ok) loan.value.abandon();
    if (this.results.length === this.frames) ctx.finish();
    return OK_VOID;
  }
}

class Sink extends Operator {
  in!: InputPort;
  received = 0;
  setup(spec: OperatorSpec): void {
    this.in = spec.input('frames', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
  }
  compute(ctx: ExecutionContext): Result<void> {
    if (ctx.receive(this.in) !== undefined) this.received += 1;
    return OK_VOID;
  }
}

async function runZero(bounds: { maxByteSpan: number; maxRank?: number }): Promise<{ source: ZeroBoundSource; sink: Sink }> {
  const graph = new Graph('zero-bounds');
  const source = graph.add(new ZeroBoundSource('source', bounds));
  const sink = graph.add(new Sink('sink'));
  graph.addFlow(source.out, sink.in);
  const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) }));
  const session = unwrap(RunSession.create(plan, { backend: 'host' }));
  await session.run();
  session.dispose();
  return { source, sink };
}

// Spec: "Sized cold, borrowed hot" — a zero max_rank or max_byte_span means "reject allocation", not "unbounded".
describe('zero bounds: the plan runs and its pool rejects every allocation', () => {
  it.each([
    ['maxByteSpan', { maxByteSpan: 0 }],
    ['maxRank', { maxByteSpan: 64, maxRank: 0 }],
  ] as const)('%s 0: every allocateTensor() returns InvalidArgument naming the pool, nothing is published', async (field, bounds) => {
    const { source, sink } = await runZero(bounds);
    expect(source.results).toHaveLength(3);
    for (const result of source.results) {
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.error.code).toBe(ErrorCode.InvalidArgument);
      expect(result.error.message).toContain(`pool "pool:source.frames" rejects allocation: its ${field === 'maxByteSpan' ? 'slotByteSpan' : 'maxRank'} is 0`);
    }
    expect(sink.received).toBe(0);
  });
});
