import { ErrorCode, HsError } from '@hs/streams';
import type { Operator } from '../authoring/operator.js';
import type { OutputPort } from '../authoring/ports.js';
import type { ByteSpanNode, TensorByteSpanExpression } from '../byte-span/byte-span-expression.js';
import { sameProjectorImplementation, type ByteSpanProjectorFunction } from '../byte-span/byte-span-projector.js';
import type { ByteSpanDerivationRecord } from '../plan/plan-records.js';
import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { GraphIndex } from './graph-index.js';
import type { ResolvedTopics } from './resolve-topics.js';

/** Expression limits. Spec: "Derive slot bytes from deployment parameters". */
const MAX_NODES = 32;
const MAX_DEPTH = 16;
const MAX_DEPENDENCIES = 8;
const MAX_SHAPE_EXTENTS = 8;
/** Checked byte-span arithmetic works in unsigned 64-bit range. */
const U64_MAX = (1n << 64n) - 1n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** An output's resolved slot byte bound. */
export interface ResolvedByteSpan {
  /** Bytes, a safe integer: positive, or 0 for a literal `bounds.maxByteSpan: 0` (the pool rejects every allocation). */
  readonly bytes: number;
  /** The derivation, or `null` for a literal `bounds.maxByteSpan`. */
  readonly derivation: ByteSpanDerivationRecord | null;
}

class SpanFailure {
  constructor(
    readonly code: DiagnosticCode,
    readonly message: string,
  ) {}
}

interface EvaluationScope {
  readonly port: OutputPort;
  readonly itemSize: bigint;
  readonly rank: number;
  readonly spans: ReadonlyMap<OutputPort, ResolvedByteSpan | null>;
  readonly index: GraphIndex;
  readonly projectors: Map<string, ByteSpanProjectorFunction>;
  /** Checked subscriptions: an input fed by a topic takes the topic's declared byte bound. */
  readonly subscriptions: ResolvedTopics['subscriptions'];
}

/**
 * Resolves every bounded tensor output's slot byte bound, producers before consumers (`order` is
 * topological): literal `bounds.maxByteSpan`, or the byte-span expression evaluated once with exact,
 * checked integer arithmetic over generation-zero parameter values and producers' resolved bounds (for
 * an input subscribed to an external topic, the bound its `subscribe()` declares).
 * Reports the expression diagnostics (limits, rank, input, projector, overflow, zero or
 * unrepresentable results); a failed output maps to `null`. Outputs without bounds are absent.
 * Spec: "Derive slot bytes from deployment parameters", "Use a parameter byte-span projector".
 */
export function resolveByteSpans(
  index: GraphIndex,
  order: readonly Operator[],
  validParams: ReadonlySet<Operator>,
  topics: ResolvedTopics,
  log: DiagnosticLog,
): Map<OutputPort, ResolvedByteSpan | null> {
  const spans = new Map<OutputPort, ResolvedByteSpan | null>();
  const projectors = new Map<string, ByteSpanProjectorFunction>();
  for (const op of order) {
    for (const port of index.specs.get(op)?.outputs ?? []) {
      const tensor = port.tensor;
      if (tensor === null || tensor.bounds === null) continue;
      if (tensor.byteSpan === null) {
        const literal = tensor.bounds.maxByteSpan as number;
        // A literal 0 is kept: it plans a pool that rejects every allocation (spec, "Sized cold, borrowed hot").
        spans.set(port, literal >= 0 && Number.isSafeInteger(literal) ? { bytes: literal, derivation: null } : null);
        continue;
      }
      if (!validParams.has(op)) {
        spans.set(port, null);
        continue;
      }
      const subject = { kind: 'port', operator: op.name, port: port.name } as const;
      const expression = tensor.byteSpan;
      const limit = limitProblem(expression);
      if (limit !== null) {
        log.error(DiagnosticCode.TensorByteSpanExpressionLimit, subject, `output ${port.key}: the byte-span expression ${limit}; simplify it or use a projector`);
        spans.set(port, null);
        continue;
      }
      const scope: EvaluationScope = {
        port,
        itemSize: BigInt(tensor.representation.dtype.itemSize),
        rank: tensor.representation.rank,
        spans,
        index,
        projectors,
        subscriptions: topics.subscriptions,
      };
      const value = evaluate(expression, scope);
      if (value instanceof SpanFailure) {
        log.error(value.code, subject, `output ${port.key}: ${value.message}`);
        spans.set(port, null);
        continue;
      }
      if (value === 0n || value > MAX_SAFE) {
        log.error(
          DiagnosticCode.TensorByteSpanInvalid,
          subject,
          `output ${port.key}: the byte-span expression resolves to ${value} bytes, ${value === 0n ? 'which rejects every allocation' : 'beyond 2^53 - 1 and not representable here'}; check the parameters it reads`,
        );
        spans.set(port, null);
        continue;
      }
      spans.set(port, {
        bytes: Number(value),
        derivation: {
          output: { operator: op.name, port: port.name },
          expression: describeExpression(expression, scope),
          bytes: Number(value),
          dependencies: dependencyKeys(expression),
          projectors: projectorIds(expression),
        },
      });
    }
  }
  return spans;
}

function evaluate(expression: TensorByteSpanExpression, scope: EvaluationScope): bigint | SpanFailure {
  const node = expression.node;
  switch (node.kind) {
    case 'literal':
      return checked(node.bytes);
    case 'parameterContiguous': {
      const shape = node.ref.value;
      const domain = node.ref.declaration.domain;
      if (domain.kind !== 'shape' || !Array.isArray(shape)) {
        return new SpanFailure(DiagnosticCode.ParameterRefInvalid, `parameterContiguousByteSpan(${node.ref.key}) needs a shapeParam field, not a ${domain.kind} field`);
      }
      if (shape.length !== scope.rank) {
        return new SpanFailure(
          DiagnosticCode.TensorByteSpanRankMismatch,
          `${node.ref.key} has ${shape.length} extents but the output's exact rank is ${scope.rank}; make the shape parameter's rank equal the representation rank`,
        );
      }
      let bytes = scope.itemSize;
      for (const extent of shape as readonly number[]) {
        const next = checked(bytes * BigInt(extent));
        if (next instanceof SpanFailure) return next;
        bytes = next;
      }
      return bytes;
    }
    case 'inputMax':
      return producerBound(node, scope);
    case 'projected': {
      // One id, one implementation: the same function or the same source text (sameProjectorImplementation).
      const known = scope.projectors.get(node.projector.id);
      if (known !== undefined && !sameProjectorImplementation(known, node.projector.project)) {
        return new SpanFailure(
          DiagnosticCode.ByteSpanProjectorIdConflict,
          `projector id '${node.projector.id}' is bound to two different implementations (functions with different source) in this compilation; ` +
            'give a changed function a new versioned id',
        );
      }
      if (known === undefined) scope.projectors.set(node.projector.id, node.projector.project);
      return project(node);
    }
    case 'operation': {
      const left = evaluate(node.left, scope);
      if (left instanceof SpanFailure) return left;
      const right = evaluate(node.right, scope);
      if (right instanceof SpanFailure) return right;
      switch (node.operation) {
        case 'multiply':
          return checked(left * right);
        case 'max':
          return left > right ? left : right;
        case 'ceilingDivide':
        case 'align':
          if (right === 0n) return new SpanFailure(DiagnosticCode.TensorByteSpanInvalid, `the byte-span expression ${node.operation === 'align' ? 'aligns to' : 'divides by'} zero; use a positive operand`);
          return node.operation === 'ceilingDivide' ? (left + right - 1n) / right : checked(((left + right - 1n) / right) * right);
      }
    }
  }
}

function checked(value: bigint): bigint | SpanFailure {
  return value > U64_MAX
    ? new SpanFailure(DiagnosticCode.PhysicalTensorByteSpanOverflow, 'checked byte-span arithmetic overflowed 2^64 - 1; declare smaller parameter values or bounds')
    : value;
}

function producerBound(node: Extract<ByteSpanNode, { kind: 'inputMax' }>, scope: EvaluationScope): bigint | SpanFailure {
  const input = node.input;
  const fail = (why: string): SpanFailure =>
    new SpanFailure(DiagnosticCode.TensorByteSpanInputUnbounded, `inputMaxByteSpan(${input.key}) ${why}; it needs exactly one connected producer with a finite byte bound, or a subscribed topic with a declared bound`);
  if (input.operator !== scope.port.operator) return fail(`names an input of another operator`);
  const into = scope.index.intoInput.get(input) ?? [];
  if (into.length === 0) {
    const topic = scope.index.subscriptionsOf.get(input)?.[0]?.topic;
    if (topic === undefined) return fail('is disconnected');
    const subscription = scope.subscriptions.get(input);
    if (subscription === undefined) return fail(`subscribes to topic '${topic}', whose subscription failed its checks`);
    if (subscription.maxByteSpan === null) {
      return fail(`subscribes to topic '${topic}' without a byte bound (pass the publisher's bound as graph.subscribe('${topic}', ${input.key}, { maxByteSpan }))`);
    }
    return BigInt(subscription.maxByteSpan);
  }
  if (into.length > 1) return fail(`has ${into.length} producers (fan-in)`);
  const producer = (into[0] as { flow: { output: OutputPort } }).flow.output;
  const span = scope.spans.get(producer);
  if (span === undefined) return fail(`is fed by ${producer.key}, which declares no byte bound (unbounded)`);
  if (span === null) return fail(`is fed by ${producer.key}, whose own bound failed to resolve`);
  return BigInt(span.bytes);
}

function project(node: Extract<ByteSpanNode, { kind: 'projected' }>): bigint | SpanFailure {
  const values: Record<string, unknown> = {};
  for (const ref of node.refs) values[ref.field] = ref.value;
  const id = node.projector.id;
  const failed = (code: string): SpanFailure =>
    new SpanFailure(DiagnosticCode.PhysicalTensorByteSpanProjectionFailed, `projector '${id}' failed with ${code}`);
  let result: ReturnType<ByteSpanProjectorFunction>;
  try {
    result = node.projector.project(Object.freeze(values));
  } catch (thrown) {
    return failed(thrown instanceof HsError ? thrown.code : 'a thrown exception');
  }
  if (typeof result !== 'object' || result === null || typeof result.ok !== 'boolean') return failed('a value that is not a Result');
  if (!result.ok) {
    if (result.error.code === ErrorCode.ArithmeticOverflow) {
      return new SpanFailure(DiagnosticCode.PhysicalTensorByteSpanOverflow, `projector '${id}' reported ${ErrorCode.ArithmeticOverflow}`);
    }
    return failed(result.error.code);
  }
  const v = result.value;
  if (typeof v === 'bigint') return v < 0n ? failed('a negative byte span') : checked(v);
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return failed('a byte span that is not a non-negative safe integer');
  return BigInt(v);
}

function limitProblem(expression: TensorByteSpanExpression): string | null {
  let nodes = 0;
  let depth = 0;
  let extents = 0;
  const walk = (e: TensorByteSpanExpression, level: number): void => {
    nodes += 1;
    depth = Math.max(depth, level);
    const n = e.node;
    if (n.kind === 'parameterContiguous' && n.ref.declaration.domain.kind === 'shape') extents += n.ref.declaration.domain.rank;
    if (n.kind === 'operation') {
      walk(n.left, level + 1);
      walk(n.right, level + 1);
    }
  };
  walk(expression, 1);
  const dependencies = dependencyKeys(expression).length;
  if (depth > MAX_DEPTH) return `has depth ${depth} (at most ${MAX_DEPTH})`;
  if (nodes > MAX_NODES) return `has ${nodes} nodes (at most ${MAX_NODES})`;
  if (dependencies > MAX_DEPENDENCIES) return `has ${dependencies} dependencies (at most ${MAX_DEPENDENCIES})`;
  if (extents > MAX_SHAPE_EXTENTS) return `reads ${extents} shape extents (at most ${MAX_SHAPE_EXTENTS})`;
  return null;
}

/** Distinct parameter keys and input keys the expression reads, sorted. */
function dependencyKeys(expression: TensorByteSpanExpression): string[] {
  const keys = new Set<string>();
  const walk = (e: TensorByteSpanExpression): void => {
    const n = e.node;
    if (n.kind === 'parameterContiguous') keys.add(n.ref.key);
    else if (n.kind === 'projected') for (const r of n.refs) keys.add(r.key);
    else if (n.kind === 'inputMax') keys.add(n.input.key);
    else if (n.kind === 'operation') {
      walk(n.left);
      walk(n.right);
    }
  };
  walk(expression);
  return [...keys].sort();
}

function projectorIds(expression: TensorByteSpanExpression): string[] {
  const n = expression.node;
  if (n.kind === 'projected') return [n.projector.id];
  if (n.kind === 'operation') return [...new Set([...projectorIds(n.left), ...projectorIds(n.right)])].sort();
  return [];
}

/** Readable form with resolved leaf values, for example `ceilDiv(inputMax(src.frames)=4194304, 4)`. */
function describeExpression(expression: TensorByteSpanExpression, scope: EvaluationScope): string {
  const n = expression.node;
  switch (n.kind) {
    case 'literal':
      return String(n.bytes);
    case 'parameterContiguous':
      return `contiguous(${n.ref.key}=[${(n.ref.value as readonly number[]).join(',')}] x ${scope.itemSize} B)`;
    case 'inputMax': {
      const producer = scope.index.intoInput.get(n.input)?.[0]?.flow.output;
      const bytes = producer === undefined ? scope.subscriptions.get(n.input)?.maxByteSpan : scope.spans.get(producer)?.bytes;
      return `inputMax(${n.input.key})=${bytes ?? '?'}`;
    }
    case 'projected':
      return `${n.projector.id}(${n.refs.map((r) => r.key).join(', ')})`;
    case 'operation': {
      const name = { multiply: 'mul', ceilingDivide: 'ceilDiv', max: 'max', align: 'align' }[n.operation];
      return `${name}(${describeExpression(n.left, scope)}, ${describeExpression(n.right, scope)})`;
    }
  }
}
