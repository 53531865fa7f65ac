import { loadCudaNative, type CudaNativeBinding } from '@hs/cuda-native';
import { RunSession } from '@hs/runtime';
import type { ExecutionPlan } from '@hs/compiler';
import { CudaBackend, HostBackend, ok, unwrap, type Backend } from '@hs/streams';
import { FaultyBackend, type LiveHandles } from './faulty-backend.js';
import { buildSoakGraph, soakImages } from './soak-graph.js';
import { outcomeOf } from './run-outcome.js';

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
  /** The backend the run used. */
  readonly backend: SoakBackend;
  /** Device memory after warm-up and at the end of the run (CUDA backend only; null on the host backend or when the run ended before a warm-up sample). */
  readonly deviceMemory: SoakDeviceMemory | null;
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

/** Which backend a soak runs on. */
export type SoakBackend = 'host' | 'cuda';

/**
 * Device 0's memory after warm-up and at the end of a CUDA soak (before the session is disposed), in bytes:
 * the default memory pool's bytes handed out (`used`) and held from the driver (`reserved`), and the
 * device's free memory (`cudaMemGetInfo`).
 */
export interface SoakDeviceMemory {
  readonly poolUsedAfterWarmup: number;
  readonly poolUsedAtEnd: number;
  readonly poolReservedAfterWarmup: number;
  readonly poolReservedAtEnd: number;
  readonly freeAfterWarmup: number;
  readonly freeAtEnd: number;
  readonly total: number;
}

/**
 * True when device memory stayed flat after warm-up: the pool hands out and holds no more than it did
 * (steady state allocates nothing), and the device's free memory dropped by at most `flatness` (a
 * fraction, default 1%) of the memory in use after warm-up (the driver may move a little on its own).
 */
export function deviceMemoryFlat(m: SoakDeviceMemory, flatness = 0.01): boolean {
  const inUse = m.total - m.freeAfterWarmup;
  return m.poolUsedAtEnd <= m.poolUsedAfterWarmup && m.poolReservedAtEnd <= m.poolReservedAfterWarmup && m.freeAfterWarmup - m.freeAtEnd <= flatness * inUse;
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
  /**
   * `host` (default): the host backend with seeded interleaving. `cuda`: the CUDA backend on device 0
   * (throws when none is usable), which also measures device memory.
   */
  readonly backend?: SoakBackend;
  /**
   * The compiled graph to soak, whose sources emit exactly `frames` frames in all; default the
   * image-pipeline soak graph of `frames` frames (`buildSoakGraph`).
   */
  readonly plan?: ExecutionPlan;
}

/** Device 0's default-pool bytes handed out (`used`) and held (`reserved`), and its free and total memory, bytes. */
export interface DeviceSample {
  readonly used: number;
  readonly reserved: number;
  readonly free: number;
  readonly total: number;
}

/** Pool and device memory of device 0 now. */
export function deviceSample(cuda: CudaNativeBinding): DeviceSample {
  const pool = cuda.memPoolUsage(0);
  const info = cuda.memGetInfo(0);
  return { used: pool.used, reserved: pool.reserved, free: info.free, total: info.total };
}

/** The `SoakDeviceMemory` of a sample after warm-up and one at the end. */
export function soakDeviceMemory(warm: DeviceSample, end: DeviceSample): SoakDeviceMemory {
  return {
    poolUsedAfterWarmup: warm.used,
    poolUsedAtEnd: end.used,
    poolReservedAfterWarmup: warm.reserved,
    poolReservedAtEnd: end.reserved,
    freeAfterWarmup: warm.free,
    freeAtEnd: end.free,
    total: end.total,
  };
}

/** Runs two full garbage collections; false (nothing done) when node was started without `--expose-gc`. */
export function forceGc(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return false;
  gc();
  gc();
  return true;
}

/** JS heap used and RSS of this process after a forced GC, bytes (call only where `forceGc()` is true). */
export function memoryAfterGc(): { readonly heap: number; readonly rss: number } {
  forceGc();
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, rss: usage.rss };
}

/** The `SoakMemory` of a warm-up sample, an end sample and the number of samples taken. */
export function soakMemory(warm: { readonly heap: number; readonly rss: number }, end: { readonly heap: number; readonly rss: number }, samples: number): SoakMemory {
  return {
    samples,
    heapAfterWarmup: warm.heap,
    heapAtEnd: end.heap,
    rssAfterWarmup: warm.rss,
    rssAtEnd: end.rss,
    heapGrowth: (end.heap - warm.heap) / warm.heap,
    rssGrowth: (end.rss - warm.rss) / warm.rss,
  };
}

/**
 * Runs the image-pipeline soak graph (or `options.plan`) for `frames` frames in one session on a host backend (seeded
 * interleaving) or the CUDA backend, wrapped in a fault-free `FaultyBackend` that counts live handles,
 * sampling live stream and event counts, (with `--expose-gc`) heap and RSS after a forced GC, and on CUDA
 * the device's pool and free memory, after warm-up and at the end.
 * @throws HsError NotSupported for `backend: 'cuda'` without a usable device.
 */
export async function soak(options: SoakOptions): Promise<SoakOutcome> {
  const { frames, seed, warmupFraction = 0.1, sampleEveryMs = 250, backend: backendName = 'host' } = options;
  const inner: Backend = backendName === 'cuda' ? unwrap(CudaBackend.create()) : new HostBackend({ seed });
  const loaded = backendName === 'cuda' ? loadCudaNative() : null;
  const cuda = loaded !== null && loaded.ok ? loaded.binding : null;
  const backend = new FaultyBackend(inner);
  const graph = options.plan === undefined ? buildSoakGraph(frames, soakImages(seed)) : ok({ plan: options.plan });
  if (!graph.ok) throw graph.error;
  const created = RunSession.create(graph.value.plan, { backend });
  if (!created.ok) throw created.error;
  const session = created.value;
  const streamCounts = new Set<number>();
  const eventCounts = new Set<number>();
  const gcAvailable = forceGc();
  let warm = null as { readonly heap: number; readonly rss: number } | null;
  let warmDevice: DeviceSample | null = null;
  let samples = 0;
  const sample = (): void => {
    streamCounts.add(backend.live.streams);
    eventCounts.add(backend.live.events);
    const warmedUp = session.metrics().frames >= frames * warmupFraction;
    if (warm === null && gcAvailable && warmedUp) warm = memoryAfterGc();
    if (warmDevice === null && cuda !== null && warmedUp) warmDevice = deviceSample(cuda);
    samples += 1;
  };
  const started = performance.now();
  const sampler = setInterval(sample, sampleEveryMs);
  const ran = await outcomeOf(session.run({ drainTimeoutMs: 10_000 }));
  clearInterval(sampler);
  sample();
  const elapsedMs = performance.now() - started;
  const memory: SoakMemory | null = gcAvailable && warm !== null ? soakMemory(warm, memoryAfterGc(), samples) : null;
  const deviceMemory = cuda !== null && warmDevice !== null ? soakDeviceMemory(warmDevice, deviceSample(cuda)) : null;
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
    backend: backendName,
    deviceMemory,
    runError: ran.ok ? null : ran.error.message,
  };
}
