import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, Rate, type TemporalContract, compile } from '@hs/compiler';
import { Device, ErrorCode, HostBackend, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { RunSession } from '../src/index.js';
import { ManualClock } from '../src/index.js';
import { ClockSource, DeviceClockSource, MS, SECOND, operator, runOnClock, settle, valueOf } from './clock-operators.js';
import { rejectionOf } from './rejection.js';
import { bindDevices } from './deployment.js';

type Read = 'one' | 'window';

/** Records, per activation, its time and the values it read on each input (`one`: receive(), `window`: receiveWindow()). */
class Recorder extends Operator {
  readonly ports: Record<string, InputPort> = {};
  readonly activations: { at: bigint; values: Record<string, number[]> }[] = [];
  constructor(
    name: string,
    private readonly reads: Record<string, Read>,
    private readonly contract: ((ports: Record<string, InputPort>) => TemporalContract) | null,
  ) {
    super(name);
  }
  setup(spec: OperatorSpec): void {
    for (const name of Object.keys(this.reads)) this.ports[name] = spec.input(name);
    if (this.contract !== null) spec.temporalContract(this.contract(this.ports));
  }
  compute(ctx: ExecutionContext): Result<void> {
    const values: Record<string, number[]> = {};
    for (const [name, read] of Object.entries(this.reads)) {
      const port = this.ports[name]!;
      if (read === 'one') {
        const tensor = ctx.receive(port);
        values[name] = tensor === undefined ? [] : [valueOf(tensor)];
      } else {
        const window = ctx.receiveWindow(port);
        values[name] = Array.from({ length: window.length }, (_, i) => valueOf(window.at(i)));
      }
    }
    this.activations.push({ at: ctx.activationTime, values });
    return OK_VOID;
  }
}

describe('the temporal contract schedules', () => {
  it('a 1 Hz clock consumer with a 3-entry window runs once per tick and takes all 3 (not once per entry)', async () => {
    const graph = new Graph('window');
    const source = graph.add(new ClockSource('source', Rate.hz(3), 9));
    const consumer = graph.add(new Recorder('consumer', { in: 'window' }, (p) => ({ trigger: { clock: Rate.hz(1) }, windows: [{ input: p.in!, entries: 3 }] })));
    graph.addFlow(source.out, consumer.ports.in!);
    const metrics = await runOnClock(unwrap(compile(graph)));
    expect(consumer.activations).toEqual([
      { at: 1n * SECOND, values: { in: [1, 2, 3] } },
      { at: 2n * SECOND, values: { in: [4, 5, 6] } },
      { at: 3n * SECOND, values: { in: [7, 8, 9] } },
    ]);
    // Ticks at exact thirds of a second, rounded up to the nanosecond: 1/3 s is no whole number of ns.
    expect(source.at.slice(0, 3)).toEqual([333_333_334n, 666_666_667n, SECOND]);
    expect(operator(metrics, 'consumer').skippedTicks).toBe(0);
  });

  it.each([
    ['window', 3, 9, 1, [1, 2, 3, 4, 5, 6, 7, 8, 9]],
    ['selector', 1, 3, 2, [1, 1, 1, 2, 1, 2, 2, 3]],
  ] as const)('orders every device entry of a %s on the consumer stream and releases each after its reads (the ordering checker stays silent)', async (kind, sourceHz, count, readerHz, seen) => {
    class WindowReader extends Operator {
      input!: InputPort;
      readonly seen: number[] = [];
      setup(spec: OperatorSpec): void {
        this.input = spec.input('input', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
        const retention = [{ input: this.input, entries: kind === 'window' ? 3 : 2 }];
        spec.temporalContract({ trigger: { clock: Rate.hz(readerHz) }, ...(kind === 'window' ? { windows: retention } : { selectors: retention }) });
      }
      compute(ctx: ExecutionContext): Result<void> {
        const window = ctx.receiveWindow(this.input);
        for (let i = 0; i < window.length; i++) {
          const launched = ctx.backend.launchKernel(ctx.cudaStream(), {
            name: 'test.readWindow',
            reads: [window.at(i).data()],
            writes: [],
            params: [],
            host: (reads) => void this.seen.push(reads[0]![0]!),
          });
          if (!launched.ok) return launched;
        }
        return OK_VOID;
      }
    }
    const backend = new HostBackend({ orderingChecker: true, seed: 5 });
    const graph = new Graph('device-window');
    const source = graph.add(new DeviceClockSource('source', Rate.hz(sourceHz), count));
    const reader = graph.add(new WindowReader('reader'));
    graph.addFlow(source.out, reader.input);
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(0), reader: Device.cuda(0) }) }));
    expect(plan.fusedEdges).toEqual([]);
    const metrics = await runOnClock(plan, { backend });
    expect(reader.seen).toEqual(seen);
    expect(operator(metrics, 'reader').activations).toBe(kind === 'window' ? 3 : 6);
    expect(metrics.pools.every((p) => p.outstanding === 0 && p.exhaustions === 0)).toBe(true);
    expect(backend.orderingChecker?.violations).toEqual([]);
    backend.dispose();
  });

  it('a camera-triggered fusion takes every IMU sample queued since the last frame; the 1 kHz IMU is never throttled', async () => {
    const graph = new Graph('fusion');
    const camera = graph.add(new ClockSource('camera', Rate.hz(60), 60));
    const imu = graph.add(new ClockSource('imu', Rate.hz(1000), 1000));
    const fusion = graph.add(
      new Recorder('fusion', { frames: 'one', imu: 'window' }, (p) => ({ trigger: { input: p.frames! }, windows: [{ input: p.imu!, entries: 34 }] })),
    );
    graph.addFlow(camera.out, fusion.ports.frames!);
    graph.addFlow(imu.out, fusion.ports.imu!);
    const plan = unwrap(compile(graph));
    expect(plan.edge('imu.out->fusion.imu')?.queueDepth).toBe(34);
    const metrics = await runOnClock(plan);
    // Frame k at k/60 s consumes exactly the samples in ((k-1)/60, k/60] s: one at the frame's own instant comes first.
    const expected = Array.from({ length: 60 }, (_, i) => {
      const k = i + 1;
      const first = Math.floor((1000 * (k - 1)) / 60) + 1;
      const last = Math.floor((1000 * k) / 60);
      return { frames: [k], imu: Array.from({ length: last - first + 1 }, (_, j) => first + j) };
    });
    expect(fusion.activations.map((a) => a.values)).toEqual(expected);
    expect(fusion.activations.map((a) => a.values.imu!.length).filter((n) => n === 16)).toHaveLength(20);
    expect(fusion.activations.map((a) => a.values.imu!.length).filter((n) => n === 17)).toHaveLength(40);
    expect(imu.at).toEqual(Array.from({ length: 1000 }, (_, j) => BigInt(j + 1) * MS));
    expect(operator(metrics, 'imu').skippedTicks).toBe(0);
    expect(imu.exhausted).toBe(0);
    for (const edge of metrics.edges) expect(edge.highWater).toBeLessThanOrEqual(edge.queueDepth);
  });

  it('a trigger input waits for its required input; other inputs read their newest entry (older ones superseded)', async () => {
    const graph = new Graph('required');
    const frames = graph.add(new ClockSource('frames', Rate.hz(10), 10));
    const calibration = graph.add(new ClockSource('calibration', Rate.ratio(4, 1), 1));
    const poses = graph.add(new ClockSource('poses', Rate.hz(30), 30));
    const fusion = graph.add(
      new Recorder('fusion', { frames: 'one', calibration: 'one', poses: 'one' }, (p) => ({
        trigger: { input: p.frames! },
        required: [p.calibration!],
        selectors: [{ input: p.calibration!, entries: 1 }],
      })),
    );
    graph.addFlow(frames.out, fusion.ports.frames!);
    graph.addFlow(calibration.out, fusion.ports.calibration!);
    graph.addFlow(poses.out, fusion.ports.poses!, { queueDepth: 8 });
    const metrics = await runOnClock(unwrap(compile(graph)));
    // Nothing runs before the calibration arrives at 250 ms; then frames 1 and 2 (queued) run back to back.
    expect(fusion.activations.map((a) => a.at)).toEqual([250n, 250n, 300n, 400n, 500n, 600n, 700n, 800n, 900n, 1000n].map((t) => t * MS));
    expect(fusion.activations.map((a) => a.values.frames)).toEqual(Array.from({ length: 10 }, (_, i) => [i + 1]));
    // The selector keeps the one calibration (never consumed); poses give the newest entry or nothing.
    expect(fusion.activations.every((a) => a.values.calibration![0] === 1)).toBe(true);
    expect(fusion.activations.map((a) => a.values.poses)).toEqual([[7], [], [9], [12], [15], [18], [21], [24], [27], [30]]);
    expect(metrics.edges.find((e) => e.id === 'poses.out->fusion.poses')?.superseded).toBe(30 - 9);
  });

  it('a clock with a required input runs only at ticks where it holds an entry; the ticks between are skipped and counted', async () => {
    const graph = new Graph('clock-required');
    const source = graph.add(new ClockSource('source', Rate.ratio(5, 2), 2));
    const consumer = graph.add(new Recorder('consumer', { in: 'one' }, (p) => ({ trigger: { clock: Rate.hz(10) }, required: [p.in!] })));
    graph.addFlow(source.out, consumer.ports.in!);
    const metrics = await runOnClock(unwrap(compile(graph)));
    expect(consumer.activations).toEqual([
      { at: 400n * MS, values: { in: [1] } },
      { at: 800n * MS, values: { in: [2] } },
    ]);
    expect(operator(metrics, 'consumer').skippedTicks).toBe(6);
  });

  it('a selector reads its newest entries without consuming them; an arrival past them releases the oldest', async () => {
    const graph = new Graph('selector');
    const source = graph.add(new ClockSource('source', Rate.hz(1), 3));
    const viewer = graph.add(new Recorder('viewer', { in: 'window' }, (p) => ({ trigger: { clock: Rate.hz(2) }, selectors: [{ input: p.in!, entries: 2 }] })));
    graph.addFlow(source.out, viewer.ports.in!);
    const metrics = await runOnClock(unwrap(compile(graph)));
    expect(viewer.activations.map((a) => a.values.in)).toEqual([[], [1], [1], [1, 2], [1, 2], [2, 3]]);
    expect(metrics.pools.every((p) => p.outstanding === 0)).toBe(true);
  });

  it('a tick missed while the loop was late is skipped and counted, never run as a burst; catchUp runs each', async () => {
    const late = (next: bigint): bigint | null => (next === 200n * MS ? 350n * MS : null);
    for (const [policy, times, skipped] of [
      ['skip', [100n, 350n, 400n, 500n], 1],
      ['catchUp', [100n, 350n, 350n, 400n, 500n], 0],
    ] as const) {
      const graph = new Graph(`late-${policy}`);
      const source = graph.add(new ClockSource('source', Rate.hz(10), policy === 'skip' ? 4 : 5, policy));
      const sink = graph.add(new Recorder('sink', { in: 'one' }, null));
      graph.addFlow(source.out, sink.ports.in!);
      const metrics = await runOnClock(unwrap(compile(graph)), { late });
      expect(source.at).toEqual(times.map((t) => t * MS));
      expect(operator(metrics, 'source').skippedTicks).toBe(skipped);
    }
  });

  it('applies the selected scenario; refuses an unknown one and a window with a selector in one scenario, naming operator and port', async () => {
    const build = (contract: (p: Record<string, InputPort>) => TemporalContract): { graph: Graph; consumer: Recorder } => {
      const graph = new Graph('scenarios');
      const source = graph.add(new ClockSource('source', Rate.hz(1), 4));
      const consumer = graph.add(new Recorder('consumer', { in: 'window' }, contract));
      graph.addFlow(source.out, consumer.ports.in!);
      return { graph, consumer };
    };
    const { graph, consumer } = build((p) => ({
      trigger: { clock: Rate.ratio(1, 4) },
      windows: [{ input: p.in!, entries: 2 }, { input: p.in!, entries: 4, scenario: 'replay' }],
    }));
    const plan = unwrap(compile(graph));
    await runOnClock(plan, { scenario: 'replay' });
    expect(consumer.activations.map((a) => a.values.in)).toEqual([[1, 2, 3, 4]]);
    const unknown = RunSession.create(plan, { backend: 'host', scenario: 'nightly' });
    expect(!unknown.ok && unknown.error.code).toBe(ErrorCode.InvalidArgument);
    expect(!unknown.ok && unknown.error.message).toContain('"nightly" is named by no window or selector');
    const both = build((p) => ({ trigger: { clock: Rate.hz(1) }, windows: [{ input: p.in!, entries: 2 }], selectors: [{ input: p.in!, entries: 2 }] }));
    const refused = RunSession.create(unwrap(compile(both.graph)), { backend: 'host' });
    expect(!refused.ok && refused.error.message).toContain('operator consumer: input in has both a window and a selector in scenario default');
  });

  it.each([
    ['receiveWindow() on a port without a window', { in: 'window' as Read }, null, 'operator consumer: input in has no window or selector in scenario default'],
    ['receive() on a window port', { in: 'one' as Read }, 'window', 'operator consumer: input in has a window; read its entries with ctx.receiveWindow(in)'],
    ['two receives of one port in one activation', { in: 'one' as Read }, 'twice', 'operator consumer: input in was already read in this activation (receive() twice)'],
  ])('refuses %s with a typed error naming operator and port', async (_what, reads, form, message) => {
    const graph = new Graph('misuse');
    const source = graph.add(new ClockSource('source', Rate.hz(1), 1));
    class Twice extends Recorder {
      override compute(ctx: ExecutionContext): Result<void> {
        ctx.receive(this.ports.in!);
        return super.compute(ctx);
      }
    }
    const contract = form === 'window' ? (p: Record<string, InputPort>): TemporalContract => ({ trigger: { input: p.in! }, windows: [{ input: p.in!, entries: 2 }] }) : null;
    const consumer = graph.add(form === 'twice' ? new Twice('consumer', reads, null) : new Recorder('consumer', reads, contract));
    graph.addFlow(source.out, consumer.ports.in!);
    const clock = new ManualClock();
    const session = unwrap(RunSession.create(unwrap(compile(graph)), { backend: 'host', clock }));
    const running = session.run();
    await settle();
    clock.advanceTo(SECOND);
    const error = await rejectionOf(running);
    expect(error.code).toBe(ErrorCode.InvalidState);
    expect(error.message).toContain(message);
    session.dispose();
  });
});

