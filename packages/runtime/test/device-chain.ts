import { Graph, compile, type ExecutionPlan } from '@hs/compiler';
import { Device, unwrap } from '@hs/streams';
import { AddOne, CollectSink, FillSource } from './test-operators.js';
import { bindDevices } from './deployment.js';

/**
 * source -> add -> sink with every operator on `Device.cuda(0)` (two cudaDevice pools: pool:source.frames,
 * pool:add.output), compiled; a fresh sink each call. The sink sees `(i + 2) & 0xff` for frame i.
 */
export function deviceChain(frames: number): { plan: ExecutionPlan; sink: CollectSink } {
  const cuda0 = Device.cuda(0);
  const graph = new Graph('bound');
  const sink = new CollectSink('sink');
  const source = graph.add(new FillSource('source', frames));
  const add = graph.add(new AddOne('add'));
  graph.addFlow(source.frames, add.input);
  graph.addFlow(add.output, graph.add(sink).input);
  const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: cuda0, add: cuda0, sink: cuda0 }) }));
  return { plan, sink };
}
