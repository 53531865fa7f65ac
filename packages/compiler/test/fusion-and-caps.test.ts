import { MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { Graph, type InputPort, type OutputPort } from '../src/index.js';
import { ScriptedOperator, allOnCuda0, compileOk, cudaGraph } from './support/operators.js';

describe('proven linear chains', () => {
  it('fuses every edge of a linear chain on one stream and records the evidence', () => {
    const graph = cudaGraph('chain', ['a->b', 'b->c']);
    const plan = compileOk(graph, allOnCuda0(graph));
    expect(plan.fusedEdges).toEqual([
      {
        edge: 'a.out->b.in0',
        pool: 'pool:a.out',
        stream: 'stream:a@cuda:0',
        evidence: { acceptedSuccessors: 1, processLocal: true, producerStream: 'stream:a@cuda:0', consumerStream: 'stream:a@cuda:0' },
      },
      expect.objectContaining({ edge: 'b.out->c.in0' }),
    ]);
  });

  it('gives a fan-out no fusion, and stops fusion at partition boundaries unless the shared policy makes the streams equal', () => {
    const fork = cudaGraph('fork', ['a->b', 'a->c', 'c->d']);
    expect(compileOk(fork, allOnCuda0(fork)).fusedEdges.map((f) => f.edge)).toEqual(['c.out->d.in0']);
    const join = cudaGraph('join', ['x->z', 'y->z']);
    expect(compileOk(join, allOnCuda0(join)).fusedEdges).toEqual([]);
    const shared = compileOk(join, allOnCuda0(join, { computeStreamPolicy: 'sharedProcessDevice' }));
    expect(shared.fusedEdges.map((f) => [f.edge, f.stream])).toEqual([
      ['x.out->z.in0', 'stream:shared@cuda:0'],
      ['y.out->z.in1', 'stream:shared@cuda:0'],
    ]);
  });

  it('gives a host-written pool read by host operators a release-stream cap of 1', () => {
    const graph = new Graph('host');
    let out: OutputPort | null = null;
    let input: InputPort | null = null;
    graph.add(
      new ScriptedOperator('src', (spec) => {
        out = spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 }, bounds: { maxByteSpan: 64 }, storage: 'runtimePool' });
      }),
    );
    graph.add(new ScriptedOperator('dst', (spec) => (input = spec.input('in'))));
    graph.addFlow(out as unknown as OutputPort, input as unknown as InputPort);
    const plan = compileOk(graph);
    expect(plan.pool('pool:src.out')?.releaseStreamCap).toMatchObject({ domain: null, cap: 1 });
    expect(plan.fusedEdges).toEqual([]);
  });
});

describe('plan pictures', () => {
  it('draws partitions, streams, fused edges and pool sizes in DOT and Mermaid', () => {
    const graph = cudaGraph('fork', ['a->b', 'a->c', 'c->d']);
    const plan = compileOk(graph, allOnCuda0(graph));
    const dot = plan.toDot();
    expect(dot).toContain('digraph "fork" {');
    expect(dot).toContain('label="partition:c: stream:c@cuda:0";');
    expect(dot).toContain('"c" -> "d" [label="out -> in0\\nqueue 2 (default)\\npool:c.out: 1048576 B x 5 = 5242880 B\\nfused (no fences)", style=bold];');
    expect(dot).toContain('"a" -> "b" [label="out -> in0\\nqueue 2 (default)\\npool:a.out: 1048576 B x 5 = 5242880 B"];');
    const mermaid = plan.toMermaid();
    expect(mermaid.split('\n')[0]).toBe('flowchart LR');
    expect(mermaid).toContain('subgraph part2["partition:c: stream:c@cuda:0"]');
    expect(mermaid).toContain('op2 =="out -> in0<br/>queue 2 (default)<br/>pool:c.out: 1048576 B x 5 = 5242880 B<br/>fused (no fences)"==> op3');
    expect(mermaid).toContain('op0 --"out -> in0<br/>queue 2 (default)<br/>pool:a.out: 1048576 B x 5 = 5242880 B"--> op1');
  });

  it('draws each operator with its device and stream, and each pool as a note with its slot-count derivation', () => {
    const graph = cudaGraph('fork', ['a->b', 'a->c', 'c->d']);
    const plan = compileOk(graph, allOnCuda0(graph));
    const dot = plan.toDot();
    expect(dot).toContain('"c" [label="c\\ncuda:0\\nstream:c@cuda:0"];');
    expect(dot).toContain(
      '"pool:c.out" [shape=note, label="pool:c.out\\ncudaDevice on cuda:0, uint8\\n1048576 B x 5 = 5242880 B\\n' +
        'slotCount = 2 (maxConsumerQueueDepth)\\n+ 1 (consumerInHand)\\n+ 1 (retirement)\\n+ 1 (producerLoan) = 5\\n' +
        'slotBytes = 1048576 B rounded up to 256 B = 1048576 B"];',
    );
    expect(dot).toContain('"c" -> "pool:c.out" [style=dashed, arrowhead=none];');
    expect(dot.match(/shape=note/g)).toHaveLength(plan.pools.length);
  });
});
