import { type ExecutionContext, Graph, compile } from '@hs/compiler';
import { Device, ErrorCode, OK_VOID, type Result, unwrap } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { DType } from '@hs/tensor';
import { RunSession } from '../src/index.js';
import { CollectSink, FailingSink, FillSource } from './test-operators.js';
import { rejectionOf } from './rejection.js';
import { bindDevices } from './deployment.js';

function session(graph: Graph): RunSession {
  const bind: Record<string, Device> = {};
  for (const op of graph.operators) bind[op.name] = Device.cuda(0);
  return unwrap(RunSession.create(unwrap(compile(graph, { deployment: bindDevices(graph, bind) })), { backend: 'host' }));
}

function pair(source: FillSource, sink: FailingSink | CollectSink, queueDepth = 2): Graph {
  const graph = new Graph('pair');
  graph.add(source);
  graph.add(sink);
  graph.addFlow(source.frames, sink.input, { queueDepth });
  return graph;
}

describe('RunSession under operator faults', () => {
  it('a failed run still returns every queued slot to its pool', async () => {
    class SlowFailing extends FailingSink {
      override async compute(ctx: ExecutionContext): Promise<Result<void>> {
        await new Promise((r) => setTimeout(r, 2));
        return super.compute(ctx);
      }
    }
    const s = session(pair(new FillSource('source', 50), new SlowFailing('sink', 3), 4));
    const outcome = await rejectionOf(s.run());
    expect(outcome.code).toBe(ErrorCode.ProtocolError);
    const metrics = s.metrics();
    expect(metrics.edges[0]?.highWater).toBe(4); // frames were queued when the sink failed
    expect(metrics.pools.map((p) => p.outstanding)).toEqual([0]);
    s.dispose();
  });

  it('a compute() that returns something other than a Result fails the run with a typed error naming the operator', async () => {
    class Weird extends FailingSink {
      override compute(_ctx: ExecutionContext): Result<void> {
        return 42 as unknown as Result<void>;
      }
    }
    const s = session(pair(new FillSource('source', 5), new Weird('weird', 0)));
    const outcome = await rejectionOf(s.run());
        expect(outcome.code).toBe(ErrorCode.ProtocolError);
    expect(outcome.message).toMatch(/^ProtocolError: operator weird: compute\(\) returned number 42/);
    expect(s.metrics().pools[0]?.outstanding).toBe(0);
    s.dispose();
  });

  it("names the operator once in a misuse error that the runtime's context already names", async () => {
    class ReadsTwice extends FailingSink {
      override compute(ctx: ExecutionContext): Result<void> {
        ctx.receive(this.input);
        ctx.receive(this.input);
        return OK_VOID;
      }
    }
    const s = session(pair(new FillSource('source', 3), new ReadsTwice('twice', 0)));
    const outcome = await rejectionOf(s.run());
    expect(outcome.code).toBe(ErrorCode.InvalidState);
    expect(outcome.message).toMatch(/^InvalidState: operator twice: input input was already read in this activation/);
    expect(outcome.message).not.toContain('operator twice: operator twice');
    expect(s.metrics().pools[0]?.outstanding).toBe(0);
    s.dispose();
  });

  it('finish() from a consumer is a typed InvalidState failure, not a hang', async () => {
    class Quitter extends FailingSink {
      override compute(ctx: ExecutionContext): Result<void> {
        ctx.finish();
        return OK_VOID;
      }
    }
    const s = session(pair(new FillSource('source', 5), new Quitter('quitter', 0)));
    const outcome = await rejectionOf(s.run());
    expect(outcome.code).toBe(ErrorCode.InvalidState);
    expect(outcome.message).toContain('finish() is for source operators');
    s.dispose();
  });

  it('emitting the same loan twice says it was already emitted', async () => {
    let second: Result<void> | undefined;
    class Twice extends FillSource {
      override compute(ctx: ExecutionContext): Result<void> {
        const loan = unwrap(ctx.allocateTensor(this.frames, { shape: [64], dtype: DType.uint8 }));
        unwrap(unwrap(loan.write(ctx.cudaStream())).commit());
        unwrap(ctx.emit(this.frames, loan));
        second = ctx.emit(this.frames, loan);
        ctx.finish();
        return OK_VOID;
      }
    }
    const s = session(pair(new Twice('source', 1), new CollectSink('sink'), 4));
    await s.run();
    expect(second?.ok).toBe(false);
    if (second !== undefined && !second.ok) {
      expect(second.error.code).toBe(ErrorCode.InvalidState);
      expect(second.error.message).toContain('already emitted');
    }
    s.dispose();
  });

  it('enforces the declared maxByteSpan, not the aligned slot size', async () => {
    let over: Result<unknown> | undefined;
    class Oversize extends FillSource {
      override compute(ctx: ExecutionContext): Result<void> {
        over = ctx.allocateTensor(this.frames, { shape: [65], dtype: DType.uint8 });
        return super.compute(ctx);
      }
    }
    const s = session(pair(new Oversize('source', 1), new CollectSink('sink')));
    await s.run();
    expect(over?.ok).toBe(false);
    expect(over !== undefined && !over.ok && over.error.code).toBe(ErrorCode.InvalidArgument);
    expect(over !== undefined && !over.ok && over.error.message).toContain('64');
    s.dispose();
  });

  it('a lease kept past the run is reported by pool instead of hanging', async () => {
    class Keeper extends FailingSink {
      override compute(ctx: ExecutionContext): Result<void> {
        unwrap(ctx.receive(this.input)!.backing!.acquireLease());
        return OK_VOID;
      }
    }
    const s = session(pair(new FillSource('source', 2), new Keeper('keeper', 0)));
    const outcome = await rejectionOf(s.run({ drainTimeoutMs: 50 }));
    expect(outcome.code).toBe(ErrorCode.InvalidState);
    expect(outcome.message).toContain('pool:source.frames 2/');
    s.dispose();
  });
});
