import {
  type ExecutionContext,
  Graph,
  type InputPort,
  Operator,
  type OperatorSpec,
  type OutputPort,
  Rate,
  RateRatio,
  compile,
  inputMaxByteSpan,
  parameterContiguousByteSpan,
  paramSchema,
  shapeParam,
} from '@hs/compiler';
import { Device, MemoryKind, OK_VOID, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';

const SourceParams = paramSchema('com.hs.bench.Source', 1, { frameShape: shapeParam({ rank: 3, maxExtent: 8192 }).recompileRequired() });
const FRAME = { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 3 } as const;

/** Source: 60 Hz, slot bytes from a shape parameter. */
class Source extends Operator {
  out!: OutputPort;
  setup(spec: OperatorSpec): void {
    const params = spec.params(SourceParams, { frameShape: [1080, 1920, 4] });
    this.out = spec
      .output('out')
      .producesTensor({ representation: FRAME, storage: 'runtimePool' }, parameterContiguousByteSpan(params.ref('frameShape')))
      .nominalRate(Rate.hz(60));
  }
  compute(): Result<void> {
    return OK_VOID;
  }
}

/** Stage: triggered by its input, rate 1/2 of it, slot bytes derived from the producer's bound. */
class Stage extends Operator {
  in!: InputPort;
  out!: OutputPort;
  setup(spec: OperatorSpec): void {
    this.in = spec.input('in', FRAME);
    this.out = spec
      .output('out')
      .producesTensor({ representation: FRAME, storage: 'runtimePool' }, inputMaxByteSpan(this.in).ceilingDividedBy(2).max(4096).alignedTo(256))
      .follows(this.in, new RateRatio(1, 2));
    spec.temporalContract({ trigger: { input: this.in } });
  }
  compute(_ctx: ExecutionContext): Result<void> {
    return OK_VOID;
  }
}

/** Sink: a 15 Hz clock with a window of two entries. */
class Sink extends Operator {
  in!: InputPort;
  setup(spec: OperatorSpec): void {
    this.in = spec.input('in', FRAME);
    spec.temporalContract({ trigger: { clock: Rate.hz(15) }, windows: [{ input: this.in, entries: 2 }] });
  }
  compute(): Result<void> {
    return OK_VOID;
  }
}

/**
 * A graph of `branches` x 10 operators: per branch a source, a chain of seven stages that forks
 * after the fourth into a second sink, and two sinks. Every operator and every runtime-pool output is bound to cuda:0.
 */
export function buildScaleGraph(branches: number): { graph: Graph; bind: Record<string, Device>; outputs: Record<string, Device> } {
  const graph = new Graph('compile-scale');
  const bind: Record<string, Device> = {};
  const outputs: Record<string, Device> = {};
  for (let b = 0; b < branches; b += 1) {
    const source = graph.add(new Source(`src${b}`));
    let previous: OutputPort = source.out;
    let forkAt: OutputPort | null = null;
    for (let s = 0; s < 7; s += 1) {
      const stage = graph.add(new Stage(`b${b}s${s}`));
      graph.addFlow(previous, stage.in);
      previous = stage.out;
      if (s === 3) forkAt = stage.out;
    }
    const sink = graph.add(new Sink(`b${b}sink`));
    graph.addFlow(previous, sink.in);
    const tap = graph.add(new Sink(`b${b}tap`));
    graph.addFlow(forkAt as OutputPort, tap.in);
  }
  for (const op of graph.operators) {
    bind[op.name] = Device.cuda(0);
    for (const port of graph.specOf(op).outputs) outputs[port.key] = Device.cuda(0);
  }
  return { graph, bind, outputs };
}

const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/**
 * Times `compile()` of a 1,000-operator graph (median of `runs` after warm-up) against building the
 * same graph (authoring and every setup()), measured in the same run.
 */
export function measureCompileScale(runs: number): { operators: number; edges: number; buildMs: number; compileMs: number } {
  const builds: number[] = [];
  const compiles: number[] = [];
  let operators = 0;
  let edges = 0;
  for (let i = 0; i < runs + 3; i += 1) {
    const t0 = performance.now();
    const { graph, bind, outputs } = buildScaleGraph(100);
    const t1 = performance.now();
    const plan = compile(graph, { deployment: { bindOperatorDevice: bind, bindTensorOutputDevice: outputs } });
    const t2 = performance.now();
    if (!plan.ok) throw plan.error;
    operators = plan.value.operators.length;
    edges = plan.value.edges.length;
    if (i >= 3) {
      builds.push(t1 - t0);
      compiles.push(t2 - t1);
    }
  }
  return { operators, edges, buildMs: median(builds), compileMs: median(compiles) };
}
