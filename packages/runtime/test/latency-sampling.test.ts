import { Graph, compile } from '@hs/compiler';
import { Device, ErrorCode, HostBackend, HsError, unwrap } from '@hs/streams';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, RunSession, type RunMetrics } from '../src/index.js';
import { CountSink, FillSource } from './test-operators.js';
import { bindDevices } from './deployment.js';

const FRAMES = 256;

/**
 * Runs source -> sink for FRAMES frames on a manual session clock (so `process.hrtime` is read only by
 * the latency clock and the backend), counting the `process.hrtime()` reads the run makes.
 */
async function runCounted(latencySampleInterval: number | undefined): Promise<{ metrics: RunMetrics; hrtimeReads: number; received: number }> {
  const backend = new HostBackend();
  const graph = new Graph('sampled');
  const source = graph.add(new FillSource('source', FRAMES));
  const sink = graph.add(new CountSink('sink'));
  graph.addFlow(source.frames, sink.input);
  const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) }));
  const session = unwrap(RunSession.create(plan, { backend, clock: new ManualClock(), latencySampleInterval }));
  const hrtime = vi.spyOn(process, 'hrtime');
  try {
    const metrics = await session.run();
    return { metrics, hrtimeReads: hrtime.mock.calls.length, received: sink.received };
  } finally {
    hrtime.mockRestore();
    session.dispose();
    backend.dispose();
  }
}

describe('latencySampleInterval', () => {
  afterEach(() => vi.restoreAllMocks());

  it('times every activation by default, and one in N with N > 1, while activations count every one', async () => {
    const exact = await runCounted(undefined);
    const sampled = await runCounted(32);
    for (const run of [exact, sampled]) {
      expect(run.received).toBe(FRAMES);
      const sink = run.metrics.operators.find((o) => o.name === 'sink')!;
      expect(sink.activations).toBe(FRAMES);
      expect(sink.latencyMeanMs).toBeGreaterThan(0);
      expect(sink.latencyMaxMs).toBeGreaterThanOrEqual(sink.latencyP99Ms);
    }
    // Default: at least one latency-clock read per activation (source and sink, FRAMES each).
    expect(exact.hrtimeReads).toBeGreaterThanOrEqual(2 * FRAMES);
    // One in 32: two reads per 32 activations of each operator, plus what each turn reads.
    expect(sampled.hrtimeReads * 4).toBeLessThan(exact.hrtimeReads);
  });

  it('refuses an interval that is not a positive whole number with InvalidArgument, before anything is made', () => {
    const graph = new Graph('bad-interval');
    const source = graph.add(new FillSource('source', 1));
    graph.addFlow(source.frames, graph.add(new CountSink('sink')).input);
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) }));
    for (const bad of [0, -1, 1.5, Number.NaN, Infinity]) {
      const created = RunSession.create(plan, { backend: 'host', latencySampleInterval: bad });
      expect(created.ok).toBe(false);
      if (!created.ok) {
        expect(created.error.code).toBe(ErrorCode.InvalidArgument);
        expect(created.error.message).toContain('latencySampleInterval');
      }
    }
    // A string that looks like a number is named as the string it is, not printed as if it were the number.
    const text = RunSession.create(plan, { backend: 'host', latencySampleInterval: '64' as never });
    expect(text.ok).toBe(false);
    if (!text.ok) expect(text.error.message).toContain('latencySampleInterval "64" (a string)');
  });

  it('refuses misspelt session and run options instead of applying their defaults', async () => {
    const graph = new Graph('misspelt-options');
    const source = graph.add(new FillSource('source', 1));
    graph.addFlow(source.frames, graph.add(new CountSink('sink')).input);
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) }));
    const created = RunSession.create(plan, { backend: 'host', latencySampleIntervall: 64 } as never);
    expect(created.ok).toBe(false);
    if (!created.ok) {
      expect(created.error.code).toBe(ErrorCode.InvalidArgument);
      expect(created.error.message).toContain("RunSession.create: unknown option 'latencySampleIntervall'; did you mean 'latencySampleInterval'?");
    }
    const session = unwrap(RunSession.create(plan, { backend: 'host' }));
    const refused = await session.run({ drainTimeout: 10 } as never).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(HsError);
    expect((refused as HsError).message).toContain("RunSession.run: unknown option 'drainTimeout'; did you mean 'drainTimeoutMs'?");
    // Nothing ran: the session still runs once with good options.
    const metrics = await session.run();
    expect(metrics.operators.find((o) => o.name === 'sink')?.activations).toBe(1);
    session.dispose();
  });

  it('refuses with a typed error a compile() Result passed as the plan, options that are not an object and a null backend', () => {
    const graph = new Graph('not-a-plan');
    const source = graph.add(new FillSource('source', 1));
    graph.addFlow(source.frames, graph.add(new CountSink('sink')).input);
    const compiled = compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) });
    expect(() => RunSession.create(compiled as never, { backend: 'host' })).toThrow(
      new HsError(ErrorCode.InvalidArgument, 'RunSession.create: plan must be the ExecutionPlan compile() gives (unwrap its Result), not an object without operators'),
    );
    expect(() => RunSession.create(null as never)).toThrow('RunSession.create: plan must be the ExecutionPlan compile() gives (unwrap its Result), not null');
    const plan = unwrap(compiled);
    const noOptions = RunSession.create(plan, null as never);
    expect(noOptions.ok ? '' : noOptions.error.message).toBe('InvalidArgument: RunSession.create: options must be an object, not null');
    const noBackend = RunSession.create(plan, { backend: null as never });
    expect(noBackend.ok ? '' : noBackend.error.message).toBe("InvalidArgument: RunSessionOptions.backend must be a Backend, 'host' or 'cuda', not null");
  });
});
