import { Graph, compile } from '@hs/compiler';
import { Device, unwrap } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { RunSession } from '../src/index.js';
import { CountSink, FillSource } from './test-operators.js';
import { bindDevices } from './deployment.js';

/** source -> sink on one device (a proven fused edge: a released slot needs no release event to retire). */
function chain(frames: number): { plan: ReturnType<typeof compile>; sink: CountSink } {
  const graph = new Graph('turns');
  const source = graph.add(new FillSource('source', frames));
  const sink = graph.add(new CountSink('sink'));
  graph.addFlow(source.frames, sink.input);
  return { plan: compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) }), sink };
}

describe('scheduler turns', () => {
  it('lends a producer a slot whose leases came back during the turn instead of an exhausted activation', async () => {
    const frames = 500;
    const { plan, sink } = chain(frames);
    const session = unwrap(RunSession.create(unwrap(plan), { backend: 'host' }));
    const metrics = await session.run();
    session.dispose();
    expect(sink.received).toBe(frames);
    const source = metrics.operators.find((o) => o.name === 'source')!;
    // Every source activation produced a frame: none was spent on an empty pool whose slots were only retiring.
    expect(source.activations).toBe(frames);
    expect(metrics.pools.map((p) => p.exhaustions)).toEqual([0]);
  });

  it('yields to the event loop within a turn budget: a timer armed by the first frame aborts an endless chain', async () => {
    const { plan, sink } = chain(Number.MAX_SAFE_INTEGER);
    const session = unwrap(RunSession.create(unwrap(plan), { backend: 'host' }));
    const controller = new AbortController();
    let receivedWhenTimerRan = -1;
    // Only a turn that ends lets this timer run; the run never ends on its own.
    const poll = setInterval(() => {
      if (sink.received === 0) return;
      clearInterval(poll);
      receivedWhenTimerRan = sink.received;
      controller.abort();
    }, 1);
    const metrics = await session.run({ signal: controller.signal });
    session.dispose();
    expect(receivedWhenTimerRan).toBeGreaterThan(0);
    expect(sink.received).toBeGreaterThanOrEqual(receivedWhenTimerRan);
    expect(metrics.operators.find((o) => o.name === 'sink')!.activations).toBe(sink.received);
  });
});
