import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostBackend } from '@hs/streams';
import { forceGc, memoryAfterGc, soakMemory, type SoakMemory } from './soak.js';
import { spawnTopicChildFor } from './topic-child.js';
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
}

/**
 * The cross-process soak: a producer graph in this process publishes `frames` 4 KiB host frames to a
 * topic a consumer graph in a child process subscribes to; every byte is checked there, and the
 * boundary pool must have every slot back at the end. With `--expose-gc` the producer's heap and RSS
 * are sampled after warm-up and at the end (metrics every `sampleEveryMs`, default 250 ms).
 */
export async function crossProcessSoak(frames: number, sampleEveryMs = 250): Promise<CrossProcessSoakOutcome> {
  const dir = mkdtempSync(join(tmpdir(), 'hs-soak-topics-'));
  try {
    const consumer = spawnTopicChildFor('consumer', ['--topic', 'soak', '--memory', 'host', '--dir', dir]);
    const backend = new HostBackend();
    const gcAvailable = forceGc();
    let warm = null as { readonly heap: number; readonly rss: number } | null;
    let end = null as { readonly heap: number; readonly rss: number } | null;
    let samples = 0;
    const producer = await runTopicProducer({
      backend,
      topic: 'soak',
      memory: 'host',
      frames,
      awaitSubscribers: 1,
      runtimeDirectory: dir,
      metricsIntervalMs: sampleEveryMs,
      onMetrics: (metrics) => {
        samples += 1;
        if (!gcAvailable) return;
        if (warm === null && metrics.frames >= frames * CROSS_PROCESS_WARMUP_FRACTION) warm = memoryAfterGc();
        // The end sample: every frame sent, the session not yet disposed (its final metrics come before that).
        else if (metrics.frames >= frames) end = memoryAfterGc();
      },
    });
    const producerMemory = warm === null || end === null ? null : soakMemory(warm, end, samples);
    const consumed = await consumer.report;
    backend.dispose();
    const problems =
      (producer.ok ? 0 : 1) + (consumed.ok ? 0 : 1) + Math.abs(producer.slotsOut) + consumed.badBytes + Math.abs(frames - consumed.frames);
    return { frames, producer, consumer: consumed, problems, producerMemory };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
