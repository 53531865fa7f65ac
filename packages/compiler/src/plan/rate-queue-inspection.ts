import { ErrorCode, err, ok, type Result } from '@hs/streams';
import type { ExecutionPlan } from './execution-plan.js';
import { toCanonicalJson } from './plan-json.js';
import type { RateGeneration, RateGenerationSnapshot, RejectedRateGeneration } from './rate-generation.js';

/** `text`: line-oriented for review; `json`: canonical, deterministic JSON. */
export type RateQueueInspectionFormat = 'text' | 'json';

/**
 * Schema marker of the canonical inspection JSON.
 * @example
 * ```ts
 * import { Graph, Operator, RATE_QUEUE_INSPECTION_SCHEMA, Rate, compile, evaluateRateGeneration, generationZeroRates, paramSchema, rateParam, renderRateQueueInspection, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
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
 * const published = unwrap(evaluateRateGeneration(plan, 0, generationZeroRates(plan), []));
 * const json = unwrap(renderRateQueueInspection(plan, { published, lastRejected: null }, 0, 'camera.frames->recorder.frames', 'json'));
 * const inspection = JSON.parse(json) as { schema: string; activeDepth: number };
 * if (inspection.schema !== RATE_QUEUE_INSPECTION_SCHEMA) throw new Error(`unknown inspection schema ${inspection.schema}`);
 * console.log(`${inspection.schema}: active depth ${inspection.activeDepth}`);
 * ```
 */
export const RATE_QUEUE_INSPECTION_SCHEMA = 'hs.rate-queue-inspection/1';

/**
 * Joins an edge's immutable queue-sizing recipe with one session rate generation (published or last
 * rejected, chosen by number) into one explanation, without changing anything: rates, trigger and
 * accumulation horizon, headroom, nominal arrivals, recommendation, hard floor, active and admitted
 * depth, the pool's logical payload product (per-slot bytes × entries) and, separately, the provider
 * reservation (`null` when the edge has no pool — never 0). A paste-ready `{ queueDepth: N }` pin is
 * given only when automatic sizing chose the depth.
 * Spec: "Size queue entries from nominal rates" (render_rate_queue_inspection).
 * @returns the rendering; `NotFound` when the edge or generation is not in the plan or snapshot.
 * @example
 * ```ts
 * import { Graph, Operator, Rate, compile, evaluateRateGeneration, generationZeroRates, paramSchema, rateParam, renderRateQueueInspection, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
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
 * // A snapshot as RunSession.captureRateGenerations() returns it; here generation 0, evaluated directly.
 * const published = unwrap(evaluateRateGeneration(plan, 0, generationZeroRates(plan), []));
 * const text = renderRateQueueInspection(plan, { published, lastRejected: null }, 0, 'camera.frames->recorder.frames', 'text');
 * console.log(unwrap(text)); // rates, horizon, headroom, hard floor, active and admitted depth, payload, reservation
 * ```
 */
export function renderRateQueueInspection(
  plan: ExecutionPlan,
  snapshot: RateGenerationSnapshot,
  generation: number,
  edge: string,
  format: RateQueueInspectionFormat,
): Result<string> {
  const recipe = plan.queueSizingRecipe(edge);
  const planEdge = plan.edge(edge);
  if (recipe === undefined || planEdge === undefined) return err(ErrorCode.NotFound, `plan ${plan.name} has no edge ${edge}`);
  let selected: { status: 'published'; value: RateGeneration } | { status: 'rejected'; value: RejectedRateGeneration } | null = null;
  if (snapshot.published?.rateGeneration === generation) selected = { status: 'published', value: snapshot.published };
  else if (snapshot.lastRejected?.rateGeneration === generation) selected = { status: 'rejected', value: snapshot.lastRejected };
  if (selected === null) return err(ErrorCode.NotFound, `the snapshot holds no rate generation ${generation}`);

  const published = selected.status === 'published' ? selected.value : null;
  const sized = published?.edges.find((e) => e.edge === edge) ?? null;
  const horizon = plan.accumulationHorizons.find((h) => h.edge === edge) ?? null;
  const pool = planEdge.pool === null ? null : (plan.pool(planEdge.pool) ?? null);
  const provider = pool === null ? null : (plan.providerAllocationPlans.find((p) => p.pool === pool.id) ?? null);
  let activeEntries: number | null = null;
  if (pool !== null && published !== null) {
    const depth = Math.max(0, ...pool.consumers.map((id) => published.edges.find((e) => e.edge === id)?.activeDepth ?? 0));
    activeEntries = pool.derivation.terms.reduce((sum, t) => sum + (t.term === 'maxConsumerQueueDepth' ? depth : t.value), 0);
  }
  const activeDepth = sized?.activeDepth ?? null;
  const data = {
    schema: RATE_QUEUE_INSPECTION_SCHEMA,
    plan: plan.name,
    edge,
    generation: {
      number: generation,
      status: selected.status,
      parameters: selected.value.parameters,
      rejection: selected.status === 'rejected' ? { code: selected.value.code, reason: selected.value.reason } : null,
    },
    source: recipe.source,
    inputRate: recipe.inputRate,
    trigger: recipe.triggerRate,
    horizon,
    headroom: recipe.headroom,
    nominalArrivals: sized?.nominalArrivals ?? null,
    recommendation: sized?.recommendation ?? null,
    hardFloor: recipe.hardFloor,
    hardFloorContributors: plan.hardFloorContributors.filter((c) => c.edge === edge),
    activeDepth,
    admittedDepth: recipe.admittedDepth,
    explicitDepth: recipe.explicitDepth,
    pin: recipe.source === 'automatic' && activeDepth !== null ? { queueDepth: activeDepth } : null,
    logicalPayload:
      pool === null
        ? null
        : {
            pool: pool.id,
            perSlotBytes: pool.maxByteSpan,
            activeEntries,
            activeBytes: activeEntries === null ? null : activeEntries * pool.maxByteSpan,
            admittedEntries: pool.slotCount,
            admittedBytes: pool.admittedLogicalBytes,
          },
    providerReservation: provider === null ? null : { slots: provider.slots, slotBytes: provider.slotBytes, reservedBytes: provider.reservedBytes },
  };
  if (format === 'json') return ok(JSON.stringify(toCanonicalJson(data)));
  if (format !== 'text') return err(ErrorCode.InvalidArgument, `format must be 'text' or 'json', got ${String(format)}`);
  return ok(renderText(data));
}

function show(value: unknown): string {
  return value === null || value === undefined ? 'unavailable' : String(value);
}

function renderText(d: {
  plan: string;
  edge: string;
  generation: { number: number; status: string; parameters: readonly { parameter: string; rate: { toString(): string } }[]; rejection: { code: string; reason: string } | null };
  source: string;
  inputRate: { active: object; max: object; source: string } | null;
  trigger: { trigger: string } | null;
  horizon: { seconds: string; admittedSeconds: string } | null;
  headroom: object;
  nominalArrivals: number | null;
  recommendation: number | null;
  hardFloor: number;
  hardFloorContributors: readonly { kind: string; scenario: string; entries: number }[];
  activeDepth: number | null;
  admittedDepth: number;
  explicitDepth: number | null;
  pin: { queueDepth: number } | null;
  logicalPayload: { pool: string; perSlotBytes: number; activeEntries: number | null; activeBytes: number | null; admittedEntries: number; admittedBytes: number } | null;
  providerReservation: { slots: number; slotBytes: number; reservedBytes: number } | null;
}): string {
  const lines = [`edge ${d.edge} (plan ${d.plan}), rate generation ${d.generation.number} (${d.generation.status})`];
  if (d.generation.rejection !== null) lines.push(`  rejected: ${d.generation.rejection.code}: ${d.generation.rejection.reason}`);
  for (const p of d.generation.parameters) lines.push(`  parameter ${p.parameter} = ${p.rate.toString()}`);
  lines.push(`  input rate: ${d.inputRate === null ? 'unavailable' : `${d.inputRate.active.toString()} (${d.inputRate.source}), admitted max ${d.inputRate.max.toString()}`}`);
  lines.push(`  trigger: ${d.trigger?.trigger ?? 'unavailable'}; accumulation horizon ${d.horizon === null ? 'unavailable' : `${d.horizon.seconds} s (admitted ${d.horizon.admittedSeconds} s)`}`);
  lines.push(`  headroom ${d.headroom.toString()}; nominal arrivals ${show(d.nominalArrivals)}; recommendation ${show(d.recommendation)}`);
  lines.push(`  hard floor ${d.hardFloor} (${d.hardFloorContributors.map((c) => `${c.kind} ${c.entries}${c.scenario === '*' ? '' : ` in ${c.scenario}`}`).join(', ')})`);
  lines.push(`  queue depth ${show(d.activeDepth)} active (${d.source}${d.explicitDepth === null ? '' : `, explicit ${d.explicitDepth}`}), ${d.admittedDepth} admitted`);
  if (d.logicalPayload === null) {
    lines.push('  logical payload: unavailable (no runtime pool on this edge)');
  } else {
    const l = d.logicalPayload;
    lines.push(`  logical payload ${l.pool}: ${l.perSlotBytes} B x ${show(l.activeEntries)} entries = ${show(l.activeBytes)} B active; x ${l.admittedEntries} = ${l.admittedBytes} B admitted`);
  }
  const r = d.providerReservation;
  lines.push(`  provider reservation: ${r === null ? 'unavailable' : `${r.slots} slots x ${r.slotBytes} B = ${r.reservedBytes} B`}`);
  lines.push(`  pin: ${d.pin === null ? 'none (depth not chosen by automatic sizing)' : `{ queueDepth: ${d.pin.queueDepth} }`}`);
  return lines.join('\n');
}
