import { RATE_QUEUE_INSPECTION_SCHEMA, compile, renderRateQueueInspection } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { ErrorCode, HsError, unwrap } from '@hs/streams';
import { buildLifecycleGraph } from './lifecycle-graph.js';

const MIB = 1 << 20;
/** The edge the example explains. */
export const LIFECYCLE_EDGE = 'camera.frames->recorder.frames';

/**
 * Compiles the lifecycle graph, runs it for `frames` frames on the host backend, and returns the lines
 * the example prints: the capacity figures, the plan as Mermaid, and the published generation's
 * rate-queue inspection in text and canonical JSON (its schema marker checked).
 * @returns the lines.
 * @throws HsError (the promise rejects) with the compile, session, run or rendering error.
 */
export async function explainCapacity(frames: number): Promise<string[]> {
  const { graph, recorder } = buildLifecycleGraph(frames);
  const plan = unwrap(compile(graph));
  const pool = plan.pool('pool:camera.frames');
  const edge = plan.edge(LIFECYCLE_EDGE);
  if (pool === undefined || edge === undefined) throw new HsError(ErrorCode.NotFound, 'the plan lacks the lifecycle pool or edge');
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

  const session = unwrap(RunSession.create(plan, { backend: 'host' }));
  try {
    await session.run();
    const snapshot = session.captureRateGenerations();
    const published = snapshot.published;
    if (published === null) throw new HsError(ErrorCode.InvalidState, 'no rate generation was published');
    const text = unwrap(renderRateQueueInspection(plan, snapshot, published.rateGeneration, LIFECYCLE_EDGE, 'text'));
    const json = unwrap(renderRateQueueInspection(plan, snapshot, published.rateGeneration, LIFECYCLE_EDGE, 'json'));
    const schema = (JSON.parse(json) as { schema?: unknown }).schema;
    if (schema !== RATE_QUEUE_INSPECTION_SCHEMA) throw new HsError(ErrorCode.ProtocolError, `inspection JSON has schema ${String(schema)}`);
    lines.push(`recorder received ${recorder.received} frames`, '', text, '', json);
    return lines;
  } finally {
    session.dispose();
  }
}
