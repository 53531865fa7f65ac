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
 * `com.example.BatchOutput.output-max-byte-span.v1`, ending in `.v<N>`). Increment the version whenever
 * the function could return a different result or error for the same inputs. One id bound to two
 * different functions in one compilation fails it (`BYTE_SPAN_PROJECTOR_ID_CONFLICT`).
 * Spec: "Use a parameter byte-span projector for custom formulas".
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
