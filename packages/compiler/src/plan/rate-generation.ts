import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { rateAdmitted, type RateDomain } from '../params/param-field.js';
import { Rate } from '../rates/rate.js';
import { type Rational, multiplyRational, parseRational, rational } from '../rates/rational.js';
import { recommendedDepth } from '../compile/queue-depths.js';
import type { ExecutionPlan } from './execution-plan.js';
import type { PlanRateTerm, PortRef } from './plan-records.js';

/** A runtime rate parameter value of a candidate generation. */
export interface RateParameterValue {
  /** `op.params.field`. */
  readonly parameter: string;
  /** The value, within the field's admitted domain. */
  readonly rate: Rate;
}

/**
 * A published rate generation: new active queue depths and port rates, within the plan's admitted
 * capacities (nothing is reallocated). Generation 0 is a session's first candidate: the plan's
 * generation-zero values unless the session was created with others.
 * Spec: "Size queue entries from nominal rates".
 */
export interface RateGeneration {
  /** Generation number: 0 for the first candidate, then one more per later candidate (published or rejected). */
  readonly rateGeneration: number;
  /** Every runtime rate parameter's value in this generation, sorted by key. */
  readonly parameters: readonly RateParameterValue[];
  /** Active depth of every edge, in plan edge order. */
  readonly edges: readonly {
    /** Edge id. */
    readonly edge: string;
    /** Queue entries used in this generation (at most the edge's admitted depth). */
    readonly activeDepth: number;
    /** `ceil(rate × horizon)`, or `null` without rate evidence. */
    readonly nominalArrivals: number | null;
    /** `ceil(nominalArrivals × headroom)`, or `null`. */
    readonly recommendation: number | null;
  }[];
  /** Rate of every rated port, in plan order. */
  readonly ports: readonly {
    /** The port. */
    readonly port: PortRef;
    /** Whether it is an input or an output. */
    readonly direction: 'input' | 'output';
    /** Its rate in this generation. */
    readonly rate: Rate;
  }[];
}

/** A candidate the session refused, with why (the published generation stays in force). */
export interface RejectedRateGeneration {
  /** The generation number the candidate would have had. */
  readonly rateGeneration: number;
  /** The candidate's parameter values. */
  readonly parameters: readonly RateParameterValue[];
  /** Why: `InvalidArgument`, `NotFound` or `ResourceExhausted` (a depth beyond the admitted one). */
  readonly code: ErrorCode;
  /** What was wrong, in words. */
  readonly reason: string;
}

/** Owning evidence of a session's rate generations; each side is independently nullable. */
export interface RateGenerationSnapshot {
  /** The generation in force, or `null` before any was published. */
  readonly published: RateGeneration | null;
  /** The last refused candidate, or `null` when none was refused. */
  readonly lastRejected: RejectedRateGeneration | null;
}

function evaluate(term: PlanRateTerm, values: ReadonlyMap<string, Rate>): Rational {
  const factor = parseRational(term.factor) ?? rational(0n);
  const base = term.parameter === null ? rational(1n) : (values.get(term.parameter)?.hz ?? rational(0n));
  return multiplyRational(base, factor);
}

/**
 * The generation-zero values of the plan's runtime rate parameters.
 * @example
 * ```ts
 * import { Graph, Operator, Rate, compile, generationZeroRates, paramSchema, rateParam, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const CameraParams = paramSchema('com.example.CameraParams', 1, { frameRate: rateParam({ min: Rate.hz(1), max: Rate.hz(120) }).runtime() });
 * class Camera extends Operator {
 *   frames!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(CameraParams, { frameRate: Rate.hz(60) });
 *     const representation = { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 };
 *     this.frames = spec.output('frames').producesTensor({ representation, bounds: { maxByteSpan: 1 << 20 }, storage: 'runtimePool' }).nominalRate(params.ref('frameRate'));
 *   }
 *   compute(): void {}
 * }
 * class Recorder extends Operator {
 *   frames!: InputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec.input('frames');
 *     spec.temporalContract({ trigger: { clock: Rate.hz(15) } });
 *   }
 *   compute(): void {}
 * }
 * const graph = new Graph('capture');
 * graph.addFlow(graph.add(new Camera('camera')).frames, graph.add(new Recorder('recorder')).frames);
 * const plan = unwrap(compile(graph));
 *
 * // The runtime rate parameters' values when a session starts (unless it is created with others).
 * for (const [parameter, rate] of generationZeroRates(plan)) console.log(`${parameter} = ${rate}`);
 * ```
 */
export function generationZeroRates(plan: ExecutionPlan): Map<string, Rate> {
  const values = new Map<string, Rate>();
  for (const p of plan.params) {
    for (const f of p.fields) if (f.kind === 'rate' && f.mutability === 'runtime' && f.value instanceof Rate) values.set(`${p.operator}.params.${f.name}`, f.value);
  }
  return values;
}

/**
 * Evaluates a rate generation from the plan's immutable recipes (no graph walk): `current` values
 * overridden by `candidate`. Each candidate must name a runtime rate parameter and lie in its admitted
 * domain (`InvalidArgument`, `NotFound`); every new active depth must fit the edge's admitted depth
 * (`ResourceExhausted`). Cold: allocates its result.
 * @example
 * ```ts
 * import { Graph, Operator, Rate, compile, evaluateRateGeneration, generationZeroRates, paramSchema, rateParam, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const CameraParams = paramSchema('com.example.CameraParams', 1, { frameRate: rateParam({ min: Rate.hz(1), max: Rate.hz(120) }).runtime() });
 * class Camera extends Operator {
 *   frames!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     const params = spec.params(CameraParams, { frameRate: Rate.hz(60) });
 *     const representation = { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 };
 *     this.frames = spec.output('frames').producesTensor({ representation, bounds: { maxByteSpan: 1 << 20 }, storage: 'runtimePool' }).nominalRate(params.ref('frameRate'));
 *   }
 *   compute(): void {}
 * }
 * class Recorder extends Operator {
 *   frames!: InputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec.input('frames');
 *     spec.temporalContract({ trigger: { clock: Rate.hz(15) } });
 *   }
 *   compute(): void {}
 * }
 * const graph = new Graph('capture');
 * graph.addFlow(graph.add(new Camera('camera')).frames, graph.add(new Recorder('recorder')).frames);
 * const plan = unwrap(compile(graph));
 *
 * const zero = generationZeroRates(plan);
 * const faster = unwrap(evaluateRateGeneration(plan, 1, zero, [{ parameter: 'camera.params.frameRate', rate: Rate.hz(120) }]));
 * console.log(`generation ${faster.rateGeneration}: ${faster.edges.map((e) => `${e.edge} ${e.activeDepth} entries`).join(', ')}`);
 * const refused = evaluateRateGeneration(plan, 2, zero, [{ parameter: 'camera.params.frameRate', rate: Rate.hz(240) }]);
 * if (!refused.ok) console.log(`refused: ${refused.error.message}`); // outside the admitted domain the pools were sized for
 * ```
 */
export function evaluateRateGeneration(
  plan: ExecutionPlan,
  rateGeneration: number,
  current: ReadonlyMap<string, Rate>,
  candidate: readonly RateParameterValue[],
): Result<RateGeneration> {
  const values = new Map(current);
  for (const { parameter, rate } of candidate) {
    const [operator, , field] = parameter.split('.');
    const declared = plan.params.find((p) => p.operator === operator)?.fields.find((f) => f.name === field);
    if (declared === undefined) return err(ErrorCode.NotFound, `plan ${plan.name} has no parameter ${parameter}`);
    if (declared.kind !== 'rate' || declared.mutability !== 'runtime') {
      return err(ErrorCode.InvalidArgument, `${parameter} is a ${declared.mutability} ${declared.kind} field; only runtime rate parameters change in a session (recompile for others)`);
    }
    if (!(rate instanceof Rate) || !rateAdmitted((declared.domain as { admitted: RateDomain }).admitted, rate)) {
      return err(ErrorCode.InvalidArgument, `${parameter} = ${String(rate)} is outside its admitted domain; the pools were sized for that domain only`);
    }
    values.set(parameter, rate);
  }
  const edges: RateGeneration['edges'][number][] = [];
  for (const recipe of plan.queueSizingRecipes) {
    if (recipe.source !== 'automatic' || recipe.inputRate === null || recipe.triggerRate === null) {
      edges.push({ edge: recipe.edge, activeDepth: recipe.activeDepth, nominalArrivals: recipe.nominalArrivals, recommendation: recipe.recommendation });
      continue;
    }
    const sized = recommendedDepth(evaluate(recipe.inputRate.term, values), evaluate(recipe.triggerRate.term, values), recipe.headroom.value);
    const activeDepth = Math.max(recipe.hardFloor, Number(sized.recommendation));
    if (activeDepth > recipe.admittedDepth) {
      return err(ErrorCode.ResourceExhausted, `edge ${recipe.edge} would need ${activeDepth} entries, above its admitted ${recipe.admittedDepth}`);
    }
    edges.push({ edge: recipe.edge, activeDepth, nominalArrivals: Number(sized.arrivals), recommendation: Number(sized.recommendation) });
  }
  return ok({
    rateGeneration,
    parameters: [...values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([parameter, rate]) => ({ parameter, rate })),
    edges,
    ports: plan.portRates.map((r) => ({
      port: r.port,
      direction: r.direction,
      rate: r.parameter === null ? r.active : Rate.fromRational(evaluate({ parameter: r.parameter, factor: r.factor }, values)),
    })),
  });
}
