import { MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompileError, Graph, Rate, RateRatio, compile, tensorByteSpan, inputMaxByteSpan, type InputPort, type OutputPort } from '../src/index.js';
import { ScriptedOperator } from './support/operators.js';

/** A random DAG: operator i feeds only operators j > i; each input takes one flow. */
interface GraphShape {
  readonly operators: readonly { readonly producers: readonly number[]; readonly rateHz: number; readonly clockHz: number | null; readonly derived: boolean; readonly bytes: number }[];
  readonly depths: readonly (number | null)[];
}

const graphShape: fc.Arbitrary<GraphShape> = fc
  .integer({ min: 2, max: 9 })
  .chain((n) =>
    fc.record({
      operators: fc.tuple(
        ...Array.from({ length: n }, (_, i) =>
          fc.record({
            producers: i === 0 ? fc.constant([]) : fc.uniqueArray(fc.integer({ min: 0, max: i - 1 }), { maxLength: 3 }),
            rateHz: fc.integer({ min: 1, max: 1000 }),
            clockHz: fc.option(fc.integer({ min: 1, max: 240 }), { nil: null }),
            derived: fc.boolean(),
            bytes: fc.integer({ min: 1, max: 1 << 24 }),
          }),
        ),
      ),
      depths: fc.array(fc.option(fc.integer({ min: 1, max: 64 }), { nil: null }), { minLength: 32, maxLength: 32 }),
    }),
  );

/** Builds `shape`, adding operators and flows in the orders given by the two permutations. */
function build(shape: GraphShape, operatorOrder: readonly number[], flowOrder: (flows: number) => readonly number[]): Graph {
  const graph = new Graph('random');
  const outputs: OutputPort[] = [];
  const inputs: InputPort[][] = [];
  const ops = shape.operators.map(
    (op, i) =>
      new ScriptedOperator(`op${i}`, (spec) => {
        inputs[i] = op.producers.map((_, k) => spec.input(`in${k}`));
        const first = inputs[i][0];
        const byteSpan = op.derived && first !== undefined ? inputMaxByteSpan(first).max(op.bytes) : tensorByteSpan(op.bytes);
        const out = spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 }, storage: 'runtimePool' }, byteSpan);
        if (first === undefined) out.nominalRate(Rate.hz(op.rateHz));
        else out.follows(first, new RateRatio(1, 1 + (op.rateHz % 4)));
        if (op.clockHz !== null) spec.temporalContract({ trigger: { clock: Rate.hz(op.clockHz) } });
        outputs[i] = out;
      }),
  );
  for (const i of operatorOrder) graph.add(ops[i] as ScriptedOperator);
  const flows = shape.operators.flatMap((op, consumer) => op.producers.map((producer, k) => ({ producer, consumer, k })));
  for (const f of flowOrder(flows.length)) {
    const flow = flows[f];
    if (flow === undefined) continue;
    const depth = shape.depths[f % shape.depths.length];
    graph.addFlow(outputs[flow.producer] as OutputPort, inputs[flow.consumer]?.[flow.k] as InputPort, depth === null || depth === undefined ? undefined : { queueDepth: depth });
  }
  return graph;
}

function canonical(graph: Graph): string {
  const plan = compile(graph);
  if (plan.ok) return JSON.stringify(plan.value);
  if (!(plan.error instanceof CompileError)) throw plan.error;
  return JSON.stringify(plan.error.diagnostics);
}

const permutation = (n: number, seed: number): number[] => {
  const order = Array.from({ length: n }, (_, i) => i);
  let state = seed >>> 0 || 1;
  for (let i = n - 1; i > 0; i -= 1) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const j = state % (i + 1);
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return order;
};

describe('canonical plan JSON', () => {
  it('is byte-identical across runs and across the order the graph was built in', () => {
    fc.assert(
      fc.property(graphShape, fc.integer(), fc.integer(), (shape, seedA, seedB) => {
        const n = shape.operators.length;
        const inOrder = build(shape, [...Array(n).keys()], (flows) => [...Array(flows).keys()]);
        const shuffled = build(shape, permutation(n, seedA), (flows) => permutation(flows, seedB));
        const reference = canonical(inOrder);
        expect(canonical(inOrder)).toBe(reference);
        expect(canonical(shuffled)).toBe(reference);
      }),
      { numRuns: 200 },
    );
  });
});
