import { Graph, compile, type ExecutionContext } from '@hs/compiler';
import { Device, ErrorCode, HsError, HostBackend, OK_VOID, type Result, unwrap } from '@hs/streams';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunSession } from '../src/index.js';
import { Scheduler } from '../src/scheduler.js';
import { CollectSink, FillSource } from './test-operators.js';
import { bindDevices } from './deployment.js';

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** A sink whose `start()`, `stop()` or every `compute()` never settles, as chosen; it records which hooks ran. */
class HangingSink extends CollectSink {
  readonly calls: string[] = [];
  constructor(private readonly hangs: 'start' | 'stop' | 'compute') {
    super('sink');
  }
  override start(): Promise<Result<void>> | Result<void> {
    this.calls.push('start');
    return this.hangs === 'start' ? never() : OK_VOID;
  }
  override stop(): Promise<Result<void>> | Result<void> {
    this.calls.push('stop');
    return this.hangs === 'stop' ? never() : OK_VOID;
  }
  override compute(ctx: ExecutionContext): Promise<Result<void>> {
    return this.hangs === 'compute' ? never() : super.compute(ctx);
  }
}

/** A source whose `stop()` records that it ran. */
class RecordingSource extends FillSource {
  stopped = false;
  override stop(): Result<void> {
    this.stopped = true;
    return OK_VOID;
  }
}

function session(hangs: 'start' | 'stop' | 'compute', frames = 4) {
  const backend = new HostBackend();
  const graph = new Graph(`hang-${hangs}`);
  const source = graph.add(new RecordingSource('source', frames));
  const sink = graph.add(new HangingSink(hangs));
  graph.addFlow(source.frames, sink.input, { queueDepth: 2 });
  return { backend, source, sink, session: unwrap(RunSession.create(unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) })), { backend })) };
}

async function rejection(promise: Promise<unknown>): Promise<HsError> {
  const outcome = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(outcome).toBeInstanceOf(HsError);
  return outcome as HsError;
}

// Spec-side contract: RunOptions.drainTimeoutMs bounds every wait of a run's end, the operators' hooks included.
describe('drain timeouts cover start(), stop() and a hung compute()', () => {
  afterEach(() => vi.restoreAllMocks());

  it('a start() that never settles fails the run with InvalidState naming the operator; the other stop() hooks still run, every slot returns', async () => {
    const { backend, source, sink, session: s } = session('start');
    const error = await rejection(s.run({ drainTimeoutMs: 30 }));
    expect(error.code).toBe(ErrorCode.InvalidState);
    expect(error.message).toContain('operator sink: start() did not settle within 30 ms (RunOptions.drainTimeoutMs)');
    expect(source.stopped).toBe(true);
    expect(sink.calls).toEqual(['start', 'stop']);
    expect(s.metrics().pools.map((p) => p.outstanding)).toEqual([0]);
    s.dispose();
    backend.dispose();
  });

  it('a stop() that never settles fails an otherwise complete run with InvalidState naming the operator', async () => {
    const { backend, sink, session: s } = session('stop');
    const error = await rejection(s.run({ drainTimeoutMs: 30 }));
    expect(error.code).toBe(ErrorCode.InvalidState);
    expect(error.message).toContain('operator sink: stop() did not settle within 30 ms');
    expect(sink.firstBytes).toEqual([1, 2, 3, 4]);
    s.dispose();
    backend.dispose();
  });

  it('a compute() that never settles is reported at the drain bound after stop(): the slots are not waited for a second time', async () => {
    const drains = vi.spyOn(Scheduler.prototype, 'drainSlots');
    const { backend, session: s } = session('compute', 1_000_000);
    const running = rejection(s.run({ drainTimeoutMs: 30 }));
    await new Promise((r) => setTimeout(r, 5));
    const stopped = s.stop();
    const error = await running;
    await stopped;
    expect(error.code).toBe(ErrorCode.InvalidState);
    expect(error.message).toMatch(/the graph did not drain within 30 ms of the stop request \(operators still active: .*sink/);
    expect(drains.mock.calls).toEqual([[0]]);
    s.dispose();
    backend.dispose();
  });
});
