import type { TopicPublication, TopicSubscription } from '../authoring/external-topics.js';
import type { Graph, GraphFlow } from '../authoring/graph.js';
import type { Operator } from '../authoring/operator.js';
import type { OperatorSpec } from '../authoring/operator-spec.js';
import type { InputPort, OutputPort } from '../authoring/ports.js';
import { compareText } from './text-order.js';

/** A flow with its plan id (`producer.port->consumer.port`) and endpoints. */
export interface IndexedEdge {
  readonly id: string;
  readonly flow: GraphFlow;
  readonly producer: Operator;
  readonly consumer: Operator;
}

/**
 * Adjacency of an authored graph, built once per `compile()` for the compiler passes. Canonical:
 * operators sorted by name and edges by id (stable), so every pass, and therefore every diagnostic
 * and record, comes out the same whatever order the graph was built in.
 */
export interface GraphIndex {
  readonly name: string;
  /** Operators sorted by name (stable for repeated names). */
  readonly operators: readonly Operator[];
  readonly specs: ReadonlyMap<Operator, OperatorSpec>;
  /** Edges sorted by id (stable for repeated flows). */
  readonly edges: readonly IndexedEdge[];
  readonly outgoing: ReadonlyMap<Operator, readonly IndexedEdge[]>;
  readonly incoming: ReadonlyMap<Operator, readonly IndexedEdge[]>;
  readonly fromOutput: ReadonlyMap<OutputPort, readonly IndexedEdge[]>;
  readonly intoInput: ReadonlyMap<InputPort, readonly IndexedEdge[]>;
  /** `publish()` declarations sorted by topic (stable). */
  readonly publications: readonly TopicPublication[];
  /** `subscribe()` declarations sorted by topic (stable). */
  readonly subscriptions: readonly TopicSubscription[];
  /** Publications of each output. */
  readonly publicationsOf: ReadonlyMap<OutputPort, readonly TopicPublication[]>;
  /** Subscriptions feeding each input. */
  readonly subscriptionsOf: ReadonlyMap<InputPort, readonly TopicSubscription[]>;
}

/** Indexes `graph`'s operators, specs and flows. */
export function indexGraph(graph: Graph): GraphIndex {
  const specs = new Map<Operator, OperatorSpec>();
  const outgoing = new Map<Operator, IndexedEdge[]>();
  const incoming = new Map<Operator, IndexedEdge[]>();
  const operators = [...graph.operators].sort((a, b) => compareText(a.name, b.name));
  for (const op of operators) {
    specs.set(op, graph.specOf(op));
    outgoing.set(op, []);
    incoming.set(op, []);
  }
  const fromOutput = new Map<OutputPort, IndexedEdge[]>();
  const intoInput = new Map<InputPort, IndexedEdge[]>();
  const edges = graph.flows
    .map((flow): IndexedEdge => ({ id: `${flow.output.key}->${flow.input.key}`, flow, producer: flow.output.operator, consumer: flow.input.operator }))
    .sort((a, b) => compareText(a.id, b.id));
  for (const edge of edges) {
    const flow = edge.flow;
    outgoing.get(edge.producer)?.push(edge);
    incoming.get(edge.consumer)?.push(edge);
    appendTo(fromOutput, flow.output, edge);
    appendTo(intoInput, flow.input, edge);
  }
  const publications = [...graph.publications].sort((a, b) => compareText(a.topic, b.topic));
  const subscriptions = [...graph.subscriptions].sort((a, b) => compareText(a.topic, b.topic));
  const publicationsOf = new Map<OutputPort, TopicPublication[]>();
  const subscriptionsOf = new Map<InputPort, TopicSubscription[]>();
  for (const p of publications) appendTo(publicationsOf, p.output, p);
  for (const s of subscriptions) appendTo(subscriptionsOf, s.input, s);
  return { name: graph.name, operators, specs, edges, outgoing, incoming, fromOutput, intoInput, publications, subscriptions, publicationsOf, subscriptionsOf };
}

function appendTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}
