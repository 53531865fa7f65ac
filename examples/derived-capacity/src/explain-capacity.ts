import { RATE_QUEUE_INSPECTION_SCHEMA, compile, renderRateQueueInspection } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { buildLifecycleGraph } from './lifecycle-graph.js';

const MIB = 1 << 20;
/** The edge the example explains. */
export const LIFECYCLE_EDGE = 'camera.frames->recorder.frames';

/**
 * Compiles the lifecycle graph, runs it for `frames` frames on the host backend, and returns the lines
 * the example prints: the capacity figures, the plan as Mermaid, and the published generation's
 * rate-queue inspection in text and canonical JSON (its schema marker checked).
 * @returns the lines; the compile, session or rendering error otherwise.
 */
export async function explainCapacity(frames: number): Promise<Result<string[]>> {
  const { graph, recorder } = buildLifecycleGraph(frames);
  const compiled = compile(graph);
  if (!compiled.ok) return compiled;
  const plan = compiled.value;
  const pool = plan.pool('pool:camera.frames');
  const edge = plan.edge(LIFECYCLE_EDGE);
  if (pool === undefined || edge === undefined) return err(ErrorCode.NotFound, 'the plan lacks the lifecycle pool or edge');
  const terms = pool.derivation.terms;
  const lines = [
    `per-slot bytes: ${pool.maxByteSpan} B = ${pool.maxByteSpan / MIB} MiB (${plan.byteSpanDerivations[0]?.expression ?? '?'}), memory kind ${pool.memoryKind} (from ${pool.memoryKindSource})`,
    `queue ${LIFECYCLE_EDGE}: ${edge.queueDepth} entries at 60 Hz (${edge.queueDepthSource}), ${edge.admittedQueueDepth} admitted up to 120 Hz`,
    `active:   ${terms.map((t) => t.value).join(' + ')} = ${pool.activeSlotCount} entries; ${pool.activeSlotCount} x ${pool.maxByteSpan / MIB} MiB = ${pool.activeLogicalBytes / MIB} MiB`,
    `admitted: ${terms.map((t) => t.admittedValue).join(' + ')} = ${pool.slotCount} entries; ${pool.slotCount} x ${pool.maxByteSpan / MIB} MiB = ${pool.admittedLogicalBytes / MIB} MiB`,
    '',
    plan.toMermaid(),
    '',
  ];

  const created = RunSession.create(plan, { backend: 'host' });
  if (!created.ok) return created;
  const session = created.value;
  try {
    const ran = await session.run();
    if (!ran.ok) return ran;
    const snapshot = session.captureRateGenerations();
    const published = snapshot.published;
    if (published === null) return err(ErrorCode.InvalidState, 'no rate generation was published');
    const text = renderRateQueueInspection(plan, snapshot, published.rateGeneration, LIFECYCLE_EDGE, 'text');
    const json = renderRateQueueInspection(plan, snapshot, published.rateGeneration, LIFECYCLE_EDGE, 'json');
    if (!text.ok) return text;
    if (!json.ok) return json;
    const schema = (JSON.parse(json.value) as { schema?: unknown }).schema;
    if (schema !== RATE_QUEUE_INSPECTION_SCHEMA) return err(ErrorCode.ProtocolError, `inspection JSON has schema ${String(schema)}`);
    lines.push(`recorder received ${recorder.received} frames`, '', text.value, '', json.value);
    return ok(lines);
  } finally {
    session.dispose();
  }
}
