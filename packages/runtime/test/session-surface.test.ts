import { Device, ErrorCode, HostBackend, HsError, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, compile } from '@hs/compiler';
import { describe, expect, it } from 'vitest';
import { MAX_TAP_QUEUE_DEPTH, type RunMetrics, RunSession } from '../src/index.js';
import { FRAME, FillSource } from './test-operators.js';
import { rejectionOf } from './rejection.js';
import { bindDevices } from './deployment.js';

/** A host-only reader of pinned frames: records each frame's first byte. */
class HostCounter extends Operator {
  input!: InputPort;
  readonly firstBytes: number[] = [];
  setup(spec: OperatorSpec): void {
    this.input = spec.input('input', { memoryKind: MemoryKind.PinnedHost });
  }
  compute(ctx: ExecutionContext): Result<void> {
    this.firstBytes.push(unwrap(ctx.receive(this.input)!.hostView())[0]!);
    return OK_VOID;
  }
}

function pinnedSource(frames: number, withSink: boolean): { plan: ReturnType<typeof compile>; sink: HostCounter | null } {
  const graph = new Graph('surface');
  const source = graph.add(new FillSource('source', frames, MemoryKind.PinnedHost));
  let sink: HostCounter | null = null;
  if (withSink) {
    sink = graph.add(new HostCounter('sink'));
    graph.addFlow(source.frames, sink.input);
  }
  return { plan: compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0) }) }), sink };
}

describe('for await over an operator output', () => {
  it('yields every frame in order, ready for the host, while the graph runs on', async () => {
    const backend = new HostBackend({ orderingChecker: true, seed: 5 });
    const { plan, sink } = pinnedSource(12, true);
    const session = unwrap(RunSession.create(unwrap(plan), { backend }));
    const tap = unwrap(session.tap('source', 'frames', { queueDepth: 2 }));
    const running = session.run();
    const seen: number[] = [];
    for await (const tensor of tap) {
      const view = unwrap(tensor.hostView());
      expect(view.length).toBe(FRAME);
      seen.push(view.every((b) => b === view[0]) ? view[0]! : -1);
    }
    const metrics = await running;
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(sink?.firstBytes).toHaveLength(12);
    for (const pool of metrics.pools) expect(pool.outstanding).toBe(0);
    expect(backend.orderingChecker?.violations).toEqual([]);
    session.dispose();
    backend.dispose();
  });

  it('breaking out returns every slot the loop held, and the graph finishes without the tap', async () => {
    const { plan, sink } = pinnedSource(30, true);
    const session = unwrap(RunSession.create(unwrap(plan), { backend: 'host' }));
    const tap = unwrap(session.tap('source', 'frames', { queueDepth: 2 }));
    const running = session.run();
    let taken = 0;
    for await (const _tensor of tap) {
      taken += 1;
      if (taken === 3) break;
    }
    const metrics = await running;
    expect(taken).toBe(3);
    expect(sink?.firstBytes).toHaveLength(30);
    for (const pool of metrics.pools) expect(pool.outstanding).toBe(0);
    session.dispose();
  });

  it('a throw inside the loop returns every slot too', async () => {
    const { plan } = pinnedSource(10, false);
    const session = unwrap(RunSession.create(unwrap(plan), { backend: 'host' }));
    const tap = unwrap(session.tap('source', 'frames', { queueDepth: 3 }));
    const running = session.run();
    await expect(
      (async () => {
        for await (const _tensor of tap) throw new Error('consumer failed');
      })(),
    ).rejects.toThrow('consumer failed');
    const metrics = await running;
    expect(metrics.pools[0]?.outstanding).toBe(0);
    session.dispose();
  });

  it('refuses a tap on an unknown output, a bad depth, or once the session ran', async () => {
    const { plan } = pinnedSource(2, false);
    const session = unwrap(RunSession.create(unwrap(plan), { backend: 'host' }));
    const unknown = session.tap('source', 'nope');
    expect(unknown.ok ? null : unknown.error.code).toBe(ErrorCode.NotFound);
    const depth = session.tap('source', 'frames', { queueDepth: 0 });
    expect(depth.ok ? null : depth.error.code).toBe(ErrorCode.InvalidArgument);
    await session.run();
    const late = session.tap('source', 'frames');
    expect(late.ok ? null : late.error.code).toBe(ErrorCode.InvalidState);
    session.dispose();
  });

  it('a second concurrent loop over one tap gets InvalidState; the first reads every frame', async () => {
    const { plan } = pinnedSource(8, false);
    const session = unwrap(RunSession.create(unwrap(plan), { backend: 'host' }));
    const tap = unwrap(session.tap('source', 'frames', { queueDepth: 2 }));
    const running = session.run();
    const first = (async () => {
      let taken = 0;
      for await (const _tensor of tap) taken += 1;
      return taken;
    })();
    let second: unknown = null;
    try {
      for await (const _tensor of tap) break;
    } catch (e) {
      second = e;
    }
    expect(second).toBeInstanceOf(HsError);
    expect((second as HsError).code).toBe(ErrorCode.InvalidState);
    expect(await first).toBe(8);
    expect((await running).pools[0]?.outstanding).toBe(0);
    session.dispose();
  });

  it('an unread tap holds its producer back until stop(); then drainTimeoutMs bounds the run', async () => {
    const { plan } = pinnedSource(1_000, false);
    const session = unwrap(RunSession.create(unwrap(plan), { backend: 'host' }));
    unwrap(session.tap('source', 'frames', { queueDepth: 2 }));
    const running = session.run({ drainTimeoutMs: 50 });
    const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
    while (session.metrics().frames < 2) await turn();
    for (let i = 0; i < 50; i++) await turn();
    expect(session.metrics().frames).toBe(2); // the tap's queue is full: backpressure, like any consumer
    await session.stop();
    expect((await rejectionOf(running)).code).toBe(ErrorCode.InvalidState);
    session.dispose();
  });

  it('checks queueDepth against MAX_TAP_QUEUE_DEPTH and the names before allocating the queue', async () => {
    const { plan } = pinnedSource(2, false);
    const session = unwrap(RunSession.create(unwrap(plan), { backend: 'host' }));
    // Allocated first, 1e9 entries aborted Node (heap) and 2 ** 32 threw a raw RangeError.
    for (const queueDepth of [1e9, 2 ** 32, MAX_TAP_QUEUE_DEPTH + 1, 1.5, Number.NaN, '2' as unknown as number]) {
      const tapped = session.tap('source', 'frames', { queueDepth });
      expect(tapped.ok ? null : tapped.error.code).toBe(ErrorCode.InvalidArgument);
    }
    const unknownOperator = session.tap('nobody', 'frames', { queueDepth: MAX_TAP_QUEUE_DEPTH });
    expect(unknownOperator.ok ? null : unknownOperator.error.code).toBe(ErrorCode.NotFound);
    const largest = session.tap('source', 'frames', { queueDepth: MAX_TAP_QUEUE_DEPTH });
    const running = session.run();
    let taken = 0;
    for await (const _tensor of unwrap(largest)) taken += 1;
    await running;
    expect(taken).toBe(2);
    session.dispose();
  });
});

describe('session events and disposal', () => {
  it("emits 'metrics' at the configured interval and once at the end; off() unsubscribes", async () => {
    const { plan } = pinnedSource(40, true);
    const session = unwrap(RunSession.create(unwrap(plan), { backend: 'host', metricsIntervalMs: 1 }));
    const snapshots: RunMetrics[] = [];
    const unused = (): void => {
      throw new Error('removed listener was called');
    };
    session.on('metrics', (m) => snapshots.push(m)).on('metrics', unused).off('metrics', unused);
    const metrics = await session.run();
    expect(snapshots.length).toBeGreaterThanOrEqual(1);
    expect(snapshots.at(-1)?.frames).toBe(metrics.frames);
    session.dispose();
  });

  it("a throwing 'metrics' listener stops the run with InvalidState instead of crashing the process", async () => {
    const uncaught: unknown[] = [];
    const record = (e: unknown): void => void uncaught.push(e);
    process.on('uncaughtException', record);
    try {
      for (const frames of [1_000_000, 3]) { // the timer's emission mid-run, and the final one
        const { plan } = pinnedSource(frames, false);
        const session = unwrap(RunSession.create(unwrap(plan), { backend: 'host', metricsIntervalMs: 1 }));
        session.on('metrics', () => {
          throw new Error('listener broke');
        });
        const outcome = await rejectionOf(session.run());
        expect(outcome.code).toBe(ErrorCode.InvalidState);
        expect(outcome.message).toContain('listener broke');
        expect(session.metrics().pools[0]?.outstanding).toBe(0);
        session.dispose();
      }
      await new Promise((r) => setTimeout(r, 5));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', record);
    }
  });

  it("refuses an unknown event name or a listener that is not a function", () => {
    const { plan } = pinnedSource(1, false);
    const session = unwrap(RunSession.create(unwrap(plan), { backend: 'host' }));
    expect(() => session.on('bogus' as 'metrics', () => undefined)).toThrow(HsError);
    expect(() => session.on('metrics', 'nope' as unknown as () => void)).toThrow('must be a function');
    session.dispose();
  });

  it('rejects a metrics interval that is not a positive finite number, or longer than a Node timer takes', () => {
    const { plan } = pinnedSource(1, false);
    for (const metricsIntervalMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const created = RunSession.create(unwrap(plan), { backend: 'host', metricsIntervalMs });
      expect(created.ok ? null : created.error.code).toBe(ErrorCode.InvalidArgument);
    }
    // Node would warn and fire such an interval every millisecond.
    const tooLong = RunSession.create(unwrap(plan), { backend: 'host', metricsIntervalMs: 2 ** 31 });
    expect(tooLong.ok ? null : tooLong.error.message).toBe('InvalidArgument: metricsIntervalMs 2147483648 is not a positive finite number of milliseconds up to 2147483647 (the longest Node timer)');
  });

  it('rejects run options that are not an object, a signal that is not an AbortSignal or a bad drainTimeoutMs; the session still runs once', async () => {
    const { plan } = pinnedSource(3, false);
    const session = unwrap(RunSession.create(unwrap(plan), { backend: 'host' }));
    const bad: [unknown, string][] = [
      [null, 'InvalidArgument: RunSession.run: options must be an object, not null'],
      [{ signal: 5 }, 'InvalidArgument: RunSession.run: signal 5 is not an AbortSignal'],
      [{ drainTimeoutMs: -1 }, 'InvalidArgument: RunSession.run: drainTimeoutMs -1 is not a finite number of milliseconds from 0 to 2147483647 (the longest Node timer)'],
      [{ drainTimeoutMs: Number.NaN }, 'InvalidArgument: RunSession.run: drainTimeoutMs NaN is not a finite number of milliseconds from 0 to 2147483647 (the longest Node timer)'],
      [{ drainTimeoutMs: 2 ** 31 }, 'InvalidArgument: RunSession.run: drainTimeoutMs 2147483648 is not a finite number of milliseconds from 0 to 2147483647 (the longest Node timer)'],
      [{ drainTimeoutMs: '10' }, 'InvalidArgument: RunSession.run: drainTimeoutMs "10" (a string) is not a finite number of milliseconds from 0 to 2147483647 (the longest Node timer)'],
    ];
    for (const [options, message] of bad) {
      const refused = await rejectionOf(session.run(options as never)); // a rejection, not a throw
      expect(refused.message).toBe(message);
    }
    // Nothing ran: the session was not left running, so it runs with good options and disposes.
    const metrics = await session.run({ drainTimeoutMs: 0 });
    expect(metrics.frames).toBe(3);
    session.dispose();
  });

  it('await using stops a run in progress and disposes the session', async () => {
    const { plan } = pinnedSource(1_000_000, false);
    let running: Promise<unknown> | null = null;
    let session: RunSession | null = null;
    {
      await using scoped = unwrap(RunSession.create(unwrap(plan), { backend: 'host' }));
      session = scoped;
      running = scoped.run();
      await new Promise((r) => setTimeout(r, 5));
    }
    await expect(running).resolves.toMatchObject({ frames: expect.any(Number) });
    const again = await rejectionOf(session.run());
    expect(again.message).toContain('disposed');
  });
});
