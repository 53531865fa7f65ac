import fc from 'fast-check';
import {
  CompileError,
  DiagnosticCode,
  Graph,
  Operator,
  compile,
  parameterContiguousByteSpan,
  paramSchema,
  shapeParam,
  tensorByteSpan,
  type InputPort,
  type OperatorSpec,
  type OutputPort,
  type TensorByteSpanExpression,
} from '@hs/compiler';
import { MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import { FUZZ_SEED, checkProperty, type FuzzOutcome } from '../fuzz-settings.js';

const U64_MAX = (1n << 64n) - 1n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A byte-span expression tree as data, so the test can evaluate it independently of the compiler. */
type SpanTree =
  | { readonly leaf: 'literal'; readonly bytes: bigint }
  | { readonly leaf: 'shape' | 'pair' }
  | { readonly op: 'multiply' | 'ceilingDivide' | 'max' | 'align'; readonly left: SpanTree; readonly right: SpanTree };

const literal = fc.oneof(
  { weight: 6, arbitrary: fc.bigInt({ min: 1n, max: 4096n }) },
  fc.constantFrom(0n, 1n, 256n, MAX_SAFE, MAX_SAFE + 1n, U64_MAX, U64_MAX + 1n),
  fc.bigInt({ min: 0n, max: 1n << 66n }),
);

/** Trees of depth at most 4 (at most 31 nodes): inside the compiler's limits (32 nodes, depth 16, 8 dependencies). */
const tree: fc.Arbitrary<SpanTree> = fc.letrec<{ node: SpanTree }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.record({ leaf: fc.constant('literal' as const), bytes: literal }),
    fc.record({ leaf: fc.constantFrom('shape' as const, 'pair' as const) }),
    fc.record({ op: fc.constantFrom('multiply' as const, 'ceilingDivide' as const, 'max' as const, 'align' as const), left: tie('node'), right: tie('node') }),
  ),
})).node;

/** A shape value: usually valid for its field, sometimes not (0, beyond the bound, fractional, wrong length). */
function shapeValue(rank: number, maxExtent: number): fc.Arbitrary<number[]> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.array(fc.integer({ min: 1, max: maxExtent }), { minLength: rank, maxLength: rank }) },
    fc.array(fc.oneof(fc.integer({ min: 0, max: maxExtent + 2 }), fc.constantFrom(1.5, -1)), { minLength: Math.max(1, rank - 1), maxLength: rank + 1 }),
  );
}

const caseArbitrary = fc
  .record({ rank: fc.integer({ min: 1, max: 3 }), maxExtent: fc.constantFrom(4, 1024, 1 << 20, 2 ** 40), outputRank: fc.integer({ min: 1, max: 3 }), float: fc.boolean(), deep: fc.nat(9) })
  .chain((c) => fc.record({ c: fc.constant(c), shape: shapeValue(c.rank, c.maxExtent), pair: shapeValue(2, 1 << 16), tree }));

/** Shape extents the tree reads, counted per leaf as the compiler's 8-extent limit counts them. */
function shapeExtents(t: SpanTree, rank: number): number {
  if ('leaf' in t) return t.leaf === 'shape' ? rank : t.leaf === 'pair' ? 2 : 0;
  return shapeExtents(t.left, rank) + shapeExtents(t.right, rank);
}

function validShape(value: readonly number[], rank: number, maxExtent: number): boolean {
  return value.length === rank && value.every((v) => Number.isSafeInteger(v) && v >= 1 && v <= maxExtent);
}

/** The independent evaluation: bytes, or the diagnostic the compiler must report. */
function reference(t: SpanTree, shapeBytes: () => bigint | DiagnosticCode, pairBytes: () => bigint | DiagnosticCode): bigint | DiagnosticCode {
  const checked = (v: bigint): bigint | DiagnosticCode => (v > U64_MAX ? DiagnosticCode.PhysicalTensorByteSpanOverflow : v);
  if ('leaf' in t) {
    if (t.leaf === 'literal') return checked(t.bytes);
    return t.leaf === 'shape' ? shapeBytes() : pairBytes();
  }
  const left = reference(t.left, shapeBytes, pairBytes);
  if (typeof left !== 'bigint') return left;
  const right = reference(t.right, shapeBytes, pairBytes);
  if (typeof right !== 'bigint') return right;
  switch (t.op) {
    case 'multiply':
      return checked(left * right);
    case 'max':
      return left > right ? left : right;
    case 'ceilingDivide':
    case 'align':
      if (right === 0n) return DiagnosticCode.TensorByteSpanInvalid;
      return t.op === 'ceilingDivide' ? (left + right - 1n) / right : checked(((left + right - 1n) / right) * right);
  }
}

/**
 * Fuzzes byte-span expressions over `shapeParam` values: random trees of literals (up to 2^66),
 * contiguous spans of two shape parameters and the four checked operations, random parameter values
 * (valid and invalid), output ranks and dtypes, and expressions past the 32-node and 8-extent limits. The compiled pool's
 * slot bytes must equal an independent BigInt evaluation; otherwise compile must fail with the diagnostic
 * that evaluation predicts (overflow, zero divisor, zero or unrepresentable span, rank mismatch,
 * invalid parameter value, expression limit). `compile()` must never throw.
 */
export function fuzzByteSpanParams(runs: number, seed: number = FUZZ_SEED): FuzzOutcome {
  let resolved = 0;
  let refused = 0;
  const property = fc.property(caseArbitrary, ({ c, shape, pair, tree: t }) => {
    const schema = paramSchema('com.hs.fuzz.Spans', 1, {
      shape: shapeParam({ rank: c.rank, maxExtent: c.maxExtent }).recompileRequired(),
      pair: shapeParam({ rank: 2, maxExtent: 1 << 16 }).recompileRequired(),
    });
    const dtype = c.float ? DType.float32 : DType.uint8;
    const deep = c.deep === 0;
    const toExpression = (node: SpanTree, refs: { shape: TensorByteSpanExpression; pair: TensorByteSpanExpression }): TensorByteSpanExpression => {
      if ('leaf' in node) return node.leaf === 'literal' ? tensorByteSpan(node.bytes) : refs[node.leaf];
      const left = toExpression(node.left, refs);
      const right = toExpression(node.right, refs);
      return node.op === 'multiply' ? left.multipliedBy(right) : node.op === 'max' ? left.max(right) : node.op === 'align' ? left.alignedTo(right) : left.ceilingDividedBy(right);
    };
    class Source extends Operator {
      out!: OutputPort;
      setup(spec: OperatorSpec): void {
        const params = spec.params(schema, { shape, pair });
        let expression = toExpression(t, { shape: parameterContiguousByteSpan(params.ref('shape')), pair: parameterContiguousByteSpan(params.ref('pair')) });
        if (deep) for (let i = 0; i < 33; i++) expression = expression.max(1);
        this.out = spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype, rank: c.outputRank }, storage: 'runtimePool' }, expression);
      }
      compute(): void {}
    }
    class Sink extends Operator {
      in!: InputPort;
      setup(spec: OperatorSpec): void {
        this.in = spec.input('in');
      }
      compute(): void {}
    }
    const graph = new Graph('spans');
    const source = graph.add(new Source('src'));
    const sink = graph.add(new Sink('sink'));
    graph.addFlow(source.out, sink.in);
    let compiled;
    try {
      compiled = compile(graph);
    } catch (thrown) {
      throw new Error(`compile() threw: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
    }
    const itemSize = BigInt(dtype.itemSize);
    const contiguous = (value: readonly number[], rank: number) => (): bigint | DiagnosticCode => {
      if (rank !== c.outputRank) return DiagnosticCode.TensorByteSpanRankMismatch;
      let bytes = itemSize;
      for (const extent of value) {
        bytes *= BigInt(extent);
        if (bytes > U64_MAX) return DiagnosticCode.PhysicalTensorByteSpanOverflow;
      }
      return bytes;
    };
    let expected: bigint | DiagnosticCode;
    if (!validShape(shape, c.rank, c.maxExtent) || !validShape(pair, 2, 1 << 16)) expected = DiagnosticCode.ParameterValueInvalid;
    else if (deep || shapeExtents(t, c.rank) > 8) expected = DiagnosticCode.TensorByteSpanExpressionLimit;
    else {
      expected = reference(t, contiguous(shape, c.rank), contiguous(pair, 2));
      if (typeof expected === 'bigint' && (expected === 0n || expected > MAX_SAFE)) expected = DiagnosticCode.TensorByteSpanInvalid;
    }
    if (compiled.ok) {
      const bytes = compiled.value.pool('pool:src.out')?.maxByteSpan;
      if (typeof expected !== 'bigint') throw new Error(`compiled to ${String(bytes)} bytes but ${expected} was expected`);
      if (bytes !== Number(expected)) throw new Error(`slot bytes ${String(bytes)}, expected ${expected}`);
      resolved += 1;
      return;
    }
    const error = compiled.error;
    if (!(error instanceof CompileError)) throw new Error(`compile failed without a CompileError: ${error.message}`);
    const codes = error.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code);
    if (typeof expected === 'bigint') {
      // A span that fits alone may still make the pool (slots x aligned span) exceed 2^53 - 1 bytes.
      const poolMayOverflow = expected * 64n > MAX_SAFE && codes.every((code) => code === DiagnosticCode.ArithmeticOverflow);
      if (!poolMayOverflow) throw new Error(`refused (${codes.join(', ')}) although the span is ${expected} bytes`);
      refused += 1;
      return;
    }
    if (!codes.includes(expected)) throw new Error(`expected ${expected}, got ${codes.join(', ')}`);
    refused += 1;
  });
  return checkProperty('byte-span expressions and Params', property, runs, seed, () => `${resolved} resolved to the reference bytes, ${refused} refused with the predicted diagnostic`);
}
