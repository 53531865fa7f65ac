import type { AccumulationHorizonRecord, HardFloorContributor, QueueSizingRecipe } from '../plan/plan-records.js';
import type { QueueDepthSource } from '../plan/record-sources.js';
import type { RateRatio } from '../rates/rate.js';
import { type Rational, ceilRational, formatRational, multiplyRational, reciprocal } from '../rates/rational.js';
import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { GraphIndex, IndexedEdge } from './graph-index.js';
import { composeHardFloor, hardFloorContributors } from './hard-floor.js';
import type { RateResolution, RateTerm, ResolvedRate } from './resolve-rates.js';

/** An edge's resolved queue depth. */
export interface ResolvedQueueDepth {
  /** Active entries (generation zero). */
  readonly queueDepth: number;
  /** Entries the admitted rate domain may need (channel and pool capacity); equals `queueDepth` unless automatic. */
  readonly admittedQueueDepth: number;
  readonly source: QueueDepthSource;
  readonly recipe: QueueSizingRecipe;
  readonly horizon: AccumulationHorizonRecord | null;
  readonly contributors: readonly HardFloorContributor[];
}

/** True for a queue depth hs accepts: a positive safe integer (entries). */
export function isValidQueueDepth(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

/** `ceil(ceil(rate × horizon) × headroom)`: the nominal recommendation for a rate over a horizon. */
export function recommendedDepth(inputHz: Rational, triggerHz: Rational, headroom: Rational): { arrivals: bigint; recommendation: bigint } {
  const arrivals = ceilRational(multiplyRational(inputHz, reciprocal(triggerHz)));
  return { arrivals, recommendation: ceilRational(multiplyRational({ n: arrivals, d: 1n }, headroom)) };
}

function termRecord(term: RateTerm): { parameter: string | null; factor: string } {
  return { parameter: term.parameter?.key ?? null, factor: formatRational(term.factor) };
}

/**
 * Resolves every edge's queue depth. With an explicit `addFlow()` depth: exact authority (below the
 * hard floor: `QUEUE_DEPTH_BELOW_HARD_FLOOR`; below the recommendation: `QUEUE_DEPTH_BELOW_RECOMMENDATION`
 * warning). Without: when the input has a rate and the consumer's temporal contract a trigger
 * (accumulation horizon = the trigger's period), the automatic depth
 * `max(hardFloor, ceil(ceil(rate × horizon) × headroom))` and the admitted ceiling over the admitted
 * rate domain (the largest rate over the longest horizon; when one parameter drives both the input and
 * the trigger, their constant ratio); else `max(hardFloor, defaultQueueDepth)`. Exact rational arithmetic.
 * Spec: "Size queue entries from nominal rates".
 */
export function resolveQueueDepths(
  index: GraphIndex,
  rates: RateResolution,
  defaultQueueDepth: number,
  headroom: RateRatio,
  log: DiagnosticLog,
): Map<IndexedEdge, ResolvedQueueDepth> {
  const depths = new Map<IndexedEdge, ResolvedQueueDepth>();
  for (const edge of index.edges) {
    const requested = edge.flow.queueDepth;
    if (requested !== undefined && !isValidQueueDepth(requested)) {
      log.error(
        DiagnosticCode.QueueDepthInvalid,
        { kind: 'edge', edge: edge.id },
        `edge ${edge.id}: queueDepth ${String(requested)} is not a positive integer of entries (at most 2^53 - 1); ` +
          `pass addFlow(..., { queueDepth: N }) with N >= 1, or omit it for automatic or default sizing`,
      );
      continue;
    }
    const contributors = hardFloorContributors(index, edge);
    const hardFloor = composeHardFloor(contributors);
    const inputRate = rates.inputs.get(edge.flow.input) ?? null;
    const trigger = triggerOf(index, edge, rates);
    let sizing: { arrivals: number; recommendation: number; admittedArrivals: number; admittedRecommendation: number } | null = null;
    let horizon: AccumulationHorizonRecord | null = null;
    if (inputRate !== null && trigger !== null) {
      const active = recommendedDepth(inputRate.active.hz, trigger.rate.active.hz, headroom.value);
      // Rates driven by one parameter keep a constant ratio (a self-triggered input), whatever its value.
      const sameDriver = inputRate.term.parameter !== null && inputRate.term.parameter.key === trigger.rate.term.parameter?.key;
      const admitted = sameDriver
        ? recommendedDepth(inputRate.term.factor, trigger.rate.term.factor, headroom.value)
        : recommendedDepth(inputRate.max.hz, trigger.rate.min.hz, headroom.value);
      sizing = {
        arrivals: Number(active.arrivals),
        recommendation: Number(active.recommendation),
        admittedArrivals: Number(admitted.arrivals),
        admittedRecommendation: Number(admitted.recommendation),
      };
      horizon = {
        edge: edge.id,
        trigger: trigger.name,
        seconds: formatRational(reciprocal(trigger.rate.active.hz)),
        admittedSeconds: formatRational(reciprocal(trigger.rate.min.hz)),
      };
    }
    let source: QueueDepthSource;
    let queueDepth: number;
    let admittedQueueDepth: number;
    if (requested !== undefined) {
      source = 'explicit';
      queueDepth = admittedQueueDepth = requested;
      if (requested < hardFloor) {
        log.error(
          DiagnosticCode.QueueDepthBelowHardFloor,
          { kind: 'edge', edge: edge.id },
          `edge ${edge.id}: explicit queueDepth ${requested} is below the semantic hard floor ${hardFloor} (${contributors.map((c) => `${c.kind} ${c.entries}`).join(', ')}); raise it to at least ${hardFloor} or omit it`,
        );
      } else if (sizing !== null && requested < sizing.recommendation) {
        log.warning(
          DiagnosticCode.QueueDepthBelowRecommendation,
          { kind: 'edge', edge: edge.id },
          `edge ${edge.id}: explicit queueDepth ${requested} is below the nominal recommendation ${sizing.recommendation}; it is kept exactly (omit it for automatic sizing)`,
        );
      }
    } else if (sizing !== null) {
      source = 'automatic';
      queueDepth = Math.max(hardFloor, sizing.recommendation);
      admittedQueueDepth = Math.max(hardFloor, sizing.admittedRecommendation);
    } else {
      source = 'default';
      queueDepth = admittedQueueDepth = Math.max(hardFloor, defaultQueueDepth);
    }
    const recipe: QueueSizingRecipe = {
      edge: edge.id,
      source,
      inputRate: inputRate === null ? null : { source: inputRate.source, active: inputRate.active, max: inputRate.max, term: termRecord(inputRate.term) },
      triggerRate: trigger === null ? null : { trigger: trigger.name, active: trigger.rate.active, min: trigger.rate.min, term: termRecord(trigger.rate.term) },
      headroom,
      nominalArrivals: sizing?.arrivals ?? null,
      recommendation: sizing?.recommendation ?? null,
      hardFloor,
      automaticDepth: sizing === null ? null : Math.max(hardFloor, sizing.recommendation),
      admittedCeiling: sizing === null ? null : Math.max(hardFloor, sizing.admittedRecommendation),
      explicitDepth: requested ?? null,
      activeDepth: queueDepth,
      admittedDepth: admittedQueueDepth,
    };
    depths.set(edge, { queueDepth, admittedQueueDepth, source, recipe, horizon, contributors });
  }
  return depths;
}

function triggerOf(index: GraphIndex, edge: IndexedEdge, rates: RateResolution): { name: string; rate: ResolvedRate } | null {
  const contract = index.specs.get(edge.consumer)?.contract ?? null;
  if (contract === null) return null;
  const trigger = contract.trigger;
  if ('clock' in trigger) {
    const hz = trigger.clock.hz;
    return { name: `clock ${trigger.clock.toString()}`, rate: { term: { parameter: null, factor: hz }, source: 'nominal', active: trigger.clock, min: trigger.clock, max: trigger.clock } };
  }
  if (trigger.input.operator !== edge.consumer) return null; // reported once by resolveRates()
  const rate = rates.inputs.get(trigger.input);
  return rate === undefined ? null : { name: `input ${trigger.input.key}`, rate };
}
