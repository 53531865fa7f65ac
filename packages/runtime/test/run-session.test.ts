import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, Rate, compile } from '@hs/compiler';
import { type Backend, Device, ErrorCode, HostBackend, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { DType } from '@hs/tensor';
import { RunSession, formatMetrics } from '../src/index.js';
import { DeviceClockSource, MS, operator, runOnClock } from './clock-operators.js';
import { AddOne, CollectSink, FailingSink, FillSource } from './test-operators.js';
import { rejectionOf } from './rejection.js';
import { bindDevices } from './deployment.js';

function onCuda0(graph: Graph): ReturnType<typeof compile> {
  const bind: Record<string, Device> = {};
  for (const op of graph.operators) bind[op.name] = Device.cuda(0);
  return compile(graph, { deployment: bindDevices(graph, bind) });
}

function chain(frames: number, sinks: CollectSink[], queueDepth = 2): Graph {
  const graph = new Graph('chain');
  const source = graph.add(new FillSource('source', frames));
  const add = graph.add(new AddOne('add'));
  graph.addFlow(source.frames, add.input, { queueDepth });
  for (const sink of sinks) graph.addFlow(add.output, graph.add(sink).input, { queueDepth });
  return graph;
}

const expected = (frames: number): number[] => Array.from({ length: frames }, (_, i) => (i + 2) & 0xff);

describe('RunSession', () => {
  it('runs a linear chain in order, every frame ordered on the consumer streams, and returns every slot', async () => {
    const backend = new HostBackend({ orderingChecker: true, seed: 7 });
    const sink = new CollectSink('sink');
    const plan = unwrap(onCuda0(chain(20, [sink])));
    const session = unwrap(RunSession.create(plan, { backend }));
    const metrics = await session.run();
    expect(sink.firstBytes).toEqual(expected(20));
    expect(metrics.frames).toBe(20);
    expect(metrics.operators.find((o) => o.name === 'sink')?.activations).toBe(20);
    for (const pool of metrics.pools) expect(pool.highWater).toBeLessThanOrEqual(pool.slotCount);
    expect(backend.orderingChecker?.violations).toEqual([]);
    expect(formatMetrics(metrics)).toContain('frames: 20');
    session.dispose();
    backend.dispose();
  });

  it('fans out to three consumers with different speeds; each sees every frame', async () => {
    const backend = new HostBackend({ orderingChecker: true });
    const sinks = [new CollectSink('fast'), new CollectSink('slow', 2), new CollectSink('medium', 1)];
    const plan = unwrap(onCuda0(chain(12, sinks, 1)));
    const session = unwrap(RunSession.create(plan, { backend }));
    const metrics = await session.run();
    for (const sink of sinks) expect(sink.firstBytes).toEqual(expected(12));
    for (const edge of metrics.edges) expect(edge.highWater).toBeLessThanOrEqual(edge.queueDepth);
    expect(metrics.pools.every((p) => p.exhaustions === 0)).toBe(true);
    expect(backend.orderingChecker?.violations).toEqual([]);
    session.dispose();
    backend.dispose();
  });

  it('orders a kernel on another partition stream behind the producer (the ordering checker stays silent)', async () => {
    const backend = new HostBackend({ orderingChecker: true, seed: 3 });
    const graph = new Graph('fork');
    const source = graph.add(new FillSource('source', 16));
    const sinks = [new CollectSink('left-sink'), new CollectSink('right-sink')];
    for (const [i, sink] of sinks.entries()) {
      const add = graph.add(new AddOne(i === 0 ? 'left' : 'right'));
      graph.addFlow(source.frames, add.input);
      graph.addFlow(add.output, graph.add(sink).input);
    }
    const plan = unwrap(onCuda0(graph));
    expect(new Set(plan.operators.map((o) => o.stream)).size).toBe(3);
    const session = unwrap(RunSession.create(plan, { backend }));
    await session.run();
    for (const sink of sinks) expect(sink.firstBytes).toEqual(expected(16));
    expect(backend.orderingChecker?.violations).toEqual([]);
    session.dispose();
    backend.dispose();
  });

  /** A consumer reading each device frame on its stream. */
  class DeviceReader extends Operator {
    input!: InputPort;
    received = 0;
    setup(spec: OperatorSpec): void {
      this.input = spec.input('input', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
    }
    compute(ctx: ExecutionContext): Result<void> {
      const tensor = ctx.receive(this.input)!;
      this.received += 1;
      return ctx.backend.launchKernel(ctx.cudaStream(), { name: 'test.read', reads: [tensor.data()], writes: [], params: [], host: () => {} });
    }
  }

  it('with queue room but every slot held by a consumer release stream in flight, the source gets ResourceExhausted, counts it, and its next tick runs on time', async () => {
    const backend = new HostBackend({ scheduling: 'manual' });
    const graph = new Graph('exhaustion');
    const source = graph.add(new DeviceClockSource('source', Rate.hz(1000), 10));
    // Two readers (a fan-out: each on its own stream, nothing fused), each releasing on its stream.
    const reader = graph.add(new DeviceReader('reader'));
    const second = graph.add(new DeviceReader('second'));
    graph.addFlow(source.out, reader.input, { queueDepth: 4 });
    graph.addFlow(source.out, second.input, { queueDepth: 4 });
    const cuda0 = { source: Device.cuda(0), reader: Device.cuda(0), second: Device.cuda(0) };
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, cuda0) }));
    expect(plan.fusedEdges).toEqual([]);
    expect(plan.pool('pool:source.out')?.slotCount).toBe(7);
    // The reader's device work (and so each release event) runs only when the backend is stepped: after tick 10.
    const metrics = await runOnClock(plan, {
      backend,
      step: (now) => {
        if (now >= 10n * MS) backend.runUntilIdle();
      },
    });
    expect(source.at).toEqual(Array.from({ length: 13 }, (_, i) => BigInt(i + 1) * MS));
    expect(source.exhausted).toBe(3);
    expect(metrics.pools.find((p) => p.id === 'pool:source.out')?.exhaustions).toBe(3);
    expect(operator(metrics, 'source').skippedTicks).toBe(0);
    for (const edge of metrics.edges) expect(edge.highWater).toBe(1); // the queues always had room
    expect([reader.received, second.received]).toEqual([10, 10]);
    backend.dispose();
  });

  it('reports an operator failure by name and leaves the session disposable', async () => {
    const graph = new Graph('failing');
    const source = graph.add(new FillSource('source', 50));
    const sink = graph.add(new FailingSink('sink', 3));
    graph.addFlow(source.frames, sink.input);
    const session = unwrap(RunSession.create(unwrap(onCuda0(graph)), { backend: 'host' }));
    const outcome = await rejectionOf(session.run());
        expect(outcome.code).toBe(ErrorCode.ProtocolError);
    expect(outcome.message).toContain('operator sink');
    expect(outcome.message).toContain('planted failure');
    expect(source.sent).toBeLessThan(50);
    session.dispose();
  });

  it('stop() drains the graph and returns every slot; a second run is refused', async () => {
    const sink = new CollectSink('sink', 1);
    const plan = unwrap(onCuda0(chain(1_000_000, [sink])));
    const session = unwrap(RunSession.create(plan, { backend: 'host' }));
    const running = session.run();
    // Stop once frames flow (not after a fixed delay: a loaded machine may take longer to start).
    while (sink.firstBytes.length === 0) await new Promise((r) => setTimeout(r, 5));
    await session.stop();
    const metrics = await running;
    expect(metrics.frames).toBeGreaterThan(0);
    expect(metrics.frames).toBeLessThan(1_000_000);
    // Every emitted frame reached the sink: stop drains instead of dropping.
    expect(sink.firstBytes.length).toBe(metrics.frames);
    const again = await rejectionOf(session.run());
    expect(again.code).toBe(ErrorCode.InvalidState);
    session.dispose();
  });

  it('an aborted signal stops the run', async () => {
    const sink = new CollectSink('sink');
    const session = unwrap(RunSession.create(unwrap(onCuda0(chain(1_000_000, [sink]))), { backend: 'host' }));
    const metrics = await session.run({ signal: AbortSignal.timeout(20) });
    expect(metrics.frames).toBeLessThan(1_000_000);
    expect(sink.firstBytes.length).toBe(metrics.frames);
    session.dispose();
  });

  it('cudaStream() after compute() returned is a typed InvalidState error', async () => {
    let saved: ExecutionContext | undefined;
    class Leaky extends FillSource {
      override compute(ctx: ExecutionContext): Result<void> {
        saved = ctx;
        return super.compute(ctx);
      }
    }
    const graph = new Graph('leaky');
    const source = graph.add(new Leaky('source', 1));
    graph.addFlow(source.frames, graph.add(new CollectSink('sink')).input);
    const session = unwrap(RunSession.create(unwrap(onCuda0(graph)), { backend: 'host' }));
    await session.run();
    expect(() => saved!.cudaStream()).toThrowError(expect.objectContaining({ code: ErrorCode.InvalidState }));
    session.dispose();
  });

  it('host-only consumers get the producer readiness waited on the host before compute()', async () => {
    const backend = new HostBackend({ orderingChecker: true });
    const seen: number[] = [];
    class HostReader extends FailingSink {
      override setup(spec: OperatorSpec): void {
        this.input = spec.input('input', { memoryKind: MemoryKind.PinnedHost });
      }
      override compute(ctx: ExecutionContext): Result<void> {
        const tensor = ctx.receive(this.input)!;
        const view = unwrap(tensor.hostView());
        // Every byte of the frame, not only the first: the host wait covered the whole fill.
        seen.push(view.every((b) => b === view[0]) ? view[0]! : -1);
        return OK_VOID;
      }
    }
    const graph = new Graph('host-reader');
    const source = graph.add(new FillSource('source', 6, MemoryKind.PinnedHost));
    graph.addFlow(source.frames, graph.add(new HostReader('reader', 0)).input);
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0) }) }));
    expect(plan.operator('reader')?.stream).toBeNull();
    expect(plan.edge('source.frames->reader.input')?.hostWait).toBe(true);
    expect(plan.toText()).toContain('source.frames->reader.input: queueDepth');
    expect(plan.toText()).toMatch(/source\.frames->reader\.input: .*host wait before consumer/);
    const session = unwrap(RunSession.create(plan, { backend }));
    await session.run();
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    expect(backend.orderingChecker?.violations).toEqual([]);
    session.dispose();
    backend.dispose();
  });

  it('a pool that cannot be materialized fails create() and leaves nothing allocated', () => {
    const backend = new HostBackend();
    const live = new Set<number>();
    let allocations = 0;
    const failing: Backend = Object.create(backend) as Backend;
    Object.assign(failing, {
      allocate: (request: Parameters<Backend['allocate']>[0]) => {
        allocations += 1;
        if (allocations === 2) return { ok: false, error: { code: ErrorCode.DeviceError, message: 'planted' } };
        const made = backend.allocate(request);
        if (made.ok) live.add(made.value.id);
        return made;
      },
      free: (memory: Parameters<Backend['free']>[0]) => {
        live.delete(memory.id);
        return backend.free(memory);
      },
    });
    const plan = unwrap(onCuda0(chain(1, [new CollectSink('sink')])));
    const created = RunSession.create(plan, { backend: failing });
    expect(created.ok).toBe(false);
    if (!created.ok) expect(created.error.message).toContain('cannot materialize pool');
    expect(live.size).toBe(0);
    backend.dispose();
  });
});

