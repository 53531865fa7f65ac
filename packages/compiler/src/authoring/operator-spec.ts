import type { DeclarationWindow } from './declaration-window.js';
import { assertAuthoringName } from './names.js';
import type { Operator } from './operator.js';
import { InputPort, OutputPort } from './ports.js';
import { declareInputRequirements, type InputPortOptions, type TensorInputRequirements } from './tensor-input-requirements.js';

/**
 * What `Operator.setup()` receives: declares the operator's ports and whether it needs a CUDA
 * stream. Usable only while `setup()` runs. Duplicate port names are accepted here and reported by
 * `compile()` as `DUPLICATE_PORT_NAME`.
 */
export class OperatorSpec {
  readonly #inputs: InputPort[] = [];
  readonly #outputs: OutputPort[] = [];
  #cudaStreamRequired = false;

  /** @internal Created by `Graph.add()`. */
  constructor(
    /** The operator being declared. */
    readonly operator: Operator,
    private readonly window: DeclarationWindow,
  ) {}

  /**
   * Declares an input. `requirements` constrain the layout it accepts; `options.optional` lets it stay
   * unconnected (inputs are required by default).
   * @throws HsError `InvalidArgument` for a bad name or mistyped requirements; `InvalidState` after setup().
   */
  input(name: string, requirements?: TensorInputRequirements, options?: InputPortOptions): InputPort {
    this.window.assertOpen(`spec.input(${JSON.stringify(name)})`);
    assertAuthoringName(`operator '${this.operator.name}' input`, name);
    const where = `${this.operator.name}.${name}`;
    const port = new InputPort(this.operator, name, declareInputRequirements(where, requirements), options?.optional === true);
    this.#inputs.push(port);
    return port;
  }

  /**
   * Declares an output; chain `.producesTensor(spec)` to say what it publishes.
   * @throws HsError `InvalidArgument` for a bad name; `InvalidState` after setup().
   */
  output(name: string): OutputPort {
    this.window.assertOpen(`spec.output(${JSON.stringify(name)})`);
    assertAuthoringName(`operator '${this.operator.name}' output`, name);
    const port = new OutputPort(this.operator, name, this.window);
    this.#outputs.push(port);
    return port;
  }

  /**
   * Marks the operator CUDA-active even when no port names a CUDA memory kind, so `compute()` gets a
   * planned stream from `ExecutionContext.cudaStream()`. Spec: "One stream per active execution
   * partition and device".
   * @throws HsError `InvalidState` after setup().
   */
  requireCudaStream(): void {
    this.window.assertOpen('spec.requireCudaStream()');
    this.#cudaStreamRequired = true;
  }

  /** Inputs in declaration order. */
  get inputs(): readonly InputPort[] {
    return this.#inputs;
  }

  /** Outputs in declaration order. */
  get outputs(): readonly OutputPort[] {
    return this.#outputs;
  }

  /** True after `requireCudaStream()`. */
  get cudaStreamRequired(): boolean {
    return this.#cudaStreamRequired;
  }
}
