import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { TopicPublisher, ipcAvailability, type SubscriberLost } from '../src/index.js';

const consumerScript = fileURLToPath(new URL('./fixtures/topic-consumer.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'hs-ipc-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Child {
  readonly process: ChildProcess;
  readonly lines: Record<string, unknown>[];
  readonly exited: Promise<number | null>;
  waitFor(predicate: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

function startConsumer(topic: string, frames: number, mode = 'release'): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', consumerScript, dir, topic, String(frames), mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: Record<string, unknown>[] = [];
  const waiters: { predicate: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }[] = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>;
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      for (const w of waiters.splice(0)) (w.predicate(line) ? w.resolve(line) : waiters.push(w));
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    process: child,
    lines,
    exited,
    waitFor: (predicate) => {
      const seen = lines.find(predicate);
      return seen !== undefined ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
  };
}

/** Fills a frame: its index in the first 4 bytes, then byte i = (index + i) & 0xff. */
function fill(bytes: Uint8Array, index: number): void {
  new DataView(bytes.buffer, bytes.byteOffset, 4).setUint32(0, index, true);
  for (let i = 4; i < bytes.length; i++) bytes[i] = (index + i) & 0xff;
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function publishFrames(pub: TopicPublisher, frames: number, shape: number[], stopEarly?: () => boolean): Promise<number> {
  let exhausted = 0;
  for (let i = 0; i < frames; i++) {
    if (stopEarly?.() === true) return i;
    const loan = pub.pool.allocateTensor({ shape, dtype: DType.uint8 });
    if (!loan.ok) {
      expect(loan.error.code).toBe(ErrorCode.ResourceExhausted);
      exhausted++;
      i--;
      await tick();
      continue;
    }
    const guard = unwrap(loan.value.write(null));
    fill(unwrap(guard.tensor.mutableHostView()), i);
    unwrap(guard.commit());
    unwrap(pub.publish(unwrap(loan.value.emit())));
    if ((i & 63) === 0) await tick();
  }
  return exhausted;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now() - started;
}

describe.skipIf(!ipcAvailability().available)('two processes over a topic (host boundary pool)', () => {
  it('1e5 frames arrive bit-exact and every slot comes back (occupancy 0)', async () => {
    const backend = new HostBackend();
    const pub = await TopicPublisher.create({ backend, topic: 'bulk', memoryKind: MemoryKind.Host, slotCount: 16, slotByteSpan: 4096, maxRank: 2, runtimeDirectory: dir });
    const consumer = startConsumer('bulk', 100_000);
    await consumer.waitFor((l) => l['connected'] === true);
    await until(() => pub.subscriberCount === 1, 5000);
    await publishFrames(pub, 100_000, [4096]);
    const done = await consumer.waitFor((l) => 'received' in l || 'error' in l);
    expect(done).toEqual({ received: 100_000, mismatches: 0 });
    expect(await consumer.exited).toBe(0);
    await until(() => pub.occupancy === 0, 5000);
    expect(pub.pool.stats.available).toBe(16);
    await pub.close();
    backend.dispose();
    expect(readdirSync('/dev/shm').filter((n) => n.startsWith(`hs.${process.getuid!()}.${process.pid}.`))).toEqual([]);
  }, 120_000);

  it('a killed consumer: every slot it held is reclaimed within 1 s, a typed event, and publishing goes on', async () => {
    const backend = new HostBackend();
    const pub = await TopicPublisher.create({ backend, topic: 'kill-consumer', memoryKind: MemoryKind.Host, slotCount: 4, slotByteSpan: 1024, maxRank: 1, runtimeDirectory: dir });
    const lost: SubscriberLost[] = [];
    pub.on('subscriberLost', (e: SubscriberLost) => lost.push(e));
    const consumer = startConsumer('kill-consumer', 1_000_000, 'hold');
    await consumer.waitFor((l) => l['connected'] === true);
    await until(() => pub.subscriberCount === 1, 5000);
    // The holding consumer never releases: 4 frames fill the pool, the 5th allocation is exhausted at once.
    await publishFrames(pub, 4, [1024]);
    expect(pub.occupancy).toBe(4);
    const refused = pub.pool.allocateTensor({ shape: [1024], dtype: DType.uint8 });
    expect(refused.ok ? null : refused.error.code).toBe(ErrorCode.ResourceExhausted);
    consumer.process.kill('SIGKILL');
    const reclaimMs = await until(() => pub.occupancy === 0, 1000);
    expect(reclaimMs).toBeLessThan(1000);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ reason: 'closed', reclaimedLeases: 4, pid: consumer.process.pid });
    expect(lost[0]!.error.code).toBe(ErrorCode.InvalidState);
    expect(await publishFrames(pub, 8, [1024])).toBe(0);
    await pub.close();
    backend.dispose();
  }, 60_000);

  it('a hung consumer past leaseTimeoutMs is dropped and its slots reclaimed', async () => {
    const backend = new HostBackend();
    const pub = await TopicPublisher.create({ backend, topic: 'hung', memoryKind: MemoryKind.PinnedHost, slotCount: 2, slotByteSpan: 256, maxRank: 1, leaseTimeoutMs: 200, livenessIntervalMs: 50, runtimeDirectory: dir });
    const lost: SubscriberLost[] = [];
    pub.on('subscriberLost', (e: SubscriberLost) => lost.push(e));
    const consumer = startConsumer('hung', 1_000_000, 'hold');
    await consumer.waitFor((l) => l['connected'] === true);
    await until(() => pub.subscriberCount === 1, 5000);
    await publishFrames(pub, 2, [256]);
    await until(() => pub.occupancy === 0, 2000);
    expect(lost[0]).toMatchObject({ reason: 'leaseTimeout', reclaimedLeases: 2 });
    expect(lost[0]!.error.code).toBe(ErrorCode.ResourceExhausted);
    const told = await consumer.waitFor((l) => 'error' in l);
    expect(told['error']).toBe(ErrorCode.InvalidState);
    expect(await consumer.exited).toBe(0);
    await pub.close();
    backend.dispose();
  }, 60_000);

  it('a killed producer: the consumer gets a typed error and exits cleanly', async () => {
    const producer = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./fixtures/topic-producer.ts', import.meta.url)), dir, 'kill-producer'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => producer.stdout!.once('data', () => resolve()));
    const consumer = startConsumer('kill-producer', 1_000_000);
    await consumer.waitFor((l) => l['connected'] === true);
    producer.kill('SIGKILL');
    const told = await consumer.waitFor((l) => 'error' in l);
    expect(told['error']).toBe(ErrorCode.InvalidState);
    expect(String(told['detail'])).toContain('went away');
    expect(await consumer.exited).toBe(0);
  }, 60_000);
});
