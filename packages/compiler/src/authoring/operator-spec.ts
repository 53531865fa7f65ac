import { ErrorCode, HsError } from '@hs/streams';
import { BoundParams } from '../params/bound-params.js';
import { ParamSchema, type ParamFields } from '../params/param-schema.js';
import { Rate } from '../rates/rate.js';
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
  #params: BoundParams | null = null;
  #contract: TemporalContract | null = null;

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
    const port = new InputPort(this.operator, name, declareInputRequirements(where, requirements), options?.optional === true, this.window);
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

  /**
   * Binds the operator's parameter schema with its generation-zero `values` (checked against the
   * field domains by `compile()`: `PARAMETER_VALUE_INVALID`). One schema per operator.
   * Spec: "Derive slot bytes from deployment parameters".
   * @throws HsError `InvalidArgument` for a non-schema, non-object values, or a second call; `InvalidState` after setup().
   */
  params<F extends ParamFields>(schema: ParamSchema<F>, values: { readonly [K in keyof F]: unknown }): BoundParams<F> {
    this.window.assertOpen('spec.params()');
    if (!(schema instanceof ParamSchema) || typeof values !== 'object' || values === null) {
      throw new HsError(ErrorCode.InvalidArgument, `operator '${this.operator.name}': params(schema, values) takes a ParamSchema and a values object`);
    }
    if (this.#params !== null) throw new HsError(ErrorCode.InvalidArgument, `operator '${this.operator.name}': params() was already called; bind one schema`);
    const bound = new BoundParams<F>(this.operator, schema, Object.freeze({ ...(values as Record<string, unknown>) }));
    this.#params = bound as unknown as BoundParams;
    return bound;
  }

  /**
   * Declares what triggers an activation: one of this operator's inputs, or a clock at a nominal
   * rate. The trigger's period is each input's accumulation horizon; `windows` (entries consumed at
   * once) and `selectors` (entries kept per named scenario) add hard-floor contributors.
   * Spec: "Size queue entries from nominal rates".
   * @throws HsError `InvalidArgument` for a malformed contract or a second call; `InvalidState` after setup().
   */
  temporalContract(contract: TemporalContract): void {
    this.window.assertOpen('spec.temporalContract()');
    const where = `operator '${this.operator.name}': temporalContract`;
    const trigger = contract?.trigger;
    const valid =
      typeof trigger === 'object' &&
      trigger !== null &&
      (('input' in trigger && trigger.input instanceof InputPort) || ('clock' in trigger && trigger.clock instanceof Rate));
    if (!valid) throw new HsError(ErrorCode.InvalidArgument, `${where} needs trigger: { input: InputPort } or { clock: Rate }`);
    for (const r of [...(contract.windows ?? []), ...(contract.selectors ?? [])]) {
      if (!(r?.input instanceof InputPort) || !Number.isSafeInteger(r.entries) || r.entries < 1) {
        throw new HsError(ErrorCode.InvalidArgument, `${where}: each window/selector needs { input: InputPort, entries: positive integer }`);
      }
    }
    if (this.#contract !== null) throw new HsError(ErrorCode.InvalidArgument, `${where} was already declared`);
    this.#contract = Object.freeze({ ...contract });
  }

  /** The bound parameters, or `null`. */
  get boundParams(): BoundParams | null {
    return this.#params;
  }

  /** The temporal contract, or `null`. */
  get contract(): TemporalContract | null {
    return this.#contract;
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

/** Entries an activation retains on one input (a hard-floor contributor). */
export interface InputRetention {
  /** The input whose entries are retained. */
  readonly input: InputPort;
  /** Entries, positive. */
  readonly entries: number;
  /** Mutually exclusive scenario the retention belongs to; default `default`. */
  readonly scenario?: string;
}

/**
 * What triggers an operator's activation, and the entries it retains. Spec: "Size queue entries from
 * nominal rates" (temporal contracts give each input a finite accumulation horizon).
 */
export interface TemporalContract {
  /** An input of this operator, or a clock at a nominal rate. */
  readonly trigger:
    | {
        /** The operator activates when this input receives an entry. */
        readonly input: InputPort;
      }
    | {
        /** The operator activates on a clock at this nominal rate. */
        readonly clock: Rate;
      };
  /** Window retention: the activation consumes `entries` queued entries of `input` at once. */
  readonly windows?: readonly InputRetention[];
  /** Selector retention: entries kept on `input` in a named scenario. */
  readonly selectors?: readonly InputRetention[];
}
