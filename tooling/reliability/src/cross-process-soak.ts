import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCudaNative } from '@hs/cuda-native';
import { CudaBackend, HostBackend, unwrap, type Backend } from '@hs/streams';
import { deviceSample, forceGc, memoryAfterGc, soakDeviceMemory, soakMemory, type DeviceSample, type SoakBackend, type SoakDeviceMemory, type SoakMemory } from './soak.js';
import type { HostilePeerReport } from './hostile-peer.js';
import { spawnHostilePeer, spawnTopicChildFor } from './topic-child.js';
import { runTopicProducer, type TopicRunReport } from './topic-graphs.js';

/** Fraction of the cross-process soak's frames before the producer's memory baseline. */
export const CROSS_PROCESS_WARMUP_FRACTION = 0.1;

/** What the cross-process soak found. */
export interface CrossProcessSoakOutcome {
  readonly frames: number;
  readonly producer: TopicRunReport;
  readonly consumer: TopicRunReport;
  /** Boundary slots still out at the end plus frames lost or corrupted: 0 when clean. */
  readonly problems: number;
  /**
   * The producer process's JS heap and RSS after a forced GC, after warm-up (the first metrics sample past
   * `CROSS_PROCESS_WARMUP_FRACTION` of the frames) and at the end; null without `--expose-gc` or when
   * the run ended before a warm-up sample.
   */
  readonly producerMemory: SoakMemory | null;
  /** `host`: a host topic over POSIX shm; `cuda`: a device topic (CUDA IPC, generation fences) on device 0. */
  readonly backend: SoakBackend;
  /** On `cuda`: device 0's memory at the same two points as `producerMemory`; null on `host` or without a warm-up sample. */
  readonly deviceMemory: SoakDeviceMemory | null;
  /** Frames the good subscriber received per second of the producer's run. */
  readonly framesPerSecond: number;
  /** With `hostilePeers`: what the hostile peer did and the subscriber losses the publisher reported (`TopicMetrics.subscribersLost`); else null. */
  readonly hostile: (HostilePeerReport & { readonly subscribersLost: number }) | null;
}

/** Options of `crossProcessSoak`. */
export interface CrossProcessSoakOptions {
  /** `host` (default): host backend, host topic; `cuda`: CUDA backend on both sides, device topic. */
  readonly backend?: SoakBackend;
  /** Milliseconds between the producer's metrics samples; default 250. */
  readonly sampleEveryMs?: number;
  /**
   * Host topics: run a same-uid hostile peer (`hostile-peer`, a child process) with this many connections
   * beside the good subscriber for the whole run: connections that never ATTACH, malformed and partial
   * frames, instant reconnects, and `ftruncate` attempts on the publisher's segments. A segment it could
   * resize counts as a problem. Default 0: none.
   */
  readonly hostilePeers?: number;
}

/**
 * The cross-process soak: a producer graph in this process publishes `frames` 4 KiB frames to a topic a
 * consumer graph in a child process subscribes to; every byte is checked there, and the boundary pool
 * must have every slot back at the end. On `cuda` the frames are device tensors behind generation fences
 * and device 0's memory is sampled too. With `--expose-gc` the producer's heap and RSS are sampled after
 * warm-up and at the end (from the session's metrics, every `sampleEveryMs`). With `hostilePeers` (host
 * topics) a hostile same-uid peer attacks the topic for the whole run; the good subscriber must still get
 * every frame intact (compare `framesPerSecond` with a run without it).
 * @throws HsError NotSupported for `backend: 'cuda'` without a usable device.
 */
export async function crossProcessSoak(frames: number, options: CrossProcessSoakOptions = {}): Promise<CrossProcessSoakOutcome> {
  const { backend: backendName = 'host', sampleEveryMs = 250, hostilePeers = 0 } = options;
  const dir = mkdtempSync(join(tmpdir(), 'hs-soak-topics-'));
  try {
    const memory = backendName === 'cuda' ? 'cudaDevice' : 'host';
    const backend: Backend = backendName === 'cuda' ? unwrap(CudaBackend.create()) : new HostBackend();
    const loaded = backendName === 'cuda' ? loadCudaNative() : null;
    const cuda = loaded !== null && loaded.ok ? loaded.binding : null;
    const consumer = spawnTopicChildFor('consumer', ['--topic', 'soak', '--memory', memory, '--backend', backendName, '--dir', dir]);
    const gcAvailable = forceGc();
    let warm = null as { readonly heap: number; readonly rss: number } | null;
    let end = null as { readonly heap: number; readonly rss: number } | null;
    let warmDevice: DeviceSample | null = null;
    let endDevice: DeviceSample | null = null;
    let samples = 0;
    let warmedUp = false;
    const hostile = hostilePeers > 0 && backendName === 'host' ? spawnHostilePeer(join(dir, 'soak.sock'), process.pid, hostilePeers) : null;
    await hostile?.started;
    const producer = await runTopicProducer({
      backend,
      topic: 'soak',
      memory,
      frames,
      awaitSubscribers: 1,
      runtimeDirectory: dir,
      metricsIntervalMs: sampleEveryMs,
      onMetrics: (metrics) => {
        samples += 1;
        // The warm-up sample is the first past the warm-up fraction; the end sample comes once every frame
        // was sent, before the session is disposed (its final metrics come before that).
        const atWarmup = !warmedUp && metrics.frames >= frames * CROSS_PROCESS_WARMUP_FRACTION;
        const atEnd = warmedUp && metrics.frames >= frames;
        if (!atWarmup && !atEnd) return;
        warmedUp = true;
        const device = cuda === null ? null : deviceSample(cuda);
        const host = gcAvailable ? memoryAfterGc() : null;
        if (atWarmup) [warm, warmDevice] = [host, device];
        else [end, endDevice] = [host, device];
      },
    });
    const producerMemory = warm === null || end === null ? null : soakMemory(warm, end, samples);
    const deviceMemory = warmDevice === null || endDevice === null ? null : soakDeviceMemory(warmDevice, endDevice);
    const attacks = hostile === null ? null : await hostile.stop();
    const consumed = await consumer.report;
    backend.dispose();
    const resized = attacks?.truncations['ok'] ?? 0;
    const problems =
      (producer.ok ? 0 : 1) + (consumed.ok ? 0 : 1) + Math.abs(producer.slotsOut) + consumed.badBytes + Math.abs(frames - consumed.frames) + resized;
    const framesPerSecond = consumed.frames / Math.max(producer.elapsedMs / 1000, 1e-9);
    const hostileOutcome = attacks === null ? null : { ...attacks, subscribersLost: producer.topic?.subscribersLost ?? 0 };
    return { frames, producer, consumer: consumed, problems, producerMemory, backend: backendName, deviceMemory, framesPerSecond, hostile: hostileOutcome };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
