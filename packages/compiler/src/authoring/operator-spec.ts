import { ErrorCode, HsError, checkOptionFields, unwrap } from '@hs/streams';
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
 * @example
 * ```ts
 * import { Graph, Operator, Rate, compile, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
 * import { Device, MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * class Imu extends Operator {
 *   samples!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     const representation = { memoryKind: MemoryKind.Host, dtype: DType.float32, rank: 1 };
 *     this.samples = spec.output('samples').producesTensor({ representation, bounds: { maxByteSpan: 64 }, storage: 'runtimePool' }).nominalRate(Rate.hz(1000));
 *   }
 *   compute(): void {}
 * }
 * class Integrator extends Operator {
 *   imu!: InputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.imu = spec.input('imu', { dtype: DType.float32, rank: 1 });
 *     spec.requireCudaStream(); // compute() gets a planned stream although no port is in CUDA memory
 *     spec.temporalContract({ trigger: { clock: Rate.hz(100) }, windows: [{ input: this.imu, entries: 20 }] });
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('imu');
 * const integrator = graph.add(new Integrator('integrator'));
 * graph.addFlow(graph.add(new Imu('imu')).samples, integrator.imu);
 * const plan = unwrap(compile(graph, { deployment: { bindOperatorDevice: { integrator: Device.cuda(0) } } }));
 * console.log(`cudaStreamRequired ${graph.specOf(integrator).cudaStreamRequired}; stream ${plan.operator('integrator')?.stream}; imu queue ${plan.edges[0]?.queueDepth} entries`);
 * ```
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
   * @throws HsError `InvalidArgument` for a bad name, mistyped requirements or an unknown option field; `InvalidState` after setup().
   */
  input(name: string, requirements?: TensorInputRequirements, options?: InputPortOptions): InputPort {
    this.window.assertOpen(`spec.input(${JSON.stringify(name)})`);
    assertAuthoringName(`operator '${this.operator.name}' input`, name);
    const where = `${this.operator.name}.${name}`;
    if (options !== undefined) unwrap(checkOptionFields(`${where}: input options`, options, ['optional', 'crossDevice']));
    if (options?.crossDevice !== undefined && typeof options.crossDevice !== 'boolean') {
      throw new HsError(ErrorCode.InvalidArgument, `${where}: options.crossDevice must be a boolean`);
    }
    const port = new InputPort(this.operator, name, declareInputRequirements(where, requirements), options?.optional === true, this.window, options?.crossDevice === true);
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
   * Declares the operator's temporal contract, the only scheduling authority of the runtime: what
   * starts an activation (one of this operator's inputs receiving an entry, or a clock at a nominal
   * rate), which inputs must hold an entry for it to run (`required`), and what it consumes and keeps
   * (`windows`, `selectors`). The compiler also sizes queues from it: the trigger's period is each
   * input's accumulation horizon, windows and selectors are hard-floor contributors.
   * Spec: "Size queue entries from nominal rates" (the temporal contract remains the only scheduling authority).
   * @throws HsError `InvalidArgument` for a malformed or unknown form (an unknown key, a trigger with both
   *   `input` and `clock`, a `missedTicks` other than `skip`/`catchUp`, an entry count that is not a
   *   positive integer, two windows or two selectors of one input in one scenario), or a second call;
   *   `InvalidState` after setup().
   * @example
   * // Runs on every camera frame; takes every IMU sample queued since the last frame (up to 34).
   * spec.temporalContract({ trigger: { input: this.frames }, windows: [{ input: this.imu, entries: 34 }] });
   * @example
   * // Runs at 1 Hz exactly (ticks at t0 + k s); a tick missed while busy is skipped and counted.
   * spec.temporalContract({ trigger: { clock: Rate.hz(1) }, windows: [{ input: this.samples, entries: 3 }] });
   * @example
   * // Runs on each `frames` entry, only when `calibration` holds one too; keeps the newest 2 poses.
   * spec.temporalContract({ trigger: { input: this.frames }, required: [this.calibration], selectors: [{ input: this.poses, entries: 2 }] });
   */
  temporalContract(contract: TemporalContract): void {
    this.window.assertOpen('spec.temporalContract()');
    const where = `operator '${this.operator.name}': temporalContract`;
    if (this.#contract !== null) throw new HsError(ErrorCode.InvalidArgument, `${where} was already declared`);
    if (typeof contract !== 'object' || contract === null) throw new HsError(ErrorCode.InvalidArgument, `${where} takes a contract object`);
    assertKnownKeys(where, contract, CONTRACT_KEYS);
    const trigger = checkTrigger(where, contract.trigger);
    const required = contract.required ?? [];
    if (!Array.isArray(required) || !required.every((r) => r instanceof InputPort)) {
      throw new HsError(ErrorCode.InvalidArgument, `${where}: required must be an array of InputPort`);
    }
    const retentions = (what: 'windows' | 'selectors'): readonly InputRetention[] => {
      const list = contract[what] ?? [];
      if (!Array.isArray(list)) throw new HsError(ErrorCode.InvalidArgument, `${where}: ${what} must be an array`);
      for (const r of list as readonly InputRetention[]) {
        if (typeof r !== 'object' || r === null) throw new HsError(ErrorCode.InvalidArgument, `${where}: each ${what} entry is { input, entries, scenario? }`);
        assertKnownKeys(`${where}: ${what} entry`, r, RETENTION_KEYS);
        if (!(r.input instanceof InputPort) || !Number.isSafeInteger(r.entries) || r.entries < 1) {
          throw new HsError(ErrorCode.InvalidArgument, `${where}: each window/selector needs { input: InputPort, entries: positive integer }`);
        }
        if (r.scenario !== undefined && (typeof r.scenario !== 'string' || r.scenario.length === 0)) {
          throw new HsError(ErrorCode.InvalidArgument, `${where}: a ${what} scenario is a non-empty string`);
        }
      }
      return list as readonly InputRetention[];
    };
    const windows = retentions('windows');
    const selectors = retentions('selectors');
    for (const [what, list] of [['window', windows], ['selector', selectors]] as const) {
      const seen = new Set<string>();
      for (const r of list) {
        const key = `${r.input.key}@${r.scenario ?? DEFAULT_SCENARIO}`;
        if (seen.has(key)) throw new HsError(ErrorCode.InvalidArgument, `${where}: input ${r.input.key} has two ${what}s in scenario ${r.scenario ?? DEFAULT_SCENARIO}; give it one`);
        seen.add(key);
      }
    }
    this.#contract = Object.freeze({ ...contract, trigger, required: Object.freeze([...required]), windows: Object.freeze([...windows]), selectors: Object.freeze([...selectors]) });
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

/**
 * The scenario a window or selector belongs to when it names none, and the one a session runs by default.
 * @example
 * ```ts
 * import { DEFAULT_SCENARIO, Graph, Operator, Rate, compile, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * class Imu extends Operator {
 *   samples!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     const representation = { memoryKind: MemoryKind.Host, dtype: DType.float32, rank: 1 };
 *     this.samples = spec.output('samples').producesTensor({ representation, bounds: { maxByteSpan: 64 }, storage: 'runtimePool' }).nominalRate(Rate.hz(1000));
 *   }
 *   compute(): void {}
 * }
 * class Fusion extends Operator {
 *   imu!: InputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.imu = spec.input('imu');
 *     // A window without a scenario belongs to DEFAULT_SCENARIO; 'replay' takes twice as many samples.
 *     spec.temporalContract({ trigger: { clock: Rate.hz(50) }, windows: [{ input: this.imu, entries: 20 }, { input: this.imu, entries: 40, scenario: 'replay' }] });
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('fusion');
 * graph.addFlow(graph.add(new Imu('imu')).samples, graph.add(new Fusion('fusion')).imu);
 * const plan = unwrap(compile(graph));
 * for (const c of plan.hardFloorContributors) console.log(`${c.kind} ${c.entries} in ${c.scenario}${c.scenario === DEFAULT_SCENARIO ? ' (the default)' : ''}`);
 * ```
 */
export const DEFAULT_SCENARIO = 'default';

/** What an activation consumes (window) or keeps (selector) on one input. */
export interface InputRetention {
  /** The input whose entries are retained. */
  readonly input: InputPort;
  /** Entries, positive: a window takes up to this many queued entries at once; a selector keeps the newest this many. */
  readonly entries: number;
  /**
   * Mutually exclusive scenario the retention belongs to; default `default`. Queues are sized for the
   * largest scenario; a session applies the `default` scenario unless `RunSessionOptions.scenario` selects another.
   */
  readonly scenario?: string;
}

/** How a clock trigger treats a tick it could not run on time (the operator was busy, or the loop was late). */
export type MissedTickPolicy = 'skip' | 'catchUp';

/**
 * What triggers an operator's activation, which inputs it needs, and the entries it consumes or keeps.
 * Spec: "Size queue entries from nominal rates" (temporal contracts give each input a finite
 * accumulation horizon, and remain the only scheduling authority).
 *
 * At run time (`@hs/runtime`): with an input trigger the operator runs when that input holds an entry
 * (and every `required` input holds one); with a clock it runs at t0 + k/rate (k = 1, 2, ...), exact
 * in integer nanoseconds. An input with a window hands the activation every queued entry up to
 * `entries` (`ctx.receiveWindow()`), consumed; one with a selector hands the newest `entries` without
 * consuming them; any other non-trigger input hands its newest entry (older ones are released unread)
 * or nothing. An operator without a contract runs when every connected input holds an entry.
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
        /**
         * `skip` (default): a tick missed because the operator was busy or the loop was late is skipped
         * and counted (`OperatorMetrics.skippedTicks`); the operator runs once for the latest due tick,
         * never as a burst (Holoscan's PeriodicCondition no-catch-up policy). `catchUp`: every tick runs,
         * late ones back to back.
         */
        readonly missedTicks?: MissedTickPolicy;
      };
  /**
   * Inputs that must hold an entry for an activation to start (besides the trigger input). Each is read
   * like any non-trigger input: its newest entry, consumed (so the next activation waits for a new one),
   * unless it has a selector, whose kept entries stay for every later activation.
   */
  readonly required?: readonly InputPort[];
  /** Window retention: the activation consumes every queued entry of `input`, up to `entries`, at once. */
  readonly windows?: readonly InputRetention[];
  /** Selector retention: the activation reads the newest `entries` entries of `input` without consuming them. */
  readonly selectors?: readonly InputRetention[];
}

const CONTRACT_KEYS = new Set(['trigger', 'required', 'windows', 'selectors']);
const RETENTION_KEYS = new Set(['input', 'entries', 'scenario']);

function assertKnownKeys(where: string, value: object, known: ReadonlySet<string>): void {
  for (const key of Object.keys(value)) {
    if (!known.has(key)) throw new HsError(ErrorCode.InvalidArgument, `${where}: unknown key ${JSON.stringify(key)}; known keys are ${[...known].join(', ')}`);
  }
}

function checkTrigger(where: string, trigger: unknown): TemporalContract['trigger'] {
  const usage = `${where} needs trigger: { input: InputPort } or { clock: Rate, missedTicks?: 'skip' | 'catchUp' }`;
  if (typeof trigger !== 'object' || trigger === null) throw new HsError(ErrorCode.InvalidArgument, usage);
  const t = trigger as { input?: unknown; clock?: unknown; missedTicks?: unknown };
  if ('input' in t && 'clock' in t) {
    throw new HsError(ErrorCode.InvalidArgument, `${where}: a trigger is an input or a clock, not both; a clock-triggered operator reads its inputs at each tick`);
  }
  if ('input' in t) {
    assertKnownKeys(`${where}: trigger`, t, INPUT_TRIGGER_KEYS);
    if (!(t.input instanceof InputPort)) throw new HsError(ErrorCode.InvalidArgument, usage);
    return Object.freeze({ input: t.input });
  }
  assertKnownKeys(`${where}: trigger`, t, CLOCK_TRIGGER_KEYS);
  if (!(t.clock instanceof Rate)) throw new HsError(ErrorCode.InvalidArgument, usage);
  if (t.missedTicks !== undefined && t.missedTicks !== 'skip' && t.missedTicks !== 'catchUp') {
    throw new HsError(ErrorCode.InvalidArgument, `${where}: missedTicks is 'skip' or 'catchUp', got ${String(t.missedTicks)}`);
  }
  return Object.freeze({ clock: t.clock, missedTicks: (t.missedTicks ?? 'skip') as MissedTickPolicy });
}

const INPUT_TRIGGER_KEYS = new Set(['input']);
const CLOCK_TRIGGER_KEYS = new Set(['clock', 'missedTicks']);
