import { ErrorCode, HsError, type Result } from '@hs/streams';

const PROJECTOR_ID = /^[A-Za-z][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*\.v[1-9][0-9]*$/;

/**
 * The function of a parameter byte-span projector: given the declared parameter values (only those,
 * by field name), the largest byte span of one tensor slot in bytes. Runs once while the plan is
 * compiled; it must be deterministic, side-effect free and must not throw. Return
 * `err(ErrorCode.ArithmeticOverflow, ...)` when checked arithmetic overflows; any other error (or a
 * throw) fails the compile with only its code name — the message text is never shown.
 */
export type ByteSpanProjectorFunction = (params: Readonly<Record<string, unknown>>) => Result<number | bigint>;

/**
 * A named projector with a versioned stable semantic id (for example
 * `com.example.BatchOutput.output-max-byte-span.v1`, ending in `.v<N>`). The id names the calculation,
 * not the function object or where it is defined: increment the version whenever the function could
 * return a different result or error for the same inputs; renaming or moving an unchanged function
 * needs no new id. One id bound to two different implementations in one compilation fails it
 * (`BYTE_SPAN_PROJECTOR_ID_CONFLICT`). Two functions are one implementation when they are the same
 * object or have the same source text (`Function.prototype.toString`), so two operators may each build
 * `new ByteSpanProjector(id, (p) => ...)` from one piece of code in `setup()`. The function must read
 * only its declared parameters: hs cannot see a closure's captured variables, so a result that depends
 * on them needs an id of its own. Built-ins and `bind()` results (no visible source, hidden bound
 * arguments) are the same only as one object.
 * Spec: "Use a parameter byte-span projector for custom formulas".
 * @example
 * ```ts
 * import { ByteSpanProjector, Graph, Operator, compile, integerParam, parameterProjectedByteSpan, paramSchema, type OperatorSpec } from '@hs/compiler';
 * import { ErrorCode, MemoryKind, err, ok, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const BatchParams = paramSchema('com.example.BatchParams', 1, {
 *   batch: integerParam({ min: 1, max: 64 }).recompileRequired(),
 *   imageBytes: integerParam({ min: 1, max: 64 << 20 }).recompileRequired(),
 * });
 * // The id names the calculation; bump .v1 whenever the function could return something else.
 * const batchBytes = new ByteSpanProjector('com.example.Batch.output-max-byte-span.v1', (p) => {
 *   const bytes = BigInt(Number(p['batch'])) * BigInt(Number(p['imageBytes']));
 *   return bytes <= BigInt(Number.MAX_SAFE_INTEGER) ? ok(bytes) : err(ErrorCode.ArithmeticOverflow, 'batch bytes overflow');
 * });
 * class Batcher extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(BatchParams, { batch: 8, imageBytes: 1920 * 1080 * 4 });
 *     const byteSpan = parameterProjectedByteSpan(batchBytes, params.ref('batch'), params.ref('imageBytes'));
 *     spec.output('batch').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 4 }, storage: 'runtimePool' }, byteSpan);
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('batching');
 * graph.add(new Batcher('batcher'));
 * console.log(`${batchBytes.id}: ${unwrap(compile(graph)).pool('pool:batcher.batch')?.maxByteSpan} B per slot`);
 * ```
 */
export class ByteSpanProjector {
  /**
   * @throws HsError `InvalidArgument` when `id` is not a dotted name ending in `.v<N>` or `project` is not a function.
   */
  constructor(
    /** Versioned stable semantic id. */
    readonly id: string,
    /** The projection. */
    readonly project: ByteSpanProjectorFunction,
  ) {
    if (typeof id !== 'string' || !PROJECTOR_ID.test(id)) {
      throw new HsError(ErrorCode.InvalidArgument, `projector id ${JSON.stringify(id)} must be a dotted name ending in a version, such as 'com.example.Batch.output-max-byte-span.v1'`);
    }
    if (typeof project !== 'function') throw new HsError(ErrorCode.InvalidArgument, `projector '${id}': project must be a function`);
    Object.freeze(this);
  }
}

/** The source form `Function.prototype.toString` gives functions whose code it cannot show (built-ins, `bind()` results). */
const NO_SOURCE = /\{\s*\[native code\]\s*\}\s*$/;

/**
 * True when two projector functions are one implementation: the same function object, or two functions
 * with the same source text (`Function.prototype.toString`), such as two closures made by one arrow
 * function or method in two operators' `setup()`. A projector reads only the parameters it declares
 * (the spec's contract), so equal code computes equal results; hs cannot see a closure's captured
 * variables, so a function whose result depends on them breaks that contract and needs its own id.
 * Functions without inspectable source (built-ins, and `bind()` results, whose bound arguments are
 * hidden) are the same only as one object. Any other difference in the text, even formatting, counts
 * as a different implementation (fail closed).
 * Spec: "Use a parameter byte-span projector for custom formulas" (a stable id, independent of address
 * or symbol; one id for two implementations fails closed).
 */
export function sameProjectorImplementation(a: ByteSpanProjectorFunction, b: ByteSpanProjectorFunction): boolean {
  if (a === b) return true;
  const source = Function.prototype.toString.call(a);
  return !NO_SOURCE.test(source) && source === Function.prototype.toString.call(b);
}
