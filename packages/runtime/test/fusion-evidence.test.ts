import { type FusedEdgeRecord, Graph, compile } from '@hs/compiler';
import { Device, unwrap } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { provenFusedEdges } from '../src/fusion-evidence.js';
import { AddOne, CollectSink, FillSource } from './test-operators.js';
import { bindDevices } from './deployment.js';

function chainPlan() {
  const graph = new Graph('evidence');
  const source = graph.add(new FillSource('source', 1));
  const add = graph.add(new AddOne('add'));
  graph.addFlow(source.frames, add.input);
  graph.addFlow(add.output, graph.add(new CollectSink('sink')).input);
  return unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), add: Device.cuda(0), sink: Device.cuda(0) }) }));
}

describe('fusion evidence re-validation', () => {
  it('accepts the compiler’s evidence', () => {
    expect([...provenFusedEdges(chainPlan())].sort()).toEqual(['add.output->sink.input', 'source.frames->add.input']);
  });

  it('refuses evidence that does not match the plan: another stream, another pool, a second successor, not process-local', () => {
    const plan = chainPlan();
    const real = plan.fusedEdges[0] as FusedEdgeRecord;
    const forged = (change: Omit<Partial<FusedEdgeRecord>, 'evidence'> & { evidence?: Partial<FusedEdgeRecord['evidence']> }): FusedEdgeRecord => ({
      ...real,
      ...change,
      evidence: { ...real.evidence, ...change.evidence },
    });
    const check = (record: FusedEdgeRecord) =>
      provenFusedEdges({ fusedEdges: [record], edge: (id) => plan.edge(id), pool: (id) => plan.pool(id), operator: (name) => plan.operator(name) });
    expect(check(real).size).toBe(1);
    expect(check(forged({ stream: 'stream:other@cuda:0' })).size).toBe(0);
    expect(check(forged({ pool: 'pool:source.frames' })).size).toBe(0);
    expect(check(forged({ evidence: { acceptedSuccessors: 2 } })).size).toBe(0);
    expect(check(forged({ evidence: { processLocal: false } })).size).toBe(0);
  });
});
