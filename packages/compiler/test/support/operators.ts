import { Device, MemoryKind, requiresCudaDevice } from '@hs/streams';
import { DType } from '@hs/tensor';
import { CompileError, Graph, Operator, compile, type CompileOptions, type DeploymentBinding, type ExecutionPlan, type OperatorSpec, type TensorOutputSpec } from '../../src/index.js';

/** An operator whose setup() is given by the test. */
export class ScriptedOperator extends Operator {
  constructor(
    name: string,
    private readonly declare: (spec: OperatorSpec) => void,
  ) {
    super(name);
  }

  setup(spec: OperatorSpec): void {
    this.declare(spec);
  }

  compute(): void {}
}

/** A runtime-pool cudaDevice uint8 rank-2 output spec of `maxByteSpan` bytes. */
export function deviceFrames(maxByteSpan = 1 << 20): TensorOutputSpec {
  return {
    representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 },
    bounds: { maxByteSpan },
    storage: 'runtimePool',
  };
}

/** Input requirements matching `deviceFrames()`. */
export const DEVICE_FRAMES_IN = { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 } as const;

/** Builds a graph of CUDA operators named in `edges` ("a->b"), each with one output `out` and inputs `in0`, `in1`, ... */
export function cudaGraph(name: string, edges: readonly string[], queueDepths: Record<string, number> = {}): Graph {
  const names = [...new Set(edges.flatMap((e) => e.split('->')))];
  const fanIn = new Map<string, number>();
  for (const e of edges) {
    const consumer = e.split('->')[1] as string;
    fanIn.set(consumer, (fanIn.get(consumer) ?? 0) + 1);
  }
  const graph = new Graph(name);
  const ops = new Map(
    names.map((n) => [
      n,
      graph.add(
        new ScriptedOperator(n, (spec) => {
          for (let i = 0; i < (fanIn.get(n) ?? 0); i += 1) spec.input(`in${i}`, DEVICE_FRAMES_IN);
          spec.output('out').producesTensor(deviceFrames());
        }),
      ),
    ]),
  );
  const used = new Map<string, number>();
  for (const e of edges) {
    const [p, c] = e.split('->') as [string, string];
    const slot = used.get(c) ?? 0;
    used.set(c, slot + 1);
    const producer = graph.specOf(ops.get(p) as Operator).outputs[0];
    const consumer = graph.specOf(ops.get(c) as Operator).inputs[slot];
    if (producer === undefined || consumer === undefined) throw new Error('fixture wiring');
    graph.addFlow(producer, consumer, queueDepths[e] === undefined ? undefined : { queueDepth: queueDepths[e] });
  }
  return graph;
}

/**
 * A deployment binding `device` to each operator named (all of `graph` by default) and to each of their
 * runtime-pool outputs that declares a CUDA memory kind (those take only their own binding, spec row 150).
 */
export function bindAll(graph: Graph, device: Device = Device.cuda(0), names: readonly string[] = graph.operators.map((op) => op.name)): DeploymentBinding {
  const bindTensorOutputDevice: Record<string, Device> = {};
  for (const op of graph.operators) {
    if (!names.includes(op.name)) continue;
    for (const port of graph.specOf(op).outputs) {
      const kind = port.tensor?.representation.memoryKind ?? null;
      if (port.tensor?.storage === 'runtimePool' && kind !== null && requiresCudaDevice(kind)) bindTensorOutputDevice[port.key] = device;
    }
  }
  return { bindOperatorDevice: Object.fromEntries(names.map((n) => [n, device])), bindTensorOutputDevice };
}

/** Options binding every operator of `graph` and its CUDA runtime-pool outputs to cuda:0. */
export function allOnCuda0(graph: Graph, extra: CompileOptions = {}): CompileOptions {
  return { ...extra, deployment: bindAll(graph) };
}

/** Compiles and returns the plan, failing the test with the compile error otherwise. */
export function compileOk(graph: Graph, options?: CompileOptions): ExecutionPlan {
  const result = compile(graph, options);
  if (!result.ok) throw result.error;
  return result.value;
}

/** Compiles a graph that must fail and returns its CompileError. */
export function compileFailure(graph: Graph, options?: CompileOptions): CompileError {
  const result = compile(graph, options);
  if (result.ok) throw new Error(`expected compile of '${graph.name}' to fail:\n${result.value.toText()}`);
  if (!(result.error instanceof CompileError)) throw result.error;
  return result.error;
}
