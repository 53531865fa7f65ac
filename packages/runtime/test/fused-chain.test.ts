import { Graph, compile } from '@hs/compiler';
import { TensorPool } from '@hs/pool';
import { type Backend, Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it, vi } from 'vitest';
import { RunSession } from '../src/index.js';
import { AddOne, CollectSink, FRAME, FillSource } from './test-operators.js';
import { bindDevices } from './deployment.js';

const FRAMES = 24;

function linearChain(sink: CollectSink): Graph {
  const graph = new Graph('fused');
  const source = graph.add(new FillSource('source', FRAMES));
  const add = graph.add(new AddOne('add'));
  graph.addFlow(source.frames, add.input);
  graph.addFlow(add.output, graph.add(sink).input);
  return graph;
}

/** Counts the fence calls (event records, stream waits, batched release-event polls) a run makes. */
function countFenceCalls(backend: Backend): () => number {
  const spies = [vi.spyOn(backend, 'recordEvent'), vi.spyOn(backend, 'streamWaitEvent'), vi.spyOn(backend, 'queryEvents')];
  return () => spies.reduce((sum, s) => sum + s.mock.calls.length, 0);
}

async function runChain(fullFences: boolean): Promise<{ perFrame: number; firstBytes: number[]; violations: number }> {
  const backend = new HostBackend({ orderingChecker: true, seed: 11 });
  const sink = new CollectSink('sink');
  const graph = linearChain(sink);
  const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), add: Device.cuda(0), sink: Device.cuda(0) }) }));
  expect(plan.fusedEdges.map((f) => f.edge)).toEqual(['add.output->sink.input', 'source.frames->add.input']);
  const session = unwrap(RunSession.create(plan, { backend, fullFences }));
  const calls = countFenceCalls(backend);
  await session.run();
  const perFrame = calls() / FRAMES;
  const violations = backend.orderingChecker?.violations.length ?? -1;
  session.dispose();
  backend.dispose();
  return { perFrame, firstBytes: sink.firstBytes, violations };
}

describe('fused linear chains', () => {
  it('makes fewer fence calls per frame than the same chain with full fences, with the same outputs and no ordering violation', async () => {
    const fused = await runChain(false);
    const fenced = await runChain(true);
    expect(fused.firstBytes).toEqual(Array.from({ length: FRAMES }, (_, i) => (i + 2) & 0xff));
    expect(fused.firstBytes).toEqual(fenced.firstBytes);
    expect(fused.perFrame).toBeLessThan(fenced.perFrame);
    expect(fused.violations).toBe(0);
    expect(fenced.violations).toBe(0);
  });

  it('records the retained readiness event lazily for a stream the plan did not prove or host access, and the checker catches a planted elision bug', async () => {
    const backend = new HostBackend({ orderingChecker: true, seed: 3 });
    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
    const other = unwrap(backend.createStream(Device.cuda(0), { label: 'unproven reader' }));
    const pool = unwrap(
      TensorPool.materialize(backend, {
        name: 'fused-pool',
        memoryKind: MemoryKind.CudaDevice,
        device: Device.cuda(0),
        slotCount: 4,
        slotByteSpan: FRAME,
        maxRank: 1,
        producerStream: producer,
      }),
    );
    const publishDeferred = () => {
      const loan = unwrap(pool.allocateTensor({ shape: [FRAME], dtype: DType.uint8 }));
      unwrap(loan.deferReadiness());
      const guard = unwrap(loan.write(producer));
      unwrap(backend.memsetAsync(producer, guard.range, 7));
      unwrap(guard.commit());
      return unwrap(loan.emit());
    };
    const read = (tensor: ReturnType<typeof publishDeferred>) =>
      unwrap(backend.launchKernel(other, { name: 'test.read', reads: [tensor.data()], writes: [], params: [], host: () => {} }));

    const planted = publishDeferred();
    expect(planted.readinessDeferred).toBe(true);
    read(planted); // the bug: an unproven stream reads as if the edge were fused
    expect(backend.orderingChecker?.violations.length).toBeGreaterThan(0);
    backend.orderingChecker?.clear();

    const correct = publishDeferred();
    const recorded = vi.spyOn(backend, 'recordEvent');
    const readiness = unwrap(correct.readinessFor(other));
    expect(recorded).toHaveBeenCalledTimes(1);
    expect(correct.readinessDeferred).toBe(false);
    unwrap(backend.streamWaitEvent(other, readiness!));
    read(correct);
    expect(unwrap(correct.readinessFor(producer))).toBe(readiness);
    expect(backend.orderingChecker?.violations).toEqual([]);

    const hostRead = publishDeferred();
    expect(hostRead.readinessDeferred).toBe(true);
    await hostRead.synchronizeForHost();
    expect(hostRead.readinessDeferred).toBe(false);
    expect(recorded).toHaveBeenCalledTimes(2);
    pool.dispose();
    backend.dispose();
  });
});
