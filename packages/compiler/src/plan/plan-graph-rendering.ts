import type { ExecutionPlanRecords } from './execution-plan.js';
import type { PlanEdge } from './plan-records.js';

/** One edge's label: ports, queue depth (active/admitted and source), pool geometry, fusion. */
function edgeLabel(plan: ExecutionPlanRecords, edge: PlanEdge, fused: ReadonlySet<string>): string[] {
  const lines = [`${edge.producer.port} -> ${edge.consumer.port}`];
  const admitted = edge.admittedQueueDepth === edge.queueDepth ? '' : `, admitted ${edge.admittedQueueDepth}`;
  lines.push(`queue ${edge.queueDepth} (${edge.queueDepthSource}${admitted})`);
  const pool = edge.pool === null ? undefined : plan.pools.find((p) => p.id === edge.pool);
  if (pool !== undefined) lines.push(`${pool.id}: ${pool.slotBytes} B x ${pool.slotCount} = ${pool.totalBytes} B`);
  if (fused.has(edge.id)) lines.push('fused (no fences)');
  return lines;
}

function partitionLabel(partition: ExecutionPlanRecords['partitions'][number]): string {
  return `${partition.id}: ${partition.hostOnly ? 'host-only' : partition.streams.join(', ')}`;
}

function dotText(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/**
 * The plan as a Graphviz DOT digraph: one cluster per execution partition (labelled with its streams),
 * operators with their device, edges with queue depths and pool sizes; fused edges drawn bold.
 * Deterministic. Spec: "One stream per active execution partition and device", "When the fences disappear".
 */
export function renderPlanDot(plan: ExecutionPlanRecords): string {
  const fused = new Set(plan.fusedEdges.map((f) => f.edge));
  const lines = [`digraph ${dotText(plan.name)} {`, '  rankdir=LR;', '  node [shape=box];'];
  plan.partitions.forEach((partition, i) => {
    lines.push(`  subgraph cluster_${i} {`, `    label=${dotText(partitionLabel(partition))};`);
    for (const name of partition.operators) {
      const op = plan.operators.find((o) => o.name === name);
      lines.push(`    ${dotText(name)} [label=${dotText(`${name}\n${op?.device?.toString() ?? 'host'}`)}];`);
    }
    lines.push('  }');
  });
  for (const edge of plan.edges) {
    const style = fused.has(edge.id) ? ', style=bold' : '';
    lines.push(`  ${dotText(edge.producer.operator)} -> ${dotText(edge.consumer.operator)} [label=${dotText(edgeLabel(plan, edge, fused).join('\n'))}${style}];`);
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
  return lines.join('\n');
}
