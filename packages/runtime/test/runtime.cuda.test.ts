import { Graph, compile } from '@hs/compiler';
import { AsyncFromSync, MallocResource, StatisticsResource } from '@hs/nanovdb-mr';
import { CudaBackend, Device, ErrorCode, MemoryKind, unwrap } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { DeviceCopy, RunSession } from '../src/index.js';
import { DType } from '@hs/tensor';
import { CollectSink, FRAME, FillSource } from './test-operators.js';
import { HostFrameReader } from './host-frame-reader.js';
import { bindDevices } from './deployment.js';

// The runtime's device-facing behaviours on a real GPU: the host wait before a stream-less consumer,
// a drop policy enforced while device work is really in flight, and graph pools on a device without
// memory pools (forced with CudaBackend.create({ memoryPools: false })) through AsyncFromSync(MallocResource).
if (CudaBackend.available()) {
  describe('RunSession on CudaBackend', () => {
    it('a host-only consumer after a device producer reads the bytes the stream wrote (plan marks the host wait)', async () => {
      const backend = unwrap(CudaBackend.create());
      const graph = new Graph('host-wait-cuda');
      const source = graph.add(new FillSource('source', 64, MemoryKind.PinnedHost));
      const reader = graph.add(new HostFrameReader('reader'));
      graph.addFlow(source.frames, reader.input);
      const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0) }) }));
      expect(plan.edge('source.frames->reader.input')?.hostWait).toBe(true);
      const session = unwrap(RunSession.create(plan, { backend }));
      const metrics = await session.run();
      session.dispose();
      backend.dispose();
      expect(reader.frames).toEqual(Array.from({ length: 64 }, (_, i) => (i + 1) & 0xff));
      expect(metrics.pools.map((p) => p.outstanding)).toEqual([0]);
    });

    it('a DeviceCopy copies every frame on the GPU (cuda:0 -> cuda:1 with two devices, else cuda:0 -> cuda:0), every slot back', async () => {
      const backend = unwrap(CudaBackend.create());
      const to = backend.devices.length > 1 ? Device.cuda(1) : Device.cuda(0);
      const graph = new Graph('device-copy-cuda');
      const source = graph.add(new FillSource('source', 32));
      const copy = graph.add(new DeviceCopy('copy', { dtype: DType.uint8, rank: 1, maxByteSpan: FRAME }));
      const sink = graph.add(new CollectSink('sink'));
      graph.addFlow(source.frames, copy.input);
      graph.addFlow(copy.output, sink.input);
      const deployment = { ...bindDevices(graph, { source: Device.cuda(0), sink: to }), bindTensorOutputDevice: { 'source.frames': Device.cuda(0), 'copy.output': to } };
      const session = unwrap(RunSession.create(unwrap(compile(graph, { deployment })), { backend }));
      const metrics = await session.run();
      session.dispose();
      const path = to === Device.cuda(0) ? 'sameDevice' : backend.peerCopy?.canAccessPeer(to, Device.cuda(0)) === true ? 'peer' : 'staged';
      backend.dispose();
      expect(sink.firstBytes).toEqual(Array.from({ length: 32 }, (_, i) => (i + 1) & 0xff));
      expect(metrics.pools.map((p) => p.outstanding)).toEqual([0, 0]);
      console.log(`cuda DeviceCopy cuda:0 -> ${to.toString()}: ${path}`);
    });

    it('dropNewest with a slow device consumer: every frame is delivered or counted as dropped, delivered ones in order', async () => {
      const backend = unwrap(CudaBackend.create());
      const graph = new Graph('drop-cuda');
      const source = graph.add(new FillSource('source', 200));
      const sink = graph.add(new CollectSink('sink', 1));
      graph.addFlow(source.frames, sink.input, { queueDepth: 2, dropPolicy: 'dropNewest' });
      const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) }));
      const session = unwrap(RunSession.create(plan, { backend }));
      const metrics = await session.run();
      session.dispose();
      backend.dispose();
      const edge = metrics.edges[0]!;
      expect(sink.firstBytes.length + edge.dropped).toBe(200);
      expect(sink.firstBytes).toEqual([...sink.firstBytes].sort((a, b) => a - b));
      console.log(`cuda dropNewest: delivered ${sink.firstBytes.length}, dropped ${edge.dropped}`);
    });

    it('memoryPools: false: the default cudaDevice resource is refused, AsyncFromSync(MallocResource) runs the graph, every block returned', async () => {
      const backend = unwrap(CudaBackend.create({ memoryPools: false }));
      // source -> sink on cuda:0: one cudaDevice pool, filled with memsets on the source's stream.
      const chain = () => {
        const graph = new Graph('pool-less-cuda');
        const source = graph.add(new FillSource('source', 64));
        const sink = graph.add(new CollectSink('sink'));
        graph.addFlow(source.frames, sink.input);
        return { plan: unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) })), sink };
      };
      const refused = RunSession.create(chain().plan, { backend });
      expect(refused.ok).toBe(false);
      if (!refused.ok) {
        expect(refused.error.code).toBe(ErrorCode.NotSupported);
        expect(refused.error.message).toContain('memoryKinds.cudaDevice');
      }
      const malloc = new StatisticsResource(new MallocResource(backend, Device.cuda(0)));
      const { plan, sink } = chain();
      const session = unwrap(RunSession.create(plan, { backend, resources: { memoryKinds: { cudaDevice: new AsyncFromSync(backend, malloc) } } }));
      expect(malloc.statistics.allocations.current).toBe(1);
      await session.run();
      session.dispose();
      // AsyncFromSync frees once the stream has passed the stream-ordered free; poll for it (at most 5 s).
      for (let waited = 0; malloc.statistics.allocations.current > 0 && waited < 5000; waited += 10) await new Promise((r) => setTimeout(r, 10));
      expect(malloc.statistics.allocations.current).toBe(0);
      backend.dispose();
      expect(sink.firstBytes).toEqual(Array.from({ length: 64 }, (_, i) => (i + 1) & 0xff));
      console.log(`cuda memoryPools=false: ${sink.firstBytes.length} frames through AsyncFromSync(MallocResource), ${malloc.statistics.bytes.total} bytes in ${malloc.statistics.allocations.total} allocations, 0 outstanding`);
    });
  });
} else {
  describe('RunSession on CudaBackend', () => {
    it.skip('needs a CUDA device and a built @hs/cuda-native (none here)', () => undefined);
  });
}
