import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostBackend } from '@hs/streams';
import { spawnTopicChildFor } from './topic-child.js';
import { runTopicProducer, type TopicRunReport } from './topic-graphs.js';

/** What the cross-process soak found. */
export interface CrossProcessSoakOutcome {
  readonly frames: number;
  readonly producer: TopicRunReport;
  readonly consumer: TopicRunReport;
  /** Boundary slots still out at the end plus frames lost or corrupted: 0 when clean. */
  readonly problems: number;
}

/**
 * The cross-process soak: a producer graph in this process publishes `frames` 4 KiB host frames to a
 * topic a consumer graph in a child process subscribes to; every byte is checked there, and the
 * boundary pool must have every slot back at the end.
 */
export async function crossProcessSoak(frames: number): Promise<CrossProcessSoakOutcome> {
  const dir = mkdtempSync(join(tmpdir(), 'hs-soak-topics-'));
  try {
    const consumer = spawnTopicChildFor('consumer', ['--topic', 'soak', '--memory', 'host', '--dir', dir]);
    const backend = new HostBackend();
    const producer = await runTopicProducer({ backend, topic: 'soak', memory: 'host', frames, awaitSubscribers: 1, runtimeDirectory: dir });
    const consumed = await consumer.report;
    backend.dispose();
    const problems =
      (producer.ok ? 0 : 1) + (consumed.ok ? 0 : 1) + Math.abs(producer.slotsOut) + consumed.badBytes + Math.abs(frames - consumed.frames);
    return { frames, producer, consumer: consumed, problems };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
