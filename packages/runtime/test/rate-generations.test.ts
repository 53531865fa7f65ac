import {
  type ExecutionContext,
  Graph,
  type InputPort,
  Operator,
  type OperatorSpec,
  type OutputPort,
  type PortRateView,
  Rate,
  type RateParameterValue,
  compile,
  paramSchema,
  rateParam,
  renderRateQueueInspection,
} from '@hs/compiler';
import { HostResource, StatisticsResource } from '@hs/nanovdb-mr';
import { ErrorCode, HostBackend, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { ManualClock, RunSession } from '../src/index.js';
import { runSessionOnClock } from './clock-operators.js';
import { rejectionOf } from './rejection.js';

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

  it('refuses a candidate that is not an array of { parameter, rate } with InvalidArgument, as create() does, recording nothing', () => {
    const { graph } = lifecycle();
    const session = unwrap(RunSession.create(unwrap(compile(graph)), { backend: 'host' }));
    for (const candidate of [null, 'camera.params.frameRate', [{}], [{ parameter: 5, rate: Rate.hz(30) }]]) {
      const refused = session.updateRateParameters(candidate as never);
      expect(refused.ok ? '' : refused.error.message).toBe('InvalidArgument: updateRateParameters: the candidate must be an array of { parameter: "op.params.field", rate: Rate }');
    }
    expect(session.captureRateGenerations()).toMatchObject({ published: { rateGeneration: 0 }, lastRejected: null });
    const created = RunSession.create(unwrap(compile(graph)), { backend: 'host', rateParameters: [{}] as never });
    expect(created.ok ? '' : created.error.message).toBe('InvalidArgument: RunSessionOptions.rateParameters must be an array of { parameter: "op.params.field", rate: Rate }');
    session.dispose();
  });

  describe('the first candidate (rateParameters)', () => {
    const FRAME_RATE = 'camera.params.frameRate';
    const EDGE = 'camera.frames->recorder.frames';

    /** A host session of a 3-frame lifecycle on a manual clock, its pool counted, created with `rateParameters`. */
    function firstCandidate(rateParameters: readonly RateParameterValue[]): {
      session: RunSession;
      camera: Camera;
      clock: ManualClock;
      counted: StatisticsResource<HostResource>;
      backend: HostBackend;
    } {
      const { graph, camera } = lifecycle();
      const backend = new HostBackend();
      const counted = new StatisticsResource(new HostResource(backend));
      const clock = new ManualClock();
      const session = unwrap(RunSession.create(unwrap(compile(graph)), { backend, clock, resources: { default: counted }, rateParameters }));
      return { session, camera, clock, counted, backend };
    }

    it('rejected: the session exists with nothing published, run() refuses naming it until an admissible candidate is published', async () => {
      const { session, camera, clock, counted, backend } = firstCandidate([{ parameter: FRAME_RATE, rate: Rate.hz(240) }]);
      const snapshot = session.captureRateGenerations();
      expect(snapshot.published).toBeNull();
      expect(snapshot.lastRejected).toMatchObject({ rateGeneration: 0, parameters: [{ parameter: FRAME_RATE }], code: ErrorCode.InvalidArgument });
      expect(snapshot.lastRejected?.reason).toContain('outside its admitted domain');
      const json = JSON.parse(unwrap(renderRateQueueInspection(session.plan, snapshot, 0, EDGE, 'json'))) as Record<string, unknown>;
      expect(json).toMatchObject({ activeDepth: null, generation: { status: 'rejected' } });

      const refused = await rejectionOf(session.run());
      expect(refused.code).toBe(ErrorCode.InvalidState);
      expect(refused.message).toContain(`candidate 0 (${FRAME_RATE} = 240 Hz) was rejected (InvalidArgument: `);
      expect(refused.message).toContain('outside its admitted domain');
      expect(refused.message).toContain('publish an admissible candidate with session.updateRateParameters() before run()');
      expect(camera.seen).toEqual([]);
      expect(session.metrics().pools.map((p) => p.outstanding)).toEqual([0]);

      const published = unwrap(session.updateRateParameters([{ parameter: FRAME_RATE, rate: Rate.hz(30) }]));
      expect(published.rateGeneration).toBe(1);
      expect(session.captureRateGenerations()).toMatchObject({ published: { rateGeneration: 1 }, lastRejected: { rateGeneration: 0 } });
      const metrics = await runSessionOnClock(session, clock);
      expect(camera.seen).toEqual(['30@1', '30@1', '30@1']);
      expect(metrics.pools.map((p) => p.outstanding)).toEqual([0]);
      session.dispose();
      expect(counted.statistics.allocations.current).toBe(0);
      backend.dispose();
    });

    it('rejected and never run: dispose() returns everything the session allocated', async () => {
      const { session, counted, backend } = firstCandidate([{ parameter: 'camera.params.nothing', rate: Rate.hz(30) }]);
      expect(session.captureRateGenerations()).toMatchObject({ published: null, lastRejected: { rateGeneration: 0, code: ErrorCode.NotFound } });
      expect(counted.statistics.allocations.current).toBe(1);
      expect((await rejectionOf(session.run())).message).toContain('camera.params.nothing = 30 Hz');
      expect(session.metrics().pools.map((p) => p.outstanding)).toEqual([0]);
      session.dispose();
      expect(counted.statistics.allocations.current).toBe(0);
      backend.dispose();
    });

    it('accepted: it is the published generation 0, and the next candidate is generation 1', async () => {
      const { session, camera, clock, backend } = firstCandidate([{ parameter: FRAME_RATE, rate: Rate.hz(120) }]);
      const snapshot = session.captureRateGenerations();
      expect(snapshot.lastRejected).toBeNull();
      expect(snapshot.published).toMatchObject({ rateGeneration: 0, edges: [{ edge: EDGE, activeDepth: 16, nominalArrivals: 8, recommendation: 16 }] });
      expect(snapshot.published?.parameters.map((p) => `${p.parameter} = ${String(p.rate)}`)).toEqual([`${FRAME_RATE} = 120 Hz`]);
      expect(session.metrics().edges[0]?.queueDepth).toBe(16);
      await runSessionOnClock(session, clock);
      expect(camera.seen).toEqual(['120@0', '120@0', '120@0']);
      const rejected = session.updateRateParameters([{ parameter: FRAME_RATE, rate: Rate.hz(240) }]);
      expect(!rejected.ok && rejected.error.code).toBe(ErrorCode.InvalidArgument);
      expect(session.captureRateGenerations()).toMatchObject({ published: { rateGeneration: 0 }, lastRejected: { rateGeneration: 1 } });
      session.dispose();
      backend.dispose();
    });

    it('without rateParameters the plan values are generation 0, as before', () => {
      const { graph } = lifecycle();
      const session = unwrap(RunSession.create(unwrap(compile(graph)), { backend: 'host' }));
      expect(session.captureRateGenerations()).toMatchObject({ published: { rateGeneration: 0, edges: [{ activeDepth: 8 }] }, lastRejected: null });
      session.dispose();
    });

    it('refuses rateParameters that are not an array of { parameter, rate } before anything is allocated', () => {
      const { graph } = lifecycle();
      const plan = unwrap(compile(graph));
      const backend = new HostBackend();
      const counted = new StatisticsResource(new HostResource(backend));
      for (const rateParameters of [Rate.hz(60), [null], [{ rate: Rate.hz(60) }]]) {
        const created = RunSession.create(plan, { backend, resources: { default: counted }, rateParameters: rateParameters as unknown as RateParameterValue[] });
        expect(!created.ok && created.error.code).toBe(ErrorCode.InvalidArgument);
      }
      expect(counted.statistics.allocations.total).toBe(0);
      backend.dispose();
    });
  });

  it('captures owning, deep-frozen evidence: later candidates and mutation attempts leave a snapshot as it was', () => {
    const { graph } = lifecycle();
    const session = unwrap(RunSession.create(unwrap(compile(graph)), { backend: 'host' }));
    const first = session.captureRateGenerations();
    const candidate = { parameter: 'camera.params.frameRate', rate: Rate.hz(240) };
    expect(session.updateRateParameters([candidate]).ok).toBe(false);
    const rejected = session.captureRateGenerations();
    unwrap(session.updateRateParameters([{ parameter: 'camera.params.frameRate', rate: Rate.hz(120) }]));

    // A later publish replaced nothing inside the snapshots already captured.
    expect(first).toMatchObject({ published: { rateGeneration: 0, edges: [{ activeDepth: 8 }] }, lastRejected: null });
    expect(rejected.published?.rateGeneration).toBe(0);
    expect(session.captureRateGenerations().published?.rateGeneration).toBe(2);

    // The caller's candidate object is not the evidence: changing it changes nothing captured.
    candidate.parameter = 'camera.params.other';
    candidate.rate = Rate.hz(1);
    expect(rejected.lastRejected?.parameters.map((p) => `${p.parameter} = ${String(p.rate)}`)).toEqual(['camera.params.frameRate = 240 Hz']);

    // Every level is frozen: a mutation throws (test modules are strict) and the value stays.
    const published = first.published!;
    const attempts: (() => void)[] = [
      () => ((first as { published: unknown }).published = null),
      () => ((published as { rateGeneration: number }).rateGeneration = 7),
      () => ((published.edges[0] as { activeDepth: number }).activeDepth = 99),
      () => (published.edges as unknown[]).push({}),
      () => ((published.parameters[0] as { rate: Rate }).rate = Rate.hz(1)),
      () => ((published.parameters[0]!.rate.hz as { n: bigint }).n = 1n),
      () => ((published.ports[0]!.port as { operator: string }).operator = 'other'),
      () => ((rejected.lastRejected!.parameters[0] as { parameter: string }).parameter = 'other'),
      () => ((rejected.lastRejected as { reason: string }).reason = ''),
    ];
    for (const attempt of attempts) expect(attempt).toThrow(TypeError);
    expect(first).toMatchObject({ published: { rateGeneration: 0, edges: [{ activeDepth: 8 }] }, lastRejected: null });
    expect(published.ports[0]?.port).toEqual({ operator: 'camera', port: 'frames' });
    expect(published.parameters.map((p) => `${p.parameter} = ${String(p.rate)}`)).toEqual(['camera.params.frameRate = 60 Hz']);
    expect(rejected.lastRejected).toMatchObject({ rateGeneration: 1, parameters: [{ parameter: 'camera.params.frameRate' }] });
    session.dispose();
  });
});
