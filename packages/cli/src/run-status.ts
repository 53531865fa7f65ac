import type { RunMetrics } from '@hs/runtime';

/** What the live status line of `hs run` shows, computed from two successive metrics snapshots. */
export interface RunStatus {
  /** Frames the sources emitted so far. */
  readonly frames: number;
  /** Frames per second since the previous snapshot (over the whole run for the first one). */
  readonly framesPerSecond: number;
  /** The operator with the highest p99 compute() latency, or `undefined` before any activation. */
  readonly slowest: { readonly name: string; readonly p50Ms: number; readonly p99Ms: number } | undefined;
  /** Slots out of all pools now, and all pools' slots together. */
  readonly poolSlotsOut: number;
  readonly poolSlots: number;
}

/**
 * Computes the status from `current` and the snapshot before it (`previous`, `undefined` for the first).
 * A snapshot whose clock did not advance reports the rate over the whole run.
 */
export function runStatus(current: RunMetrics, previous: RunMetrics | undefined): RunStatus {
  const spanMs = previous === undefined ? current.elapsedMs : current.elapsedMs - previous.elapsedMs;
  const spanFrames = previous === undefined ? current.frames : current.frames - previous.frames;
  const framesPerSecond =
    spanMs > 0 ? (spanFrames * 1000) / spanMs : current.elapsedMs > 0 ? (current.frames * 1000) / current.elapsedMs : 0;
  let slowest: RunStatus['slowest'];
  for (const op of current.operators) {
    if (op.activations === 0) continue;
    if (slowest === undefined || op.latencyP99Ms > slowest.p99Ms) slowest = { name: op.name, p50Ms: op.latencyP50Ms, p99Ms: op.latencyP99Ms };
  }
  let poolSlotsOut = 0;
  let poolSlots = 0;
  for (const pool of current.pools) {
    poolSlotsOut += pool.outstanding;
    poolSlots += pool.slotCount;
  }
  return { frames: current.frames, framesPerSecond, slowest, poolSlotsOut, poolSlots };
}

/**
 * The status as one line, e.g. `1234 frames  59.9 frames/s  latency p50 0.210 ms p99 1.032 ms (png-writer)  pools 7/15 slots`.
 */
export function formatRunStatus(status: RunStatus): string {
  const latency =
    status.slowest === undefined
      ? 'latency -'
      : `latency p50 ${status.slowest.p50Ms.toFixed(3)} ms p99 ${status.slowest.p99Ms.toFixed(3)} ms (${status.slowest.name})`;
  return `${status.frames} frames  ${status.framesPerSecond.toFixed(1)} frames/s  ${latency}  pools ${status.poolSlotsOut}/${status.poolSlots} slots`;
}
