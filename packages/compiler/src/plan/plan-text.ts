import type { ExecutionPlanRecords } from './execution-plan.js';
import { DEFAULT_SCENARIO } from '../authoring/operator-spec.js';
import type { PlanRetention, PlanSchedule } from './operator-records.js';

/**
 * Renders a plan as review-friendly lines: options, partitions with their streams, streams, operators
 * with device and stream, edges with queue depths, pools with `slotBytes x slotCount` and their
 * derivation, and diagnostics. For people; use `toJSON()` for machines.
 */
export function renderPlanText(plan: ExecutionPlanRecords): string {
  const lines: string[] = [];
  const { options } = plan;
  lines.push(`plan ${plan.name}: computeStreamPolicy ${options.computeStreamPolicy}, defaultQueueDepth ${options.defaultQueueDepth}`);

  lines.push(`partitions (${plan.partitions.length}):`);
  for (const p of plan.partitions) {
    const where = p.hostOnly ? 'host-only, no stream' : `streams ${p.streams.join(', ')}`;
    lines.push(`  ${p.id}: ${p.operators.join(' -> ')} [${where}]`);
  }

  lines.push(`streams (${plan.streams.length}):`);
  for (const s of plan.streams) lines.push(`  ${s.id} on ${s.device.toString()}: ${s.partitions.join(', ')}`);

  lines.push(`operators (${plan.operators.length}):`);
  for (const o of plan.operators) {
    const placement = o.cudaActive ? `${o.device?.toString() ?? '?'} stream ${o.stream ?? '?'}` : 'host-only';
    lines.push(`  ${o.name} in ${o.partition}: ${placement}${o.schedule === null ? '' : `; ${scheduleText(o.schedule)}`}`);
  }

  lines.push(`edges (${plan.edges.length}):`);
  const fused = new Set(plan.fusedEdges.map((f) => f.edge));
  for (const e of plan.edges) {
    const admitted = e.admittedQueueDepth === e.queueDepth ? '' : `, admitted ${e.admittedQueueDepth}`;
    const policy = e.dropPolicy === 'block' ? '' : `, ${e.dropPolicy}`;
    const hostWait = (e.hostWait ? ', host wait before consumer' : '') + (e.crossDevice ? ', cross-device input' : '');
    lines.push(`  ${e.id}: queueDepth ${e.queueDepth} (${e.queueDepthSource}${admitted})${e.pool === null ? '' : `, pool ${e.pool}`}${fused.has(e.id) ? ', fused' : ''}${policy}${hostWait}`);
  }

  lines.push(`pools (${plan.pools.length}):`);
  for (const p of plan.pools) {
    lines.push(
      `  ${p.id}: ${p.memoryKind} on ${p.device.toString()}${p.provider === p.id ? '' : `, provider ${p.provider}`}, ${p.dtype.name}, maxRank ${p.maxRank}, ` +
        `${p.slotBytes} B x ${p.slotCount} slots = ${p.totalBytes} B, producer stream ${p.producerStream ?? 'none (host writer)'}, ` +
        `maxReleaseStreams ${p.maxReleaseStreams}, consumers ${p.consumers.length === 0 ? 'none' : p.consumers.join(', ')}`,
    );
    if (p.boundary !== null) {
      const b = p.boundary;
      lines.push(
        `    boundary of topic '${b.topic}': ${b.transport}, ${b.staging === 'direct' ? 'published in place' : 'pass-through tensors copied in'}, ` +
          `${b.fence === 'generation' ? 'generation fence on the producer stream' : 'host writer, no fence'}, subscriberQueueDepth ${b.subscriberQueueDepth}, maxSubscribers ${b.maxSubscribers}`,
      );
    }
    lines.push(`    ${p.derivation.text}`);
    if (p.activeSlotCount !== p.slotCount) lines.push(`    logical payload: ${p.activeLogicalBytes} B active, ${p.admittedLogicalBytes} B admitted`);
  }
  for (const d of plan.byteSpanDerivations) lines.push(`  byte span ${d.output.operator}.${d.output.port} = ${d.expression} = ${d.bytes} B`);

  lines.push(`topics (${plan.topics.length}):`);
  for (const t of plan.topics) {
    const port = `${t.port.operator}.${t.port.port}`;
    const what = t.direction === 'publish' ? `published by ${port}, pool ${t.pool ?? '?'}, subscriberQueueDepth ${t.queueDepth}, maxSubscribers ${t.maxSubscribers ?? '?'}` : `subscribed by ${port}, queueDepth ${t.queueDepth}${t.maxByteSpan === null ? '' : `, maxByteSpan ${t.maxByteSpan}`}`;
    lines.push(`  ${t.topic}: ${what}; ${t.memoryKind} on ${t.device.toString()} over ${t.transport}, stream ${t.stream ?? 'none (host-only)'} (${t.queueDepthSource})`);
  }

  lines.push(`diagnostics (${plan.diagnostics.length}):`);
  for (const d of plan.diagnostics) lines.push(`  ${d.severity} ${d.code}: ${d.message}`);
  return lines.join('\n');
}

/** `trigger input frames, required calibration, window imu 34, selector poses 2 (replay)`. */
function scheduleText(schedule: PlanSchedule): string {
  const trigger = schedule.trigger.kind === 'input' ? `trigger input ${schedule.trigger.port}` : `trigger clock ${schedule.trigger.rate.toString()}${schedule.trigger.missedTicks === 'catchUp' ? ' (catch up)' : ''}`;
  const scenario = (r: PlanRetention): string => (r.scenario === DEFAULT_SCENARIO ? '' : ` (${r.scenario})`);
  return [
    trigger,
    ...schedule.required.map((p) => `required ${p}`),
    ...schedule.windows.map((w) => `window ${w.port} ${w.entries}${scenario(w)}`),
    ...schedule.selectors.map((w) => `selector ${w.port} ${w.entries}${scenario(w)}`),
  ].join(', ');
}
