import { readFile } from 'node:fs/promises';
import type { ExecutionContext, InputPort, TensorWindow } from '@hs/compiler';
import { ManualClock, RunSession, type RunMetrics } from '@hs/runtime';
import { type Backend, unwrap } from '@hs/streams';
import { expect } from 'vitest';
import { loadBundledPhoto } from '../src/bundled-photo.js';
import { DEFAULT_MOTION, ImuModel } from '../src/imu-model.js';
import { EDGES, IMU_WINDOW_ENTRIES, buildSensorFusionPipeline } from '../src/pipeline.js';
import { ImuSample } from '../src/tensor-layouts.js';

const MS = 1_000_000n;
const SECONDS = 5;

/** The IMU samples (index, time in ns) each fusion activation's window handed out, read from the tensors. */
type WindowLog = { index: number; timeNs: number }[][];

/**
 * Wraps the fusion's `compute()` so that every window it receives on `imu` is logged before the
 * fusion reads it: an observer outside the example, through the context the runtime hands in.
 */
function logWindows(fusion: { imu: InputPort; compute(ctx: ExecutionContext): unknown }): WindowLog {
  const log: WindowLog = [];
  const compute = fusion.compute.bind(fusion);
  fusion.compute = (ctx: ExecutionContext) => {
    const observed = new Proxy(ctx, {
      get(target, key) {
        if (key === 'receiveWindow') {
          return (port: InputPort): TensorWindow => {
            const window = target.receiveWindow(port);
            if (port === fusion.imu) {
              const entries = Array.from({ length: window.length }, (_, i) => {
                const values = new Float64Array(unwrap(window.at(i).hostView()).slice().buffer);
                return { index: values[ImuSample.index]!, timeNs: values[ImuSample.timeNs]! };
              });
              log.push(entries);
            }
            return window;
          };
        }
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    return compute(observed);
  };
  return log;
}

/** Runs the session on a manual clock: each timer fires at its exact time, then the graph settles. */
async function runOnManualClock(session: RunSession, clock: ManualClock): Promise<RunMetrics> {
  let done = false;
  const running = session.run().finally(() => {
    done = true;
  });
  while (!done) {
    const next = clock.nextTimerAt;
    if (next !== null) clock.advanceTo(next);
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  }
  return running;
}

/**
 * Runs the example for 5 s on a manual clock with `backend` (its recorder writing into the existing
 * folder `outDir`) and checks the schedule exactly: IMU samples at t = j ms (j = 1..5000), camera frames
 * at t = k/60 s (k = 1..300); activation k consumes exactly the samples in ((k-1)/60, k/60] s (a sample at
 * a frame's own instant is queued before that frame's activation): 100 activations of 16 samples and 200
 * of 17, all 5000 consumed once; no queue above its planned depth; the recorder's drops exact; the
 * fusion's 300 activations and the sources' ticks untouched; the recorded yaw equal to an independent
 * integration of the same samples.
 */
export async function checkExactFiveSecondRun(backend: 'host' | Backend, outDir: string): Promise<void> {
    const pipeline = unwrap(buildSensorFusionPipeline({ photo: loadBundledPhoto(), seconds: SECONDS, outDir }));
    const { plan, fusion } = pipeline;

    // The IMU edge's depth comes from rate sizing: ceil(1000 Hz / 60 Hz) = 17 arrivals per frame, x 2 headroom.
    expect(plan.edge(EDGES.imu)).toMatchObject({ queueDepth: 34, queueDepthSource: 'automatic' });
    expect(plan.queueSizingRecipe(EDGES.imu)).toMatchObject({
      source: 'automatic',
      triggerRate: { trigger: 'input fusion.frames' },
      nominalArrivals: 17,
      recommendation: 34,
      automaticDepth: 34,
      activeDepth: 34,
    });
    expect(plan.queueSizingRecipe(EDGES.imu)?.inputRate?.active.toString()).toBe('1000 Hz');
    expect(plan.queueSizingRecipe(EDGES.imu)?.headroom.toString()).toBe('2/1');
    expect(IMU_WINDOW_ENTRIES).toBe(plan.edge(EDGES.imu)?.queueDepth);
    expect(plan.edge(EDGES.results)).toMatchObject({ queueDepth: 4, queueDepthSource: 'explicit', dropPolicy: 'dropOldest' });
    expect(plan.fusedEdges).toEqual([]);

    const windows = logWindows(fusion);
    const clock = new ManualClock();
    const session = unwrap(RunSession.create(plan, { backend, clock }));
    const metrics = await runOnManualClock(session, clock);
    session.dispose();

    // Activation k consumed exactly the samples j with (k-1)/60 < j/1000 <= k/60, in order, by the times and indices they carry.
    expect(windows).toHaveLength(300);
    windows.forEach((entries, i) => {
      const k = i + 1;
      const first = Math.floor((1000 * (k - 1)) / 60) + 1;
      const last = Math.floor((1000 * k) / 60);
      expect(entries.map((e) => e.index)).toEqual(Array.from({ length: last - first + 1 }, (_, n) => first + n));
      for (const e of entries) expect(e.timeNs).toBe(e.index * Number(MS));
    });
    const sizes = windows.map((w) => w.length);
    expect(sizes.filter((n) => n === 16)).toHaveLength(100);
    expect(sizes.filter((n) => n === 17)).toHaveLength(200);
    expect(windows.flat().map((e) => e.index)).toEqual(Array.from({ length: 5000 }, (_, j) => j + 1));

    const op = (name: string) => metrics.operators.find((o) => o.name === name)!;
    const edge = (id: string) => metrics.edges.find((e) => e.id === id)!;
    expect(op('camera')).toMatchObject({ activations: 300, emitted: 300, skippedTicks: 0 });
    expect(op('imu')).toMatchObject({ activations: 5000, emitted: 5000, skippedTicks: 0 });
    expect(op('fusion')).toMatchObject({ activations: 300, emitted: 300 });
    expect(op('recorder')).toMatchObject({ activations: 50, skippedTicks: 0 });
    for (const e of metrics.edges) expect(e.highWater).toBeLessThanOrEqual(plan.edge(e.id)!.queueDepth);
    expect(edge(EDGES.imu).highWater).toBe(17);
    // Six results per recorder tick, four kept: the two oldest of each six are dropped, never blocking the fusion.
    expect(edge(EDGES.results)).toMatchObject({ dropped: 100, backpressured: 0 });
    expect(edge(EDGES.frames).dropped + edge(EDGES.imu).dropped).toBe(0);
    expect(metrics.pools.map((p) => [p.id, p.exhaustions, p.outstanding])).toEqual([
      ['pool:camera.frames', 0, 0],
      ['pool:imu.samples', 0, 0],
      ['pool:fusion.results', 0, 0],
    ]);

    // The recorder wrote the newest four of every six results; each one's yaw is the integral of the
    // same samples computed here, independently, from a fresh model with the same seed.
    const model = new ImuModel(DEFAULT_MOTION);
    const reading = new Float64Array(6);
    const yawOfFrame: number[] = [];
    let previousNs = 0;
    let j = 1;
    for (let k = 1; k <= 300; k++) {
      let yaw = 0;
      for (; j * 60 <= 1000 * k; j++) { // j ms <= k/60 s, in integers
        model.next(reading);
        const t = j * 1e6;
        yaw += reading[2]! * ((t - previousNs) / 1e9);
        previousNs = t;
      }
      yawOfFrame.push(yaw);
    }
    const lines = (await readFile(pipeline.recordPath, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, number>);
    expect(lines.map((l) => l['frame'])).toEqual(Array.from({ length: 300 }, (_, i) => i + 1).filter((f) => f % 6 === 0 || f % 6 >= 3));
    for (const line of lines) {
      const k = line['frame']!;
      expect(line).toMatchObject({ timeNs: Math.ceil((k * 1e9) / 60), samples: windows[k - 1]!.length, firstSample: windows[k - 1]![0]!.index });
      expect(line['yaw']).toBe(yawOfFrame[k - 1]);
    }
    expect(fusion.totalYaw).toBeCloseTo(yawOfFrame.reduce((a, b) => a + b, 0), 12);
    expect(fusion.integratedSeconds).toBeCloseTo(SECONDS, 12);
    expect(Math.abs(fusion.totalYaw - DEFAULT_MOTION.yawRate * SECONDS)).toBeLessThan(0.005);
}
