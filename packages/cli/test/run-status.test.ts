import type { RunMetrics } from '@hs/runtime';
import { describe, expect, it } from 'vitest';
import { formatRunStatus, runStatus } from '../src/run-status.js';

function metrics(frames: number, elapsedMs: number, p99: [number, number], outstanding: [number, number]): RunMetrics {
  const op = (name: string, activations: number, latencyP99Ms: number) => ({
    name,
    activations,
    emitted: activations,
    retries: 0,
    skippedTicks: 0,
    latencyMeanMs: latencyP99Ms / 2,
    latencyP50Ms: latencyP99Ms / 4,
    latencyP99Ms,
    latencyMaxMs: latencyP99Ms,
  });
  return {
    frames,
    elapsedMs,
    operators: [op('source', frames, p99[0]), op('sink', frames, p99[1]), op('idle', 0, 99)],
    pools: [
      { id: 'pool:a', slotCount: 5, outstanding: outstanding[0], highWater: 5, exhaustions: 0 },
      { id: 'pool:b', slotCount: 6, outstanding: outstanding[1], highWater: 6, exhaustions: 0 },
    ],
    edges: [],
    topics: [],
  };
}

describe('run status', () => {
  it('takes frames/s over the whole run first, then between snapshots; the slowest active operator by p99; slots out of all pools', () => {
    const first = metrics(100, 2000, [1, 2], [3, 4]);
    expect(formatRunStatus(runStatus(first, undefined))).toBe('100 frames  50.0 frames/s  latency p50 0.500 ms p99 2.000 ms (sink)  pools 7/11 slots');
    const second = metrics(400, 2500, [3, 2], [0, 1]);
    expect(runStatus(second, first)).toEqual({
      frames: 400,
      framesPerSecond: 600,
      slowest: { name: 'source', p50Ms: 0.75, p99Ms: 3 },
      poolSlotsOut: 1,
      poolSlots: 11,
    });
  });

  it('shows no latency before any activation and falls back to the whole run when the clock did not advance', () => {
    const idle: RunMetrics = { ...metrics(0, 0, [0, 0], [0, 0]), operators: [] };
    expect(formatRunStatus(runStatus(idle, undefined))).toBe('0 frames  0.0 frames/s  latency -  pools 0/11 slots');
    const same = metrics(10, 1000, [1, 1], [0, 0]);
    expect(runStatus(same, same).framesPerSecond).toBe(10);
  });
});
