import type { Graph, GraphFlow } from '../authoring/graph.js';
import type { Operator } from '../authoring/operator.js';
import type { OperatorSpec } from '../authoring/operator-spec.js';
import type { InputPort, OutputPort } from '../authoring/ports.js';

/** A flow with its plan id (`producer.port->consumer.port`) and endpoints. */
export interface IndexedEdge {
  readonly id: string;
  readonly flow: GraphFlow;
  readonly producer: Operator;
  readonly consumer: Operator;
}

/** Adjacency of an authored graph, built once per `compile()` for the compiler passes. */
export interface GraphIndex {
  readonly name: string;
  /** Operators in insertion order. */
  readonly operators: readonly Operator[];
  readonly specs: ReadonlyMap<Operator, OperatorSpec>;
  /** Edges in flow order. */
  readonly edges: readonly IndexedEdge[];
  readonly outgoing: ReadonlyMap<Operator, readonly IndexedEdge[]>;
  readonly incoming: ReadonlyMap<Operator, readonly IndexedEdge[]>;
  readonly fromOutput: ReadonlyMap<OutputPort, readonly IndexedEdge[]>;
  readonly intoInput: ReadonlyMap<InputPort, readonly IndexedEdge[]>;
}

/** Indexes `graph`'s operators, specs and flows. */
export function indexGraph(graph: Graph): GraphIndex {
  const specs = new Map<Operator, OperatorSpec>();
  const outgoing = new Map<Operator, IndexedEdge[]>();
  const incoming = new Map<Operator, IndexedEdge[]>();
  for (const op of graph.operators) {
    specs.set(op, graph.specOf(op));
    outgoing.set(op, []);
    incoming.set(op, []);
  }
  const fromOutput = new Map<OutputPort, IndexedEdge[]>();
  const intoInput = new Map<InputPort, IndexedEdge[]>();
  const edges = graph.flows.map((flow): IndexedEdge => {
    const edge = {
      id: `${flow.output.key}->${flow.input.key}`,
      flow,
      producer: flow.output.operator,
      consumer: flow.input.operator,
    };
    outgoing.get(edge.producer)?.push(edge);
    incoming.get(edge.consumer)?.push(edge);
    appendTo(fromOutput, flow.output, edge);
    appendTo(intoInput, flow.input, edge);
    return edge;
  });
  return { name: graph.name, operators: graph.operators, specs, edges, outgoing, incoming, fromOutput, intoInput };
}

function appendTo<K>(map: Map<K, IndexedEdge[]>, key: K, edge: IndexedEdge): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [edge]);
  else list.push(edge);
}
