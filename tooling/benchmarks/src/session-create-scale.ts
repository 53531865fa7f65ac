import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { HostBackend, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';

const FRAME = { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 } as const;

/** Head of the chain: one 256-byte host runtime-pool output. */
class ChainSource extends Operator {
  out!: OutputPort;
  setup(spec: OperatorSpec): void {
    this.out = spec.output('out').producesTensor({ representation: FRAME, bounds: { maxByteSpan: 256 }, storage: 'runtimePool' });
  }
  compute(ctx: ExecutionContext): Result<void> {
    ctx.finish();
    return OK_VOID;
  }
}

/** A link: one input, one 256-byte host runtime-pool output. */
class ChainLink extends Operator {
  in!: InputPort;
  out!: OutputPort;
  setup(spec: OperatorSpec): void {
    this.in = spec.input('in', FRAME);
    this.out = spec.output('out').producesTensor({ representation: FRAME, bounds: { maxByteSpan: 256 }, storage: 'runtimePool' });
  }
  compute(): Result<void> {
    return OK_VOID;
  }
}

/** A chain of `operators` host operators (a source, then links), each output its own pool. */
export function buildChain(operators: number): Graph {
  const graph = new Graph(`chain-${operators}`);
  let previous = graph.add(new ChainSource('op0')).out;
  for (let i = 1; i < operators; i += 1) {
    const link = graph.add(new ChainLink(`op${i}`));
    graph.addFlow(previous, link.in);
    previous = link.out;
  }
  return graph;
}

/** One measurement: `compile()` and `RunSession.create()` of an `operators`-long chain, ms, and the heap growth across create, MiB. */
export interface SessionCreateScale {
  readonly operators: number;
  readonly compileMs: number;
  readonly createMs: number;
  readonly createHeapMiB: number;
  /** Resident set size right after create, MiB (the process's whole footprint, plan and graph included). */
  readonly rssMiB: number;
}

/**
 * Times `compile()` and `RunSession.create()` of a chained graph on the host backend (one run each; the
 * heap is measured after a forced GC when `--expose-gc` is on), then disposes the session.
 */
export function measureSessionCreate(operators: number): SessionCreateScale {
  const collect = (): number => {
    (globalThis as { gc?: () => void }).gc?.();
    return process.memoryUsage().heapUsed;
  };
  const graph = buildChain(operators);
  const t0 = performance.now();
  const plan = unwrap(compile(graph));
  const t1 = performance.now();
  const before = collect();
  const backend = new HostBackend();
  const t2 = performance.now();
  const session = unwrap(RunSession.create(plan, { backend }));
  const t3 = performance.now();
  const after = collect();
  const rssMiB = process.memoryUsage().rss / 2 ** 20;
  session.dispose();
  backend.dispose();
  return { operators, compileMs: t1 - t0, createMs: t3 - t2, createHeapMiB: (after - before) / 2 ** 20, rssMiB };
}
