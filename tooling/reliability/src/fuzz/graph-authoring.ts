import fc from 'fast-check';
import { CompileError, DiagnosticCode, Graph, Operator, compile, tensorByteSpan, type InputPort, type OperatorSpec, type OutputPort, type TensorOutputSpec } from '@hs/compiler';
import { Device, HsError, MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import { FUZZ_SEED, checkProperty, type FuzzOutcome } from '../fuzz-settings.js';

const CODES = new Set<string>(Object.values(DiagnosticCode));
const KINDS = [MemoryKind.Host, MemoryKind.PinnedHost, MemoryKind.CudaDevice, MemoryKind.CudaManaged] as const;
const DTYPES = [DType.uint8, DType.float32, DType.int16] as const;

interface OperatorShape {
  readonly name: number;
  readonly inputs: readonly { readonly kind: number | null; readonly dtype: number | null; readonly rank: number | null }[];
  readonly output: { readonly kind: number; readonly dtype: number; readonly rank: number; readonly bytes: number } | null;
}

interface GraphShape {
  readonly operators: readonly OperatorShape[];
  /** (producer operator, consumer operator, consumer input, queue depth or null) — any pair, cycles and fan-in included. */
  readonly flows: readonly (readonly [number, number, number, number | null])[];
  readonly bindings: readonly (readonly [number, number])[];
  readonly defaultQueueDepth: number | null;
}

const graphShape: fc.Arbitrary<GraphShape> = fc.record({
  operators: fc.array(
    fc.record({
      name: fc.integer({ min: 0, max: 9 }),
      inputs: fc.array(
        fc.record({
          kind: fc.option(fc.integer({ min: 0, max: KINDS.length - 1 }), { nil: null }),
          dtype: fc.option(fc.integer({ min: 0, max: DTYPES.length - 1 }), { nil: null }),
          rank: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
        }),
        { maxLength: 2 },
      ),
      output: fc.option(
        fc.record({
          kind: fc.integer({ min: 0, max: KINDS.length - 1 }),
          dtype: fc.integer({ min: 0, max: DTYPES.length - 1 }),
          rank: fc.integer({ min: 1, max: 3 }),
          bytes: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 1, max: 1 << 22 }) }, fc.constant(0)),
        }),
        { nil: null, freq: 6 },
      ),
    }),
    { minLength: 1, maxLength: 7 },
  ),
  flows: fc.array(
    fc.tuple(fc.nat(7), fc.nat(7), fc.nat(1), fc.option(fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 8 }) }, fc.constantFrom(0, -1, 1.5)), { nil: null })),
    { maxLength: 10 },
  ),
  bindings: fc.array(fc.tuple(fc.nat(7), fc.integer({ min: 0, max: 2 })), { maxLength: 3 }),
  defaultQueueDepth: fc.option(fc.oneof(fc.integer({ min: 1, max: 8 }), fc.constantFrom(0, 2.5)), { nil: null }),
});

/**
 * Mostly valid graphs: unique names, a DAG where every input is fed by one earlier operator's output,
 * host-side memory kinds and open input requirements, so a good share compile and the plan checks run.
 */
const wiredShape: fc.Arbitrary<GraphShape> = fc
  .array(fc.record({ inputs: fc.integer({ min: 1, max: 2 }), kind: fc.integer({ min: 0, max: 1 }), bytes: fc.integer({ min: 1, max: 1 << 22 }), pick: fc.nat(64), depth: fc.option(fc.integer({ min: 1, max: 8 }), { nil: null }) }), { minLength: 1, maxLength: 6 })
  .map((ops) => ({
    operators: ops.map((op, i) => ({
      name: i,
      inputs: i === 0 ? [] : Array.from({ length: op.inputs }, () => ({ kind: null, dtype: null, rank: null })),
      output: { kind: op.kind, dtype: 0, rank: 1, bytes: op.bytes },
    })),
    flows: ops.flatMap((op, i) => (i === 0 ? [] : Array.from({ length: op.inputs }, (_, k) => [(op.pick + k) % i, i, k, op.depth] as const))),
    bindings: [],
    defaultQueueDepth: null,
  }));

class FuzzOperator extends Operator {
  inputs: InputPort[] = [];
  output: OutputPort | null = null;
  constructor(
    name: string,
    private readonly shape: OperatorShape,
  ) {
    super(name);
  }

  setup(spec: OperatorSpec): void {
    this.shape.inputs.forEach((req, i) => {
      this.inputs.push(
        spec.input(`in${i}`, {
          ...(req.kind === null ? {} : { memoryKind: KINDS[req.kind] }),
          ...(req.dtype === null ? {} : { dtype: DTYPES[req.dtype] }),
          ...(req.rank === null ? {} : { rank: req.rank }),
        }),
      );
    });
    const out = this.shape.output;
    if (out !== null) {
      const declared: TensorOutputSpec = { representation: { memoryKind: KINDS[out.kind], dtype: DTYPES[out.dtype]!, rank: out.rank }, storage: 'runtimePool' };
      this.output = spec.output('out').producesTensor(declared, tensorByteSpan(out.bytes));
    }
  }

  compute(): void {}
}

/** Runs an authoring step; a documented programmer error (HsError) skips it, anything else is a failure. */
function author(step: () => void): void {
  try {
    step();
  } catch (thrown) {
    if (!(thrown instanceof HsError)) throw new Error(`authoring threw a non-HsError: ${String(thrown)}`);
  }
}

/**
 * Fuzzes graph authoring and `compile()` with random graphs: duplicate names, cycles, fan-in,
 * unconnected inputs, zero byte bounds, mismatched memory kinds, dtypes and ranks, bad queue depths and
 * device bindings. Authoring may refuse a step only with an `HsError` (a documented programmer error);
 * `compile()` must never throw, and must return either a plan whose pools and edges are consistent or a
 * `CompileError` whose diagnostics are all listed `DiagnosticCode`s, at least one an error.
 */
export function fuzzGraphAuthoring(runs: number, seed: number = FUZZ_SEED): FuzzOutcome {
  let compiledPlans = 0;
  let refused = 0;
  const property = fc.property(fc.oneof(graphShape, wiredShape), (shape) => {
    const graph = new Graph('fuzz');
    const ops: FuzzOperator[] = [];
    for (const op of shape.operators) {
      const operator = new FuzzOperator(`op${op.name}`, op);
      author(() => {
        graph.add(operator);
        ops.push(operator);
      });
    }
    for (const [p, c, i, depth] of shape.flows) {
      const output = ops[p % Math.max(ops.length, 1)]?.output;
      const input = ops[c % Math.max(ops.length, 1)]?.inputs[i];
      if (output === null || output === undefined || input === undefined) continue;
      author(() => graph.addFlow(output, input, depth === null ? undefined : { queueDepth: depth }));
    }
    const bindTensorOutputDevice: Record<string, Device> = {};
    for (const [op, device] of shape.bindings) {
      const output = ops[op % Math.max(ops.length, 1)]?.output;
      bindTensorOutputDevice[output?.key ?? `op${op}.missing`] = Device.cuda(device);
    }
    let compiled;
    try {
      compiled = compile(graph, {
        deployment: { bindTensorOutputDevice },
        ...(shape.defaultQueueDepth === null ? {} : { defaultQueueDepth: shape.defaultQueueDepth }),
      });
    } catch (thrown) {
      throw new Error(`compile() threw: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
    }
    if (!compiled.ok) {
      const error = compiled.error;
      if (!(error instanceof CompileError)) throw new Error(`compile failed without a CompileError: ${error.message}`);
      const unlisted = error.diagnostics.filter((d) => !CODES.has(d.code));
      if (unlisted.length > 0) throw new Error(`unlisted diagnostic codes: ${unlisted.map((d) => d.code).join(', ')}`);
      if (!error.diagnostics.some((d) => d.severity === 'error')) throw new Error('a failed compile carries no error diagnostic');
      refused += 1;
      return;
    }
    const plan = compiled.value;
    const names = new Set(plan.operators.map((o) => o.name));
    for (const edge of plan.edges) {
      if (!names.has(edge.producer.operator) || !names.has(edge.consumer.operator)) throw new Error(`edge ${edge.id} names an operator outside the plan`);
      if (!(Number.isSafeInteger(edge.queueDepth) && edge.queueDepth >= 1)) throw new Error(`edge ${edge.id} has queue depth ${edge.queueDepth}`);
    }
    for (const pool of plan.pools) {
      if (!(Number.isSafeInteger(pool.slotCount) && pool.slotCount >= 1)) throw new Error(`pool ${pool.id} has ${pool.slotCount} slots`);
      if (!(Number.isSafeInteger(pool.maxByteSpan) && pool.maxByteSpan >= 1)) throw new Error(`pool ${pool.id} has max byte span ${pool.maxByteSpan}`);
    }
    compiledPlans += 1;
  });
  return checkProperty('graph authoring and compile (random graphs, valid and invalid)', property, runs, seed, () => `${compiledPlans} compiled, ${refused} refused with diagnostics`);
}
