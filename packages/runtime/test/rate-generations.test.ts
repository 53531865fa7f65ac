import {
  type ExecutionContext,
  Graph,
  type InputPort,
  Operator,
  type OperatorSpec,
  type OutputPort,
  type PortRateView,
  Rate,
  compile,
  paramSchema,
  rateParam,
  renderRateQueueInspection,
} from '@hs/compiler';
import { ErrorCode, HostBackend, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { RunSession } from '../src/index.js';

const CameraParams = paramSchema('com.hs.test.Camera', 1, { frameRate: rateParam({ min: Rate.hz(1), max: Rate.hz(120) }).runtime() });

/** Emits `count` host frames at the parameter-driven rate and records what ctx.rate() said. */
class Camera extends Operator {
  frames!: OutputPort;
  sent = 0;
  seen: string[] = [];
  views = new Set<PortRateView | null>();
  constructor(readonly count: number) {
    super('camera');
  }
  setup(spec: OperatorSpec): void {
    const params = spec.params(CameraParams, { frameRate: Rate.hz(60) });
    this.frames = spec
      .output('frames')
      .producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 }, bounds: { maxByteSpan: 16 }, storage: 'runtimePool' })
      .nominalRate(params.ref('frameRate'));
  }
  compute(ctx: ExecutionContext): Result<void> {
    const view = ctx.rate(this.frames);
    this.views.add(view);
    this.seen.push(`${view?.exact ?? 'none'}@${view?.rateGeneration ?? -1}`);
    const loan = ctx.allocateTensor(this.frames, { shape: [16], dtype: DType.uint8 });
    // No free slot (exhaustion is a value): produce nothing this activation; the scheduler polls again.
    if (!loan.ok) return loan.error.code === ErrorCode.ResourceExhausted ? OK_VOID : loan;
    const guard = unwrap(loan.value.write(null));
    const bytes = guard.tensor.mutableHostView();
    if (!bytes.ok) return bytes;
    bytes.value.fill(1);
    unwrap(guard.commit());
    this.sent += 1;
    if (this.sent === this.count) ctx.finish();
    return ctx.emit(this.frames, loan.value);
  }
}

class Recorder extends Operator {
  frames!: InputPort;
  received = 0;
  constructor() {
    super('recorder');
  }
  setup(spec: OperatorSpec): void {
    this.frames = spec.input('frames');
    spec.temporalContract({ trigger: { clock: Rate.hz(15) } });
  }
  compute(ctx: ExecutionContext): Result<void> {
    if (ctx.receive(this.frames) !== undefined) this.received += 1;
    return OK_VOID;
  }
}

function lifecycle(count = 3): { graph: Graph; camera: Camera } {
  const graph = new Graph('rates');
  const camera = graph.add(new Camera(count));
  const recorder = graph.add(new Recorder());
  graph.addFlow(camera.frames, recorder.frames);
  return { graph, camera };
}

describe('rate generations', () => {
  it('publishes generation zero, then a valid candidate with new active depths and no reallocation', async () => {
    const { graph, camera } = lifecycle();
    const plan = unwrap(compile(graph));
    const backend = new HostBackend();
    const session = unwrap(RunSession.create(plan, { backend }));
    const edge = 'camera.frames->recorder.frames';
    expect(session.captureRateGenerations()).toMatchObject({ published: { rateGeneration: 0 }, lastRejected: null });
    expect(session.metrics().edges).toEqual([{ id: edge, queueDepth: 8, highWater: 0, dropPolicy: 'block', dropped: 0, backpressured: 0, superseded: 0 }]);
    const slots = session.metrics().pools[0]?.slotCount;

    const published = unwrap(session.updateRateParameters([{ parameter: 'camera.params.frameRate', rate: Rate.hz(120) }]));
    expect(published.rateGeneration).toBe(1);
    expect(published.edges).toEqual([{ edge, activeDepth: 16, nominalArrivals: 8, recommendation: 16 }]);
    expect(session.metrics().edges[0]?.queueDepth).toBe(16);
    expect(session.metrics().pools[0]?.slotCount).toBe(slots);

    const rejected = session.updateRateParameters([{ parameter: 'camera.params.frameRate', rate: Rate.hz(240) }]);
    expect(!rejected.ok && rejected.error.code).toBe(ErrorCode.InvalidArgument);
    const snapshot = session.captureRateGenerations();
    expect(snapshot.published?.rateGeneration).toBe(1);
    expect(snapshot.lastRejected).toMatchObject({ rateGeneration: 2, code: ErrorCode.InvalidArgument });

    const text = unwrap(renderRateQueueInspection(plan, snapshot, 1, edge, 'text'));
    expect(text).toContain('queue depth 16 active (automatic), 16 admitted');
    expect(text).toContain('pin: { queueDepth: 16 }');
    const json = JSON.parse(unwrap(renderRateQueueInspection(plan, snapshot, 2, edge, 'json'))) as Record<string, unknown>;
    expect(json).toMatchObject({ schema: 'hs.rate-queue-inspection/1', activeDepth: null, pin: null, generation: { status: 'rejected' } });

    await session.run();
    expect(camera.seen).toEqual(['120@1', '120@1', '120@1']);
    expect(camera.views.size).toBe(1);
    session.dispose();
    backend.dispose();
  });

  it('rejects parameters that are not runtime rate fields', () => {
    const { graph } = lifecycle();
    const session = unwrap(RunSession.create(unwrap(compile(graph)), { backend: 'host' }));
    const missing = session.updateRateParameters([{ parameter: 'camera.params.nothing', rate: Rate.hz(30) }]);
    expect(!missing.ok && missing.error.code).toBe(ErrorCode.NotFound);
    expect(session.captureRateGenerations().published?.rateGeneration).toBe(0);
    session.dispose();
  });
});
