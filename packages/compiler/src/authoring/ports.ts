import { ErrorCode, HsError } from '@hs/streams';
import type { DeclarationWindow } from './declaration-window.js';
import type { Operator } from './operator.js';
import type { TensorInputRequirements } from './tensor-input-requirements.js';
import { declareTensorOutput, type DeclaredTensorOutput, type TensorOutputSpec } from './tensor-output-spec.js';

/**
 * An operator's input, created by `OperatorSpec.input()` inside `setup()`. Connect it with
 * `Graph.addFlow(output, input)`; read from it in `compute()` with `ExecutionContext.receive(port)`.
 */
export class InputPort {
  /** @internal Created only by `OperatorSpec.input()`. */
  constructor(
    /** Owning operator. */
    readonly operator: Operator,
    /** Port name, unique within the operator. */
    readonly name: string,
    /** Layout the input accepts (frozen; omitted fields accept anything). */
    readonly requirements: TensorInputRequirements,
    /** True when the input may stay unconnected. */
    readonly optional: boolean,
  ) {
    Object.freeze(this);
  }

  /** `operator.port`, the key used in diagnostics. */
  get key(): string {
    return `${this.operator.name}.${this.name}`;
  }
}

/**
 * An operator's output, created by `OperatorSpec.output()` inside `setup()`. Declare what it
 * publishes with `producesTensor()`; publish in `compute()` with `ExecutionContext.emit()` (pool
 * outputs) or `emitTensor()` (pass-through outputs).
 */
export class OutputPort {
  #tensor: DeclaredTensorOutput | null = null;

  /** @internal Created only by `OperatorSpec.output()`. */
  constructor(
    /** Owning operator. */
    readonly operator: Operator,
    /** Port name, unique within the operator. */
    readonly name: string,
    private readonly window: DeclarationWindow,
  ) {}

  /** `operator.port`, the key used in diagnostics and in `deployment.bindTensorOutputDevice`. */
  get key(): string {
    return `${this.operator.name}.${this.name}`;
  }

  /** The validated tensor declaration, or `null` when `producesTensor()` was not called. */
  get tensor(): DeclaredTensorOutput | null {
    return this.#tensor;
  }

  /**
   * Declares the tensors this output publishes: representation (memory kind, dtype, rank), slot
   * bounds (bytes, rank) and storage (`runtimePool` or `passThrough`, the default). Returns this port.
   * Spec: "Sized cold, borrowed hot", "Current limitations".
   * @throws HsError `InvalidArgument` for a mistyped spec or a second declaration; `InvalidState`
   * after `setup()` returned.
   */
  producesTensor(spec: TensorOutputSpec): this {
    this.window.assertOpen(`${this.key}.producesTensor()`);
    if (this.#tensor !== null) {
      throw new HsError(ErrorCode.InvalidArgument, `${this.key}: producesTensor() was already called; declare each output once`);
    }
    this.#tensor = declareTensorOutput(this.key, spec);
    return this;
  }
}
