import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ipcAvailability } from '@hs/ipc';
import { HostBackend } from '@hs/streams';
import { afterAll, describe, expect, it } from 'vitest';
import { runTopicConsumer, runTopicProducer, topicProducerPlan } from '../src/topic-graphs.js';
import { spawnTopicChildFor } from '../src/topic-child.js';

// Two Node processes, a producer graph publishing a host topic and a consumer graph subscribing to it
// (POSIX shm boundary pool, descriptors over a Unix socket, host writer: no fence). HS_TOPIC_FRAMES
// overrides the 1e5 frames of the long run.
const FRAMES = Number(process.env['HS_TOPIC_FRAMES'] ?? 100_000);
const available = ipcAvailability();
if (!available.available) console.log(`cross-process topic tests skipped: ${available.reason}`);
const dir = mkdtempSync(join(tmpdir(), 'hs-topics-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!available.available)('cross-process topics: producer graph -> consumer graph (host)', () => {
  it('a pinnedHost topic written on the producer stream (the host backend emulates the fence): planned with generation fences, 5000 frames bit-exact', async () => {
    expect(topicProducerPlan('pinned-fenced', 1, 'pinnedHost').plan.pools[0]?.boundary?.fence).toBe('generation');
    const consumer = spawnTopicChildFor('consumer', ['--topic', 'pinned-fenced', '--memory', 'pinnedHost', '--dir', dir]);
    const backend = new HostBackend();
    const produced = await runTopicProducer({ backend, topic: 'pinned-fenced', memory: 'pinnedHost', frames: 5000, awaitSubscribers: 1, runtimeDirectory: dir });
    const consumed = await consumer.report;
    backend.dispose();
    expect(produced).toMatchObject({ ok: true, frames: 5000, slotsOut: 0 });
    expect(consumed).toMatchObject({ ok: true, frames: 5000, badBytes: 0 });
  }, 300_000);

  it(`delivers ${FRAMES} frames bit-exact and every boundary slot comes back (occupancy 0)`, async () => {
    const consumer = spawnTopicChildFor('consumer', ['--topic', 'bulk', '--memory', 'host', '--dir', dir]);
    const backend = new HostBackend();
    const produced = await runTopicProducer({ backend, topic: 'bulk', memory: 'host', frames: FRAMES, awaitSubscribers: 1, runtimeDirectory: dir });
    const consumed = await consumer.report;
    backend.dispose();
    expect(produced).toMatchObject({ ok: true, frames: FRAMES, slotsOut: 0 });
    expect(consumed).toMatchObject({ ok: true, frames: FRAMES, badBytes: 0 });
    console.log(`cross-process host topic: ${FRAMES} frames in ${produced.elapsedMs.toFixed(0)} ms (${Math.round(FRAMES / (produced.elapsedMs / 1000))} frames/s)`);
  }, 600_000);

  it('keeps the producer running and reclaims every slot when the consumer process is killed mid-stream', async () => {
    const consumer = spawnTopicChildFor('consumer', ['--topic', 'killed-consumer', '--memory', 'host', '--dir', dir]);
    const backend = new HostBackend();
    const producing = runTopicProducer({ backend, topic: 'killed-consumer', memory: 'host', frames: 20_000, awaitSubscribers: 1, runtimeDirectory: dir });
    await consumer.printed('progress 2000');
    consumer.process.kill('SIGKILL');
    const produced = await producing;
    const killed = await consumer.report;
    expect(killed.ok).toBe(false);
    backend.dispose();
    expect(produced).toMatchObject({ ok: true, frames: 20_000, slotsOut: 0 });
  }, 120_000);

  it('ends the consumer graph with a typed error when the producer process is killed', async () => {
    const producer = spawnTopicChildFor('producer', ['--topic', 'killed-producer', '--memory', 'host', '--frames', '10000000', '--dir', dir]);
    const backend = new HostBackend();
    const consumed = await runTopicConsumer({
      backend,
      topic: 'killed-producer',
      memory: 'host',
      runtimeDirectory: dir,
      onFrame: (n) => n === 2000 && producer.process.kill('SIGKILL'),
    });
    backend.dispose();
    await producer.report;
    expect(consumed.ok).toBe(false);
    expect(consumed.error).toMatch(/^InvalidState: .*went away/);
    expect(consumed.badBytes).toBe(0);
    expect(consumed.frames).toBeGreaterThanOrEqual(2000);
  }, 120_000);
});
