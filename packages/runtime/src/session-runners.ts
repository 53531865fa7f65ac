import type { ExecutionPlan, PlanEdge } from '@hs/compiler';
import type { Backend } from '@hs/streams';
import type { Channel } from './channel.js';
import type { InputRequirement } from './input-binding.js';
import { OperatorRunner } from './operator-runner.js';
import type { RateViews } from './rate-views.js';
import type { ScenarioInputRead } from './scenario-input-reads.js';
import type { SessionResources } from './session-resources.js';

/** What `wireRunners` connects: a materialized plan and the per-session choices. */
export interface RunnerWiring {
  readonly plan: ExecutionPlan;
  readonly backend: Backend;
  readonly resources: SessionResources;
  /** `operator.port` -> the scenario's window or selector of that input. */
  readonly reads: ReadonlyMap<string, ScenarioInputRead>;
  /** Edges that run without fences (proven fused chains). */
  readonly fused: ReadonlySet<string>;
  readonly rateViews: RateViews;
  readonly scenario: string;
  /** Activations per latency sample (`RunSessionOptions.latencySampleInterval`). */
  readonly latencySampleInterval: number;
}

/**
 * One `OperatorRunner` per planned operator, in plan order, wired to its stream, channels, pools,
 * publications and rate views; and the producing runner of every channel. Linear in the plan's size:
 * edges are indexed by port and boundary pools by topic once.
 */
export function wireRunners({ plan, backend, resources, reads, fused, rateViews, scenario, latencySampleInterval }: RunnerWiring): { runners: OperatorRunner[]; producerOf: Map<Channel, OperatorRunner> } {
  const runners: OperatorRunner[] = [];
  const producerOf = new Map<Channel, OperatorRunner>();
  const requirementOf = (operator: string, port: string): InputRequirement => {
    const input = plan.operator(operator)?.inputs.find((i) => i.name === port);
    return { memoryKind: input?.memoryKind ?? null, dtype: input?.dtype ?? null, rank: input?.rank ?? null };
  };
  // Edges by consumer and producer port, boundary pools by topic: one pass each, so creation stays
  // linear in the graph's size.
  const edgeInto = new Map<string, PlanEdge>();
  const edgesOutOf = new Map<string, PlanEdge[]>();
  for (const e of plan.edges) {
    edgeInto.set(`${e.consumer.operator}.${e.consumer.port}`, e);
    const key = `${e.producer.operator}.${e.producer.port}`;
    const list = edgesOutOf.get(key);
    if (list === undefined) edgesOutOf.set(key, [e]);
    else list.push(e);
  }
  const boundaryOf = new Map(plan.pools.flatMap((p) => (p.boundary === null ? [] : [[p.boundary.topic, p] as const])));
  const runnerOf = new Map<string, OperatorRunner>();
  for (const planned of plan.operators) {
    const stream = planned.stream === null ? null : resources.streams.get(planned.stream) ?? null;
    const runner = new OperatorRunner(backend, planned, stream, {
      inputs: planned.inputs.map((input) => {
        const edge = edgeInto.get(`${planned.name}.${input.name}`);
        const imported = resources.imports.get(`${planned.name}.${input.name}`);
        return {
          name: input.name,
          channel: edge !== undefined ? resources.channels.get(edge.id)! : (imported?.channel ?? null),
          requirement: requirementOf(planned.name, input.name),
          fused: edge !== undefined && fused.has(edge.id),
          ...reads.get(`${planned.name}.${input.name}`),
        };
      }),
      outputs: planned.outputs.map((output) => {
        const edges = edgesOutOf.get(`${planned.name}.${output.name}`) ?? [];
        const boundary = output.topic === null ? undefined : boundaryOf.get(output.topic);
        return {
          name: output.name,
          channels: edges.map((e) => resources.channels.get(e.id)!),
          consumerRequirements: edges.map((e) => requirementOf(e.consumer.operator, e.consumer.port)),
          pool: output.pool === null ? null : resources.pools.get(output.pool)!,
          fused: edges.length === 1 && fused.has(edges[0]!.id),
          publication: boundary === undefined ? null : { boundary: resources.publications.get(boundary.id)!, staged: boundary.boundary?.staging === 'copy' },
        };
      }),
      rates: rateViews.portViews(planned.name, planned.inputs, planned.outputs),
      scenario,
      latencySampleInterval,
    });
    runners.push(runner);
    runnerOf.set(planned.name, runner);
  }
  for (const edge of plan.edges) {
    const producer = runnerOf.get(edge.producer.operator)!;
    producerOf.set(resources.channels.get(edge.id)!, producer);
  }
  return { runners, producerOf };
}
