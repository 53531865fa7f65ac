import { Graph, compile } from '@hs/compiler';
import { CudaBackend, Device, MemoryKind, unwrap } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { RunSession } from '../src/index.js';
import { CollectSink, FillSource } from './test-operators.js';
import { HostFrameReader } from './host-frame-reader.js';

// The runtime's device-facing behaviours on a real GPU: the host wait before a stream-less consumer,
// and a drop policy enforced while device work is really in flight.
if (CudaBackend.available()) {
  describe('RunSession on CudaBackend', () => {
    it('a host-only consumer after a device producer reads the bytes the stream wrote (plan marks the host wait)', async () => {
      const backend = unwrap(CudaBackend.create());
      const graph = new Graph('host-wait-cuda');
      const source = graph.add(new FillSource('source', 64, MemoryKind.PinnedHost));
      const reader = graph.add(new HostFrameReader('reader'));
      graph.addFlow(source.frames, reader.input);
      const plan = unwrap(compile(graph, { deployment: { bindOperatorDevice: { source: Device.cuda(0) } } }));
      expect(plan.edge('source.frames->reader.input')?.hostWait).toBe(true);
      const session = unwrap(RunSession.create(plan, { backend }));
      const metrics = await session.run();
      session.dispose();
      backend.dispose();
      expect(reader.frames).toEqual(Array.from({ length: 64 }, (_, i) => (i + 1) & 0xff));
      expect(metrics.pools.map((p) => p.outstanding)).toEqual([0]);
    });

    it('dropNewest with a slow device consumer: every frame is delivered or counted as dropped, delivered ones in order', async () => {
      const backend = unwrap(CudaBackend.create());
      const graph = new Graph('drop-cuda');
      const source = graph.add(new FillSource('source', 200));
      const sink = graph.add(new CollectSink('sink', 1));
      graph.addFlow(source.frames, sink.input, { queueDepth: 2, dropPolicy: 'dropNewest' });
      const plan = unwrap(compile(graph, { deployment: { bindOperatorDevice: { source: Device.cuda(0), sink: Device.cuda(0) } } }));
      const session = unwrap(RunSession.create(plan, { backend }));
      const metrics = await session.run();
      session.dispose();
      backend.dispose();
      const edge = metrics.edges[0]!;
      expect(sink.firstBytes.length + edge.dropped).toBe(200);
      expect(sink.firstBytes).toEqual([...sink.firstBytes].sort((a, b) => a - b));
      console.log(`cuda dropNewest: delivered ${sink.firstBytes.length}, dropped ${edge.dropped}`);
    });
  });
} else {
  describe('RunSession on CudaBackend', () => {
    it.skip('needs a CUDA device and a built @hs/cuda-native (none here)', () => undefined);
  });
}
