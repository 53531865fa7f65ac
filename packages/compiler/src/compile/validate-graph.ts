import type { Operator } from '../authoring/operator.js';
import { InputPort } from '../authoring/ports.js';
import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { GraphIndex, IndexedEdge } from './graph-index.js';
import { compareText } from './text-order.js';

/** Result of `validateGraphStructure()`. */
export interface GraphStructure {
  /** False when operator or port names repeat, which makes name-keyed bindings ambiguous. */
  readonly namesUnique: boolean;
  /** Operators in topological order (ties broken by name), or `null` when the flows form a cycle. */
  readonly order: readonly Operator[] | null;
}

/**
 * Checks the graph's structure: unique operator names, unique port names per operator, at most one
 * flow per input, a flow on every required input, and no cycle. The topological order breaks ties by
 * name, so it does not depend on the order operators were added.
 */
export function validateGraphStructure(index: GraphIndex, log: DiagnosticLog): GraphStructure {
  let namesUnique = true;
  const seenOperators = new Set<string>();
  for (const op of index.operators) {
    if (seenOperators.has(op.name)) {
      namesUnique = false;
      log.error(
        DiagnosticCode.DuplicateOperatorName,
        { kind: 'operator', operator: op.name },
        `graph '${index.name}' has more than one operator named '${op.name}'; give each operator a unique name`,
      );
    }
    seenOperators.add(op.name);
  }
  for (const op of index.operators) {
    const spec = index.specs.get(op);
    if (spec === undefined) continue;
    const seenPorts = new Set<string>();
    for (const port of [...spec.inputs, ...spec.outputs]) {
      if (seenPorts.has(port.name)) {
        namesUnique = false;
        log.error(
          DiagnosticCode.DuplicatePortName,
          { kind: 'port', operator: op.name, port: port.name },
          `operator '${op.name}' declares more than one port named '${port.name}' (inputs and outputs share one namespace); rename one in setup()`,
        );
      }
      seenPorts.add(port.name);
      if (!(port instanceof InputPort)) continue;
      const subscriptions = index.subscriptionsOf.get(port) ?? [];
      const sources = [...(index.intoInput.get(port) ?? []).map((e) => e.id), ...subscriptions.map((s) => `topic '${s.topic}'`)];
      if (sources.length > 1) {
        log.error(
          DiagnosticCode.InputFanIn,
          { kind: 'port', operator: op.name, port: port.name },
          `input ${port.key} has ${sources.length} ${subscriptions.length === 0 ? 'flows' : 'sources'} (${sources.join(', ')}); an input takes one flow or one topic subscription, ` +
            'so add one input per producer or merge the producers in an operator',
        );
      } else if (sources.length === 0 && !port.optional) {
        log.error(
          DiagnosticCode.UnconnectedRequiredInput,
          { kind: 'port', operator: op.name, port: port.name },
          `required input ${port.key} has no flow; connect it with graph.addFlow(producer.output, ${port.key}) or graph.subscribe(topic, ${port.key}), ` +
            `or declare it with spec.input('${port.name}', requirements, { optional: true })`,
        );
      }
    }
  }
  return { namesUnique, order: topologicalOrder(index, log) };
}

function topologicalOrder(index: GraphIndex, log: DiagnosticLog): readonly Operator[] | null {
  const pending = new Map<Operator, number>();
  for (const op of index.operators) pending.set(op, index.incoming.get(op)?.length ?? 0);
  const ready = index.operators.filter((op) => pending.get(op) === 0);
  const order: Operator[] = [];
  while (ready.length > 0) {
    ready.sort(byName);
    const op = ready.shift() as Operator;
    order.push(op);
    for (const edge of index.outgoing.get(op) ?? []) {
      const left = (pending.get(edge.consumer) ?? 0) - 1;
      pending.set(edge.consumer, left);
      if (left === 0) ready.push(edge.consumer);
    }
  }
  if (order.length === index.operators.length) return order;
  const cycle = findCycle(index, new Set(index.operators.filter((op) => (pending.get(op) ?? 0) > 0)));
  log.error(
    DiagnosticCode.GraphCycle,
    { kind: 'graph', graph: index.name },
    `graph '${index.name}' has a cycle: ${cycle.map((e) => e.id).join(', ')}; flows must form a directed acyclic graph, so remove one of these flows`,
  );
  return null;
}

/** Walks incoming edges among the operators Kahn's algorithm could not order until one repeats. */
function findCycle(index: GraphIndex, stuck: ReadonlySet<Operator>): IndexedEdge[] {
  const path: IndexedEdge[] = [];
  const visitedAt = new Map<Operator, number>();
  let op = [...stuck].sort(byName)[0] as Operator;
  while (!visitedAt.has(op)) {
    visitedAt.set(op, path.length);
    const edge = (index.incoming.get(op) ?? []).find((e) => stuck.has(e.producer)) as IndexedEdge;
    path.push(edge);
    op = edge.producer;
  }
  return path.slice(visitedAt.get(op)).reverse();
}

function byName(a: Operator, b: Operator): number {
  return compareText(a.name, b.name);
}
