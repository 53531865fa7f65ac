import { ErrorCode, HsError } from '@hs/streams';
import type { TensorByteSpanExpression } from '../byte-span/byte-span-expression.js';
import { ParamRef } from '../params/bound-params.js';
import { Rate, RateRatio } from '../rates/rate.js';
import type { DeclarationWindow } from './declaration-window.js';
import type { Operator } from './operator.js';
import type { TensorInputRequirements } from './tensor-input-requirements.js';
import { declareTensorOutput, type DeclaredTensorOutput, type TensorOutputDerivations, type TensorOutputSpec } from './tensor-output-spec.js';

/**
 * Where an output's nominal rate comes from: a literal, a rate parameter (generation-zero value,
 * admitted domain for sizing), or an input of the same operator scaled by a ratio.
 * Spec: "Size queue entries from nominal rates".
 */
export type OutputRateDeclaration =
  | {
      /** A fixed nominal rate. */
      readonly kind: 'nominal';
      /** The rate. */
      readonly rate: Rate;
    }
  | {
      /** A rate parameter of the operator (its admitted domain sizes the queues). */
      readonly kind: 'parameter';
      /** The rate field. */
      readonly ref: ParamRef<Rate>;
    }
  | {
      /** An input's rate scaled by a ratio (`follows(input, ratio)`). */
      readonly kind: 'follows';
      /** The input whose rate is followed. */
      readonly input: InputPort;
      /** Output rate / input rate. */
      readonly ratio: RateRatio;
    };

function positiveCount(where: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new HsError(ErrorCode.InvalidArgument, `${where} must be a positive integer of entries, got ${String(value)}`);
  }
  return value;
}

/**
 * An operator's input, created by `OperatorSpec.input()` inside `setup()`. Connect it with
 * `Graph.addFlow(output, input)`; read from it in `compute()` with `ExecutionContext.receive(port)`.
 * @example
 * ```ts
 * import { Graph, Operator, Rate, compile, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * class Camera extends Operator {
 *   frames!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     const representation = { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 };
 *     this.frames = spec.output('frames').producesTensor({ representation, bounds: { maxByteSpan: 1 << 20 }, storage: 'runtimePool' }); // no rate declared
 *   }
 *   compute(): void {}
 * }
 * class Recorder extends Operator {
 *   frames!: InputPort;
 *   setup(spec: OperatorSpec): void {
 *     // Keeps the last 4 frames alive; expects 30 Hz, the sizing fallback since the camera declares no rate.
 *     this.frames = spec.input('frames', { dtype: DType.uint8, rank: 3 }).retainHistory(4).expectedRate(Rate.hz(30));
 *     spec.temporalContract({ trigger: { clock: Rate.hz(10) } });
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('recording');
 * const recorder = graph.add(new Recorder('recorder'));
 * graph.addFlow(graph.add(new Camera('camera')).frames, recorder.frames);
 * const plan = unwrap(compile(graph));
 * console.log(`${recorder.frames.key}: ${plan.pool('pool:camera.frames')?.derivation.text}`);
 * ```
 */
export class InputPort {
  #expectedRate: Rate | null = null;
  #retainedHistory = 1;

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
    private readonly window?: DeclarationWindow,
    /**
     * True when the input may be fed from another device than its operator's (`InputPortOptions.crossDevice`):
     * the producer's device is no placement obligation of this operator.
     */
    readonly crossDevice: boolean = false,
  ) {}

  /**
   * Declares the rate this input expects: a weaker fallback used for sizing only when the connected
   * producer declares no rate, and compared with it otherwise (`RATE_EXPECTATION_MISMATCH` warning).
   * Returns this port. Spec: "Size queue entries from nominal rates".
   * @throws HsError `InvalidArgument` for a non-Rate; `InvalidState` after setup().
   */
  expectedRate(rate: Rate): this {
    this.window?.assertOpen(`${this.key}.expectedRate()`);
    if (!(rate instanceof Rate)) throw new HsError(ErrorCode.InvalidArgument, `${this.key}.expectedRate(rate) takes a Rate, for example Rate.hz(60)`);
    this.#expectedRate = rate;
    return this;
  }

  /**
   * Declares that `compute()` keeps the last `entries` received tensors alive (a retained history,
   * including the one in hand), so the producer's pool reserves them. Returns this port.
   * @throws HsError `InvalidArgument` unless `entries` is a positive integer; `InvalidState` after setup().
   */
  retainHistory(entries: number): this {
    this.window?.assertOpen(`${this.key}.retainHistory()`);
    this.#retainedHistory = positiveCount(`${this.key}.retainHistory(entries)`, entries);
    return this;
  }

  /** The expected rate, or `null`. */
  get declaredExpectedRate(): Rate | null {
    return this.#expectedRate;
  }

  /** Tensors kept alive at once by the consumer (1: only the one in hand). */
  get retainedHistory(): number {
    return this.#retainedHistory;
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
 * @example
 * ```ts
 * import { Graph, Operator, Rate, compile, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * class Camera extends Operator {
 *   frames!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec
 *       .output('frames')
 *       .producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 }, bounds: { maxByteSpan: 1 << 20 }, storage: 'runtimePool' })
 *       .nominalRate(Rate.ratio(30000, 1001)) // 29.97 Hz, exact
 *       .producerBurst(2); // one activation may emit two frames
 *   }
 *   compute(): void {}
 * }
 * class Viewer extends Operator {
 *   frames!: InputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec.input('frames');
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('preview');
 * const camera = graph.add(new Camera('camera'));
 * graph.addFlow(camera.frames, graph.add(new Viewer('viewer')).frames);
 * const plan = unwrap(compile(graph));
 * console.log(`${camera.frames.key} at ${plan.portRates[0]?.active}: ${plan.pool('pool:camera.frames')?.derivation.text}`);
 * ```
 */
export class OutputPort {
  #tensor: DeclaredTensorOutput | null = null;
  #rate: OutputRateDeclaration | null = null;
  #burst = 1;

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
  producesTensor(spec: TensorOutputSpec, derivations?: TensorOutputDerivations | TensorByteSpanExpression): this {
    this.window.assertOpen(`${this.key}.producesTensor()`);
    if (this.#tensor !== null) {
      throw new HsError(ErrorCode.InvalidArgument, `${this.key}: producesTensor() was already called; declare each output once`);
    }
    this.#tensor = declareTensorOutput(this.key, spec, derivations);
    return this;
  }

  /**
   * Declares the output's nominal rate: a literal `Rate`, or a rate parameter of this operator
   * (`params.ref('frameRate')`, sized over its admitted domain). Returns this port.
   * Spec: "Size queue entries from nominal rates".
   * @throws HsError `InvalidArgument` for another kind of value or a second rate declaration; `InvalidState` after setup().
   */
  nominalRate(rate: Rate | ParamRef<Rate>): this {
    this.window.assertOpen(`${this.key}.nominalRate()`);
    if (rate instanceof Rate) this.#declareRate({ kind: 'nominal', rate });
    else if (rate instanceof ParamRef) this.#declareRate({ kind: 'parameter', ref: rate });
    else throw new HsError(ErrorCode.InvalidArgument, `${this.key}.nominalRate(rate) takes a Rate or params.ref(field) of a rateParam field`);
    return this;
  }

  /**
   * Declares that this output's rate is `input`'s rate × `ratio` (`input` must belong to the same
   * operator). It selects no trigger and forces no emission. Returns this port.
   * @throws HsError `InvalidArgument` for a non-input, a non-ratio or a second rate declaration; `InvalidState` after setup().
   */
  follows(input: InputPort, ratio: RateRatio = new RateRatio(1, 1)): this {
    this.window.assertOpen(`${this.key}.follows()`);
    if (!(input instanceof InputPort) || !(ratio instanceof RateRatio)) {
      throw new HsError(ErrorCode.InvalidArgument, `${this.key}.follows(input, ratio) takes an InputPort and a RateRatio`);
    }
    this.#declareRate({ kind: 'follows', input, ratio });
    return this;
  }

  /**
   * Declares that one activation may emit up to `entries` tensors on this output (a producer burst):
   * a hard-floor contributor of every edge it feeds. Default 1. Returns this port.
   * @throws HsError `InvalidArgument` unless `entries` is a positive integer; `InvalidState` after setup().
   */
  producerBurst(entries: number): this {
    this.window.assertOpen(`${this.key}.producerBurst()`);
    this.#burst = positiveCount(`${this.key}.producerBurst(entries)`, entries);
    return this;
  }

  /** The rate declaration, or `null` when none was made. */
  get rate(): OutputRateDeclaration | null {
    return this.#rate;
  }

  /** Entries one activation may emit (1 unless `producerBurst()` said otherwise). */
  get burst(): number {
    return this.#burst;
  }

  #declareRate(declaration: OutputRateDeclaration): void {
    if (this.#rate !== null) throw new HsError(ErrorCode.InvalidArgument, `${this.key}: the rate was already declared; declare it once`);
    this.#rate = Object.freeze(declaration);
  }
}
