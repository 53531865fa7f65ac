import { ErrorCode, HsError } from '@hs/streams';
import type { InputPort } from '../authoring/ports.js';
import { ParamRef } from '../params/bound-params.js';
import { ByteSpanProjector } from './byte-span-projector.js';

/** A closed checked operation of a byte-span expression. */
export type ByteSpanOperation = 'multiply' | 'ceilingDivide' | 'max' | 'align';

/** One node of a byte-span expression tree. */
export type ByteSpanNode =
  | {
      /** A constant (`tensorByteSpan(n)`). */
      readonly kind: 'literal';
      /** The constant, bytes. */
      readonly bytes: bigint;
    }
  | {
      /** Contiguous bytes of a shape parameter times the output's dtype size (`parameterContiguousByteSpan`). */
      readonly kind: 'parameterContiguous';
      /** The shape field. */
      readonly ref: ParamRef;
    }
  | {
      /** The byte bound of the one bounded producer feeding an input (`inputMaxByteSpan`). */
      readonly kind: 'inputMax';
      /** The input. */
      readonly input: InputPort;
    }
  | {
      /** A projector run over parameter values (`parameterProjectedByteSpan`). */
      readonly kind: 'projected';
      /** The projector. */
      readonly projector: ByteSpanProjector;
      /** The fields passed to it, in order. */
      readonly refs: readonly ParamRef[];
    }
  | {
      /** A closed operation on two sub-expressions. */
      readonly kind: 'operation';
      /** Which operation. */
      readonly operation: ByteSpanOperation;
      /** Left operand. */
      readonly left: TensorByteSpanExpression;
      /** Right operand. */
      readonly right: TensorByteSpanExpression;
    };

/** Operand of an operation: an expression or a literal count of bytes. */
export type ByteSpanOperand = TensorByteSpanExpression | number | bigint;

/**
 * A derived slot byte bound, resolved once by `compile()` into the ordinary allocation record (the
 * runtime never sees it). Leaves: `tensorByteSpan(n)`, `parameterContiguousByteSpan(ref)`,
 * `inputMaxByteSpan(input)`, `parameterProjectedByteSpan(projector, ...refs)`; closed operations:
 * `multipliedBy`, `ceilingDividedBy`, `max`, `alignedTo`. At most 32 nodes, depth 16, 8 dependencies
 * (parameter fields and inputs) and 8 shape extents; arithmetic is exact and checked (results beyond
 * 2^64 - 1 are `PHYSICAL_TENSOR_BYTE_SPAN_OVERFLOW`). Immutable.
 * Spec: "Derive slot bytes from deployment parameters".
 * @example
 * ```ts
 * import { Graph, Operator, compile, parameterContiguousByteSpan, paramSchema, shapeParam, type OperatorSpec } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const StackParams = paramSchema('com.example.StackParams', 1, { sliceShape: shapeParam({ rank: 2, maxExtent: 4096 }).recompileRequired() });
 * class Stacker extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(StackParams, { sliceShape: [512, 512] });
 *     // Eight float32 slices per tensor, rounded up to 64 KiB: exact, checked arithmetic resolved by compile().
 *     const byteSpan = parameterContiguousByteSpan(params.ref('sliceShape')).multipliedBy(8).alignedTo(64 << 10);
 *     spec.output('stack').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.float32, rank: 2 }, storage: 'runtimePool' }, byteSpan);
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('stacking');
 * graph.add(new Stacker('stacker'));
 * const [derivation] = unwrap(compile(graph)).tensorByteSpanDerivations();
 * console.log(`${derivation?.expression} = ${derivation?.bytes} bytes`);
 * ```
 */
export class TensorByteSpanExpression {
  /**
   * @internal Use the leaf functions.
   * @param node The expression's root node.
   */
  constructor(readonly node: ByteSpanNode) {
    Object.freeze(this);
  }

  /** `this × operand`. */
  multipliedBy(operand: ByteSpanOperand): TensorByteSpanExpression {
    return this.#operation('multiply', operand);
  }

  /** `ceil(this / operand)`; the divisor must resolve to a positive value. */
  ceilingDividedBy(operand: ByteSpanOperand): TensorByteSpanExpression {
    return this.#operation('ceilingDivide', operand);
  }

  /** The larger of `this` and `operand`. */
  max(operand: ByteSpanOperand): TensorByteSpanExpression {
    return this.#operation('max', operand);
  }

  /** `this` rounded up to a multiple of `operand` (bytes, positive). */
  alignedTo(operand: ByteSpanOperand): TensorByteSpanExpression {
    return this.#operation('align', operand);
  }

  #operation(operation: ByteSpanOperation, operand: ByteSpanOperand): TensorByteSpanExpression {
    const right = operand instanceof TensorByteSpanExpression ? operand : tensorByteSpan(operand);
    return new TensorByteSpanExpression({ kind: 'operation', operation, left: this, right });
  }
}

/**
 * A literal byte count.
 * @throws HsError `InvalidArgument` unless `bytes` is a non-negative integer (a zero span is reported by `compile()`).
 * @example
 * ```ts
 * import { Graph, Operator, compile, parameterContiguousByteSpan, paramSchema, shapeParam, tensorByteSpan, type OperatorSpec } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const ThumbParams = paramSchema('com.example.ThumbParams', 1, { thumbShape: shapeParam({ rank: 2, maxExtent: 1024 }).recompileRequired() });
 * class Thumbnailer extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(ThumbParams, { thumbShape: [96, 128] });
 *     // At least 64 KiB per slot, however small the thumbnail: a literal leaf in a max().
 *     const byteSpan = parameterContiguousByteSpan(params.ref('thumbShape')).max(tensorByteSpan(64 << 10));
 *     spec.output('thumb').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 2 }, storage: 'runtimePool' }, byteSpan);
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('thumbs');
 * graph.add(new Thumbnailer('thumbnailer'));
 * console.log(`slot bytes: ${unwrap(compile(graph)).pool('pool:thumbnailer.thumb')?.maxByteSpan}`);
 * ```
 */
export function tensorByteSpan(bytes: number | bigint): TensorByteSpanExpression {
  const ok = typeof bytes === 'bigint' ? bytes >= 0n : Number.isSafeInteger(bytes) && bytes >= 0;
  if (!ok) throw new HsError(ErrorCode.InvalidArgument, `tensorByteSpan(bytes) needs a non-negative integer of bytes, got ${String(bytes)}`);
  return new TensorByteSpanExpression({ kind: 'literal', bytes: BigInt(bytes) });
}

/**
 * The contiguous byte span of a shape parameter: product of its extents × the output dtype's item size.
 * The shape's length must equal the output's exact rank (`TENSOR_BYTE_SPAN_RANK_MISMATCH`).
 * @throws HsError `InvalidArgument` when `ref` is not a `ParamRef`.
 * @example
 * ```ts
 * import { Graph, Operator, compile, parameterContiguousByteSpan, paramSchema, shapeParam, type OperatorSpec } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const DepthParams = paramSchema('com.example.DepthParams', 1, { depthShape: shapeParam({ rank: 2, maxExtent: 4096 }).recompileRequired() });
 * class DepthCamera extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(DepthParams, { depthShape: [480, 640] });
 *     // 480 x 640 elements x 2 bytes (uint16): the shape's length must equal the output's rank.
 *     spec.output('depth').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint16, rank: 2 }, storage: 'runtimePool' }, parameterContiguousByteSpan(params.ref('depthShape')));
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('depth');
 * graph.add(new DepthCamera('depth'));
 * const [derivation] = unwrap(compile(graph)).byteSpanDerivations;
 * console.log(`${derivation?.output.operator}.${derivation?.output.port}: ${derivation?.expression} = ${derivation?.bytes} B (from ${derivation?.dependencies.join(', ')})`);
 * ```
 */
export function parameterContiguousByteSpan(ref: ParamRef<readonly number[]>): TensorByteSpanExpression {
  if (!(ref instanceof ParamRef)) throw new HsError(ErrorCode.InvalidArgument, 'parameterContiguousByteSpan(ref) takes params.ref(field) of a shapeParam field');
  return new TensorByteSpanExpression({ kind: 'parameterContiguous', ref });
}

/**
 * The result of `projector` over the declared parameter fields `refs` (at least one, all of the
 * declaring operator's parameters). Spec: "Use a parameter byte-span projector for custom formulas".
 * @throws HsError `InvalidArgument` for a non-projector, no refs, or a ref that is not a `ParamRef`.
 * @example
 * ```ts
 * import { ByteSpanProjector, Graph, Operator, compile, integerParam, parameterProjectedByteSpan, paramSchema, type OperatorSpec } from '@hs/compiler';
 * import { MemoryKind, ok, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const ScanParams = paramSchema('com.example.ScanParams', 1, { maxPoints: integerParam({ min: 1, max: 1 << 24 }).recompileRequired() });
 * // 16 bytes per point (x, y, z, intensity as float32) plus a 256-byte header: a custom formula.
 * const scanBytes = new ByteSpanProjector('com.example.Scan.output-max-byte-span.v1', (p) => ok(256 + 16 * Number(p['maxPoints'])));
 * class Lidar extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(ScanParams, { maxPoints: 100_000 });
 *     const representation = { memoryKind: MemoryKind.Host, dtype: DType.float32, rank: 2 };
 *     spec.output('scan').producesTensor({ representation, storage: 'runtimePool' }, parameterProjectedByteSpan(scanBytes, params.ref('maxPoints')));
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('lidar');
 * graph.add(new Lidar('lidar'));
 * const [derivation] = unwrap(compile(graph)).byteSpanDerivations;
 * console.log(`${derivation?.bytes} B per scan, by ${derivation?.projectors.join(', ')}`);
 * ```
 */
export function parameterProjectedByteSpan(projector: ByteSpanProjector, ...refs: ParamRef[]): TensorByteSpanExpression {
  if (!(projector instanceof ByteSpanProjector)) throw new HsError(ErrorCode.InvalidArgument, 'parameterProjectedByteSpan(projector, ...refs) takes a ByteSpanProjector');
  if (refs.length === 0 || !refs.every((r) => r instanceof ParamRef)) {
    throw new HsError(ErrorCode.InvalidArgument, `projector '${projector.id}': declare every parameter it reads as params.ref(field)`);
  }
  return new TensorByteSpanExpression({ kind: 'projected', projector, refs: Object.freeze([...refs]) });
}
