import type { ExecutionPlanRecords } from './execution-plan.js';
import type { PlanEdge } from './plan-records.js';

/** One edge's label: ports, queue depth (active/admitted and source), pool geometry, fusion, a non-blocking drop policy, a host wait. */
function edgeLabel(plan: ExecutionPlanRecords, edge: PlanEdge, fused: ReadonlySet<string>): string[] {
  const lines = [`${edge.producer.port} -> ${edge.consumer.port}`];
  const admitted = edge.admittedQueueDepth === edge.queueDepth ? '' : `, admitted ${edge.admittedQueueDepth}`;
  lines.push(`queue ${edge.queueDepth} (${edge.queueDepthSource}${admitted})`);
  const pool = edge.pool === null ? undefined : plan.pools.find((p) => p.id === edge.pool);
  if (pool !== undefined) lines.push(`${pool.id}: ${pool.slotBytes} B x ${pool.slotCount} = ${pool.totalBytes} B`);
  if (fused.has(edge.id)) lines.push('fused (no fences)');
  if (edge.dropPolicy !== 'block') lines.push(`drop policy ${edge.dropPolicy}`);
  if (edge.hostWait) lines.push('host wait before consumer');
  if (edge.crossDevice) lines.push('cross-device input');
  return lines;
}

/** One topic endpoint's label: port, queue depth, boundary pool geometry. */
function topicLabel(plan: ExecutionPlanRecords, topic: ExecutionPlanRecords['topics'][number]): string[] {
  const lines = [`${topic.port.port}: ${topic.direction}`, `queue ${topic.queueDepth} (${topic.queueDepthSource})`];
  const pool = topic.pool === null ? undefined : plan.pools.find((p) => p.id === topic.pool);
  if (pool !== undefined) lines.push(`${pool.id}: ${pool.slotBytes} B x ${pool.slotCount} = ${pool.totalBytes} B`);
  return lines;
}

function partitionLabel(partition: ExecutionPlanRecords['partitions'][number]): string {
  return `${partition.id}: ${partition.hostOnly ? 'host-only' : partition.streams.join(', ')}`;
}

function dotText(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** A pool node's label: id, memory kind and device, geometry, then the slot-count derivation one clause a line. */
function poolLabel(pool: ExecutionPlanRecords['pools'][number]): string {
  return [
    pool.id,
    `${pool.memoryKind} on ${pool.device.toString()}, ${pool.dtype.name}`,
    `${pool.slotBytes} B x ${pool.slotCount} = ${pool.totalBytes} B`,
    // One clause a line, each summed slot-count term on its own line.
    ...pool.derivation.text.split('; ').flatMap((clause) => clause.split(' + ').map((part, i) => (i === 0 ? part : `+ ${part}`))),
  ].join('\n');
}

/**
 * The plan as a Graphviz DOT digraph: one cluster per execution partition (labelled with its streams),
 * operators with their device and stream, edges with queue depths, pool sizes, non-blocking drop
 * policies and host waits; fused edges drawn bold; one note per pool (geometry and slot-count
 * derivation) tied to its producer by a dashed line. Deterministic.
 * Spec: "One stream per active execution partition and device", "When the fences disappear", "Sized cold, borrowed hot".
 */
export function renderPlanDot(plan: ExecutionPlanRecords): string {
  const fused = new Set(plan.fusedEdges.map((f) => f.edge));
  const lines = [`digraph ${dotText(plan.name)} {`, '  rankdir=LR;', '  node [shape=box];'];
  plan.partitions.forEach((partition, i) => {
    lines.push(`  subgraph cluster_${i} {`, `    label=${dotText(partitionLabel(partition))};`);
    for (const name of partition.operators) {
      const op = plan.operators.find((o) => o.name === name);
      const placement = `${op?.device?.toString() ?? 'host'}\n${op?.stream ?? 'host-only'}`;
      lines.push(`    ${dotText(name)} [label=${dotText(`${name}\n${placement}`)}];`);
    }
    lines.push('  }');
  });
  for (const pool of plan.pools) {
    lines.push(`  ${dotText(pool.id)} [shape=note, label=${dotText(poolLabel(pool))}];`);
    lines.push(`  ${dotText(pool.producer.operator)} -> ${dotText(pool.id)} [style=dashed, arrowhead=none];`);
  }
  for (const edge of plan.edges) {
    const style = fused.has(edge.id) ? ', style=bold' : '';
    lines.push(`  ${dotText(edge.producer.operator)} -> ${dotText(edge.consumer.operator)} [label=${dotText(edgeLabel(plan, edge, fused).join('\n'))}${style}];`);
  }
  for (const topic of plan.topics) {
    const node = dotText(`topic:${topic.topic}`);
    lines.push(`  ${node} [shape=cds, label=${dotText(`topic ${topic.topic}\n${topic.memoryKind} over ${topic.transport}`)}];`);
    const label = dotText(topicLabel(plan, topic).join('\n'));
    if (topic.direction === 'publish') lines.push(`  ${dotText(topic.port.operator)} -> ${node} [label=${label}, style=dashed];`);
    else lines.push(`  ${node} -> ${dotText(topic.port.operator)} [label=${label}, style=dashed];`);
  }
  lines.push('}');
  return lines.join('\n');
}

function mermaidText(text: string): string {
  return `"${text.replace(/"/g, '#quot;')}"`;
}

/**
 * The plan as a Mermaid flowchart: one subgraph per execution partition (with its streams), operators,
 * edges with queue depths and pool sizes; fused edges drawn as thick links. Deterministic.
 */
export function renderPlanMermaid(plan: ExecutionPlanRecords): string {
  const fused = new Set(plan.fusedEdges.map((f) => f.edge));
  const nodeId = new Map(plan.operators.map((o, i) => [o.name, `op${i}`]));
  const lines = ['flowchart LR'];
  plan.partitions.forEach((partition, i) => {
    lines.push(`  subgraph part${i}[${mermaidText(partitionLabel(partition))}]`);
    for (const name of partition.operators) {
      const op = plan.operators.find((o) => o.name === name);
      lines.push(`    ${nodeId.get(name) ?? name}[${mermaidText(`${name} (${op?.device?.toString() ?? 'host'})`)}]`);
    }
    lines.push('  end');
  });
  for (const edge of plan.edges) {
    const label = mermaidText(edgeLabel(plan, edge, fused).join('<br/>'));
    const link = fused.has(edge.id) ? `==${label}==>` : `--${label}-->`;
    lines.push(`  ${nodeId.get(edge.producer.operator) ?? ''} ${link} ${nodeId.get(edge.consumer.operator) ?? ''}`);
  }
  const topicIds = new Map<string, string>();
  for (const topic of plan.topics) {
    let id = topicIds.get(topic.topic);
    if (id === undefined) {
      id = `topic${topicIds.size}`;
      topicIds.set(topic.topic, id);
      lines.push(`  ${id}{{${mermaidText(`topic ${topic.topic} (${topic.memoryKind} over ${topic.transport})`)}}}`);
    }
    const label = mermaidText(topicLabel(plan, topic).join('<br/>'));
    const op = nodeId.get(topic.port.operator) ?? '';
    lines.push(topic.direction === 'publish' ? `  ${op} -.${label}.-> ${id}` : `  ${id} -.${label}.-> ${op}`);
  }
  return lines.join('\n');
}
