import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { Device, ErrorCode, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { RunSession } from '../src/index.js';
import { bindDevices } from './deployment.js';

/** A rank-2 runtime-pool output that tries a rank-1 and then a rank-2 allocation each frame. */
class ImageSource extends Operator {
  out!: OutputPort;
  readonly refusals: Result<unknown>[] = [];
  emitted = 0;
  setup(spec: OperatorSpec): void {
    this.out = spec.output('image').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 },
      bounds: { maxByteSpan: 64 },
      storage: 'runtimePool',
    });
    spec.requireCudaStream();
  }
  compute(ctx: ExecutionContext): Result<void> {
    const flat = ctx.allocateTensor(this.out, { shape: [64], dtype: DType.uint8 });
    if (flat.ok) return ctx.emit(this.out, flat.value);
    this.refusals.push(flat);
    const loan = unwrap(ctx.allocateTensor(this.out, { shape: [8, 8], dtype: DType.uint8 }));
    unwrap(unwrap(loan.write(ctx.cudaStream())).commit());
    unwrap(ctx.emit(this.out, loan));
    if (++this.emitted === 3) ctx.finish();
    return OK_VOID;
  }
}

class ImageSink extends Operator {
  in!: InputPort;
  readonly shapes: (readonly number[])[] = [];
  setup(spec: OperatorSpec): void {
    this.in = spec.input('image', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 });
  }
  compute(ctx: ExecutionContext): Result<void> {
    const t = ctx.receive(this.in);
    if (t !== undefined) this.shapes.push(t.shape);
    return OK_VOID;
  }
}

// Spec: the representation rank is exact; `bounds.maxRank` (default: that rank) is the storage bound.
describe('exact rank: a pool output refuses allocations of another rank', () => {
  it('a rank-2 output refuses a rank-1 allocation with InvalidArgument; the rank-2 consumer only ever sees rank 2', async () => {
    const graph = new Graph('exact-rank');
    const source = graph.add(new ImageSource('source'));
    const sink = graph.add(new ImageSink('sink'));
    graph.addFlow(source.out, sink.in);
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) }));
    expect(plan.tensorAllocations().find((p) => p.id === 'pool:source.image')?.rank).toBe(2);
    const session = unwrap(RunSession.create(plan, { backend: 'host' }));
    await session.run();
    session.dispose();
    expect(source.refusals).toHaveLength(3);
    for (const r of source.refusals) {
      expect(r.ok ? undefined : r.error.code).toBe(ErrorCode.InvalidArgument);
      expect(r.ok ? '' : r.error.message).toContain('pool "pool:source.image": shape has rank 1, but the output is declared with rank 2');
    }
    expect(sink.shapes.length).toBeGreaterThan(0);
    for (const shape of sink.shapes) expect(shape).toHaveLength(2);
  });
});
