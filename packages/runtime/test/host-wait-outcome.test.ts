import { type ExecutionContext, Graph, type OperatorSpec, compile } from '@hs/compiler';
import { Device, ErrorCode, HostBackend, HsError, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { hostWaitOutcome } from '../src/host-wait-outcome.js';
import { RunSession } from '../src/index.js';
import { rejectionOf } from './rejection.js';
import { FRAME, FailingSink, FillSource } from './test-operators.js';
import { bindDevices } from './deployment.js';

const PLANTED = 'planted fault on the producer stream';

/** A FillSource whose second frame is written after a host function that throws on its stream. */
class FaultingSource extends FillSource {
  override compute(ctx: ExecutionContext): Result<void> {
    if (this.sent + 1 === 2) {
      unwrap(
        ctx.backend.launchHostFunc(ctx.cudaStream(), () => {
          throw new Error(PLANTED);
        }),
      );
    }
    return super.compute(ctx);
  }
}

/** A stream-less host consumer: the runtime waits on the producer's readiness on the host before compute(). */
class HostReader extends FailingSink {
  override setup(spec: OperatorSpec): void {
    this.input = spec.input('input', { memoryKind: MemoryKind.PinnedHost });
  }
  override compute(ctx: ExecutionContext): Result<void> {
    ctx.receive(this.input);
    this.seen += 1;
    return OK_VOID;
  }
}

function hostReaderPlan(frames: number) {
  const graph = new Graph('host-wait-fault');
  const source = graph.add(new FaultingSource('source', frames, MemoryKind.PinnedHost));
  const reader = graph.add(new HostReader('reader', 0));
  graph.addFlow(source.frames, reader.input);
  return { plan: unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0) }) })), reader };
}

describe('hostWaitOutcome: a rejecting host wait as the Result the scheduler passes on', () => {
  it('resolves with OK_VOID when the wait resolves', async () => {
    await expect(hostWaitOutcome(Promise.resolve())).resolves.toBe(OK_VOID);
  });

  it('keeps a rejected HsError as it is (same object: code, message and cause)', async () => {
    const cause = new Error('driver said no');
    const error = new HsError(ErrorCode.DeviceError, 'stream s faulted', { cause });
    const outcome = await hostWaitOutcome(Promise.reject(error));
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error).toBe(error);
      expect(outcome.error.message).toBe('DeviceError: stream s faulted');
      expect(outcome.error.cause).toBe(cause);
    }
  });

  it('wraps anything else in a DeviceError whose cause is the thrown value', async () => {
    const thrown = new TypeError('not an HsError');
    const outcome = await hostWaitOutcome(Promise.reject(thrown));
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error).toBeInstanceOf(HsError);
      expect(outcome.error.code).toBe(ErrorCode.DeviceError);
      expect(outcome.error.message).toBe('DeviceError: a host wait failed: not an HsError');
      expect(outcome.error.cause).toBe(thrown);
    }
  });
});

describe('host waits that reject fail the run with their HsError', () => {
  it("a stream-less consumer's readiness wait on a faulted producer fails the run with DeviceError", async () => {
    const backend = new HostBackend();
    const { plan, reader } = hostReaderPlan(4);
    expect(plan.operator('reader')?.stream).toBeNull();
    const session = unwrap(RunSession.create(plan, { backend }));
    const error = await rejectionOf(session.run());
    expect(error).toBeInstanceOf(HsError);
    expect(error.code).toBe(ErrorCode.DeviceError);
    expect(error.message).toContain(PLANTED);
    expect(reader.seen).toBeLessThan(4); // frame 2 and later never reached compute()
    session.dispose();
    backend.dispose();
  });

  it('a compute() whose await tensor.copyToHost() rejects fails the run with that DeviceError', async () => {
    class FaultingCopySink extends FailingSink {
      private readonly host = new Uint8Array(FRAME);
      override async compute(ctx: ExecutionContext): Promise<Result<void>> {
        const tensor = ctx.receive(this.input)!;
        unwrap(
          ctx.backend.launchHostFunc(ctx.cudaStream(), () => {
            throw new Error('planted fault before the copy');
          }),
        );
        await tensor.copyToHost(this.host, ctx.cudaStream());
        return OK_VOID;
      }
    }
    const backend = new HostBackend();
    const graph = new Graph('copy-fault');
    const source = graph.add(new FillSource('source', 3));
    graph.addFlow(source.frames, graph.add(new FaultingCopySink('sink', 0)).input);
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), sink: Device.cuda(0) }) }));
    const session = unwrap(RunSession.create(plan, { backend }));
    const error = await rejectionOf(session.run());
    expect(error).toBeInstanceOf(HsError);
    expect(error.code).toBe(ErrorCode.DeviceError);
    expect(error.message).toContain('planted fault before the copy');
    session.dispose();
    backend.dispose();
  });

  it("a tap's next() rejects with the readiness wait's DeviceError and closes the tap", async () => {
    const backend = new HostBackend();
    const { plan } = hostReaderPlan(4);
    const session = unwrap(RunSession.create(plan, { backend }));
    const tap = unwrap(session.tap('source', 'frames', { queueDepth: 4 }));
    const running = rejectionOf(session.run());
    const iterator = tap[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    await expect(iterator.next()).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.DeviceError, message: expect.stringContaining(PLANTED) });
    await expect(iterator.next()).resolves.toMatchObject({ done: true });
    expect((await running).code).toBe(ErrorCode.DeviceError);
    session.dispose();
    backend.dispose();
  });
});
