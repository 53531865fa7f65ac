import { RunSession } from '@hs/runtime';
import { HostBackend } from '@hs/streams';
import { FaultyBackend, type LiveHandles } from './faulty-backend.js';
import { buildSoakGraph, soakImages } from './soak-graph.js';

/** What a soak run measured. */
export interface SoakOutcome {
  readonly frames: number;
  readonly seed: number;
  readonly elapsedMs: number;
  /** Pool slots still out when the run ended (must be 0). */
  readonly leakedSlots: number;
  /** Streams, events and allocations live after the session was disposed (must all be 0). */
  readonly liveAfterDispose: LiveHandles;
  /** Distinct live stream and event counts seen while the run was going (each must be exactly one value). */
  readonly streamCounts: readonly number[];
  readonly eventCounts: readonly number[];
  /** Memory samples taken after a forced GC (null when `--expose-gc` is missing). */
  readonly memory: SoakMemory | null;
  /** The run's own error message, or null. */
  readonly runError: string | null;
}

/** Heap and RSS after warm-up (the first sample past `warmupFraction` of the frames) and at the end, in bytes. */
export interface SoakMemory {
  readonly samples: number;
  readonly heapAfterWarmup: number;
  readonly heapAtEnd: number;
  readonly rssAfterWarmup: number;
  readonly rssAtEnd: number;
  /** (end - after warm-up) / after warm-up, for the JS heap and RSS. */
  readonly heapGrowth: number;
  readonly rssGrowth: number;
}

/** Options of `soak`. */
export interface SoakOptions {
  readonly frames: number;
  /** Seed of the test images and of the host backend's stream interleaving. */
  readonly seed: number;
  /** Fraction of frames treated as warm-up before the memory baseline; default 0.1. */
  readonly warmupFraction?: number;
  /** Milliseconds between samples; default 250. */
  readonly sampleEveryMs?: number;
}

function forceGc(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return false;
  gc();
  gc();
  return true;
}

/**
 * Runs the image-pipeline soak graph for `frames` frames in one session on a host backend (seeded
 * interleaving) wrapped in a fault-free `FaultyBackend` that counts live handles, sampling live stream and
 * event counts and (with `--expose-gc`) heap and RSS after a forced GC while it runs.
 */
export async function soak(options: SoakOptions): Promise<SoakOutcome> {
  const { frames, seed, warmupFraction = 0.1, sampleEveryMs = 250 } = options;
  const backend = new FaultyBackend(new HostBackend({ seed }));
  const graph = buildSoakGraph(frames, soakImages(seed));
  if (!graph.ok) throw graph.error;
  const created = RunSession.create(graph.value.plan, { backend });
  if (!created.ok) throw created.error;
  const session = created.value;
  const streamCounts = new Set<number>();
  const eventCounts = new Set<number>();
  const gcAvailable = forceGc();
  let warm: { heap: number; rss: number } | null = null;
  let samples = 0;
  const sample = (): void => {
    streamCounts.add(backend.live.streams);
    eventCounts.add(backend.live.events);
    if (warm === null && gcAvailable && session.metrics().frames >= frames * warmupFraction) {
      forceGc();
      const usage = process.memoryUsage();
      warm = { heap: usage.heapUsed, rss: usage.rss };
    }
    samples += 1;
  };
  const started = performance.now();
  const sampler = setInterval(sample, sampleEveryMs);
  const ran = await session.run({ drainTimeoutMs: 10_000 });
  clearInterval(sampler);
  sample();
  const elapsedMs = performance.now() - started;
  let memory: SoakMemory | null = null;
  if (gcAvailable && warm !== null) {
    forceGc();
    const usage = process.memoryUsage();
    const base: { heap: number; rss: number } = warm;
    memory = {
      samples,
      heapAfterWarmup: base.heap,
      heapAtEnd: usage.heapUsed,
      rssAfterWarmup: base.rss,
      rssAtEnd: usage.rss,
      heapGrowth: (usage.heapUsed - base.heap) / base.heap,
      rssGrowth: (usage.rss - base.rss) / base.rss,
    };
  }
  const metrics = session.metrics();
  const leakedSlots = metrics.pools.reduce((n, p) => n + p.outstanding, 0);
  session.dispose();
  const liveAfterDispose = backend.live;
  backend.dispose();
  return {
    frames: metrics.frames,
    seed,
    elapsedMs,
    leakedSlots,
    liveAfterDispose,
    streamCounts: [...streamCounts],
    eventCounts: [...eventCounts],
    memory,
    runError: ran.ok ? null : ran.error.message,
  };
}
