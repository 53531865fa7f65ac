import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { HostBackend, MemoryKind, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { RunSession, isInsideCompute } from '../src/index.js';

/** Records isInsideCompute() during its activations and emits one small frame each time. */
class ScopeSource extends Operator {
  out!: OutputPort;
  readonly seen: boolean[] = [];
  setup(spec: OperatorSpec): void {
    this.out = spec.output('out').producesTensor({
      representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: 4 },
      storage: 'runtimePool',
    } as never);
  }
  compute(ctx: ExecutionContext): Result<void> {
    this.seen.push(isInsideCompute());
    const loan = unwrap(ctx.allocateTensor(this.out, { shape: [4], dtype: DType.uint8 }));
    unwrap(unwrap(loan.write(null)).commit());
    if (this.seen.length === 3) ctx.finish();
    return ctx.emit(this.out, loan);
  }
}

class ScopeSink extends Operator {
  in!: InputPort;
  readonly seen: boolean[] = [];
  setup(spec: OperatorSpec): void {
    this.in = spec.input('in', { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 });
  }
  async compute(): Promise<void> {
    this.seen.push(isInsideCompute());
    await Promise.resolve();
  }
}

describe('isInsideCompute', () => {
  it('is true in the synchronous part of every compute() and false outside', async () => {
    const graph = new Graph('scope');
    const source = graph.add(new ScopeSource('source'));
    const sink = graph.add(new ScopeSink('sink'));
    graph.addFlow(source.out, sink.in, { queueDepth: 2 });
    const session = unwrap(RunSession.create(unwrap(compile(graph)), { backend: new HostBackend() }));
    expect(isInsideCompute()).toBe(false);
    await session.run();
    expect(source.seen).toEqual([true, true, true]);
    expect(sink.seen).toEqual([true, true, true]);
    expect(isInsideCompute()).toBe(false);
  });
});
