import { Device } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import type { ExecutionPlan, JsonValue } from '../src/index.js';
import { allOnCuda0, compileOk, cudaGraph } from './support/operators.js';

function forkPlan(): ExecutionPlan {
  const graph = cudaGraph('fork', ['a->b', 'a->c', 'c->d'], { 'a->c': 4 });
  return compileOk(graph, allOnCuda0(graph));
}

function keysSortedEverywhere(value: JsonValue): boolean {
  if (Array.isArray(value)) return value.every(keysSortedEverywhere);
  if (typeof value !== 'object' || value === null) return true;
  const keys = Object.keys(value);
  const sorted = [...keys].sort();
  return keys.every((k, i) => k === sorted[i]) && Object.values(value).every((v) => keysSortedEverywhere(v as JsonValue));
}

describe('ExecutionPlan rendering', () => {
  it('renders identical canonical JSON for two compiles of the same graph', () => {
    const first = JSON.stringify(forkPlan());
    const second = JSON.stringify(forkPlan());
    expect(first).toBe(second);
    const parsed = JSON.parse(first) as Record<string, unknown>;
    expect(parsed.schema).toBe('hs.execution-plan/1');
    expect(Object.keys(parsed)).toEqual([
      'accumulationHorizons',
      'byteSpanDerivations',
      'diagnostics',
      'edges',
      'fusedEdges',
      'hardFloorContributors',
      'name',
      'operators',
      'options',
      'params',
      'partitions',
      'poolCapacityDependencies',
      'pools',
      'portRates',
      'providerAllocationPlans',
      'queueSizingRecipes',
      'schema',
      'streams',
      'topics',
    ]);
  });

  it('does not depend on the order operators and flows were added', () => {
    const forward = cudaGraph('fork', ['a->b', 'a->c', 'c->d'], { 'a->c': 4 });
    const backward = cudaGraph('fork', ['c->d', 'a->c', 'a->b'], { 'a->c': 4 });
    expect(JSON.stringify(compileOk(backward, allOnCuda0(backward)))).toBe(JSON.stringify(compileOk(forward, allOnCuda0(forward))));
  });

  it('sorts keys at every level, writes devices and dtypes as strings and leaves out operator instances', () => {
    const json = forkPlan().toJSON();
    expect(keysSortedEverywhere(json)).toBe(true);
    const plan = json as { operators: Record<string, unknown>[]; pools: Record<string, unknown>[]; streams: Record<string, unknown>[]; options: unknown };
    expect(plan.operators[0]).not.toHaveProperty('operator');
    expect(plan.operators[0]).toMatchObject({ name: 'a', device: 'cuda:0', stream: 'stream:a@cuda:0' });
    expect(plan.pools[0]).toMatchObject({ id: 'pool:a.out', device: 'cuda:0', dtype: 'uint8', slotCount: 7 });
    expect(plan.streams[0]).toEqual({ device: 'cuda:0', id: 'stream:a@cuda:0', partitions: ['partition:a'] });
    expect(plan.options).toEqual({
      computeStreamPolicy: 'perPartition',
      defaultQueueDepth: 2,
      headroomRatio: { ratio: '2/1' },
      deployment: {
        bindOperatorDevice: { a: 'cuda:0', b: 'cuda:0', c: 'cuda:0', d: 'cuda:0' },
        bindTensorOutputDevice: { 'a.out': 'cuda:0', 'b.out': 'cuda:0', 'c.out': 'cuda:0', 'd.out': 'cuda:0' },
        bindTopicDevice: {},
      },
    });
  });

  it('summarizes partitions, streams, edges and pools in toText()', () => {
    const text = forkPlan().toText();
    expect(text).toContain('plan fork: computeStreamPolicy perPartition, defaultQueueDepth 2');
    expect(text).toContain('partition:c: c -> d [streams stream:c@cuda:0]');
    expect(text).toContain('stream:b@cuda:0 on cuda:0: partition:b');
    expect(text).toContain('a.out->b.in0: queueDepth 2 (default), pool pool:a.out');
    expect(text).toContain('a.out->c.in0: queueDepth 4 (explicit), pool pool:a.out');
    expect(text).toContain('pool:a.out: cudaDevice on cuda:0, uint8, maxRank 2, 1048576 B x 7 slots = 7340032 B');
    expect(text).toContain('slotCount = 4 (maxConsumerQueueDepth) + 1 (consumerInHand) + 1 (retirement) + 1 (producerLoan) = 7');
    expect(text).toMatch(/diagnostics \(2\):\n(  warning UNCONSUMED_POOL: .*\n?){2}$/);
  });
});

describe('ExecutionPlan immutability and lookups', () => {
  it('deep-freezes its records', () => {
    const plan = forkPlan();
    expect(Object.isFrozen(plan)).toBe(true);
    for (const value of [plan.operators, plan.operators[0], plan.operators[0]?.outputs[0], plan.edges[0], plan.partitions[0]?.operators]) {
      expect(Object.isFrozen(value)).toBe(true);
    }
    expect(Object.isFrozen(plan.pools[0]?.derivation.terms[0])).toBe(true);
    expect(Object.isFrozen(plan.options.deployment.bindOperatorDevice)).toBe(true);
    expect(() => {
      (plan.edges[0] as { queueDepth: number }).queueDepth = 99;
    }).toThrow(TypeError);
    expect(() => {
      (plan.pools as unknown[]).push({});
    }).toThrow(TypeError);
    expect(plan.edges[0]?.queueDepth).toBe(2);
  });

  it('keeps shared instances usable: operators, devices', () => {
    const graph = cudaGraph('chain', ['a->b']);
    const plan = compileOk(graph, allOnCuda0(graph));
    expect(plan.operator('a')?.operator).toBe(graph.operators[0]);
    expect(Object.isFrozen(graph.operators[0])).toBe(false);
    expect(plan.operator('a')?.device).toBe(Device.cuda(0));
  });

  it('looks records up by name and id', () => {
    const plan = forkPlan();
    expect(plan.operator('c')?.partition).toBe('partition:c');
    expect(plan.operator('missing')).toBeUndefined();
    expect(plan.edge('c.out->d.in0')?.queueDepth).toBe(2);
    expect(plan.edge('nope')).toBeUndefined();
    expect(plan.pool('pool:d.out')?.consumers).toEqual([]);
    expect(plan.pool('pool:zzz')).toBeUndefined();
  });
});
