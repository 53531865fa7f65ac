import { ErrorCode, HsError, type MemoryKind } from '@hs/streams';
import type { DType } from '@hs/tensor';
import { layoutFieldProblem } from './tensor-layout-fields.js';

/**
 * What an input accepts. Each field that is given must match the connected producer's
 * representation exactly (`Graph.addFlow()` throws, or `compile()` reports `PHYSICAL_TENSOR_LAYOUT_MISMATCH`
 * for a parameter-selected kind); an
 * omitted field accepts anything. Spec: "Current limitations" (receive-side layout requirements).
 */
export interface TensorInputRequirements {
  /** Required memory kind; `cudaDevice`/`cudaManaged` make the operator CUDA-active. */
  readonly memoryKind?: MemoryKind;
  /** Required element type. */
  readonly dtype?: DType;
  /** Required number of dimensions. */
  readonly rank?: number;
}

/** Options of `OperatorSpec.input()`. */
export interface InputPortOptions {
  /** An optional input may stay unconnected; default `false` (required). */
  readonly optional?: boolean;
  /**
   * The input may be fed from an operator on another device (default `false`): the producer's device then
   * places nothing on this operator, and the runtime orders the read across devices (the consumer's stream
   * waits on the producer's event) and releases the tensor only once `compute()` settled, so the operator
   * must finish its reads on the device before it returns (as the runtime's `DeviceCopy` does). Every other
   * cross-device edge is refused with `DEVICE_CONFLICT`.
   */
  readonly crossDevice?: boolean;
}

/**
 * Validates the argument types of input requirements and returns a frozen copy.
 * @throws HsError `InvalidArgument` for a mistyped field.
 */
export function declareInputRequirements(where: string, requirements: TensorInputRequirements | undefined): TensorInputRequirements {
  if (requirements === undefined) return Object.freeze({});
  if (typeof requirements !== 'object' || requirements === null) {
    throw new HsError(ErrorCode.InvalidArgument, `${where}: input requirements must be an object { memoryKind?, dtype?, rank? }`);
  }
  const problem = layoutFieldProblem('', requirements);
  if (problem !== null) throw new HsError(ErrorCode.InvalidArgument, `${where}: ${problem}`);
  const { memoryKind, dtype, rank } = requirements;
  return Object.freeze({
    ...(memoryKind !== undefined ? { memoryKind } : {}),
    ...(dtype !== undefined ? { dtype } : {}),
    ...(rank !== undefined ? { rank } : {}),
  });
}
