import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExecutionContext, Graph, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { RunSession, type RunMetrics, type TopicMetrics } from '@hs/runtime';
import { ErrorCode, HostBackend, HsError, MemoryKind, type Result, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { ChannelRuntime, IpcBoundaries, ipcAvailability, type TopicLease } from '../src/index.js';

// A subscriber the publisher drops is reported to the producing session (RunMetrics.topics, the
// 'metrics' event), while the producer runs on.
const available = ipcAvailability();
if (!available.available) console.log(`subscriber-loss tests skipped: ${available.reason}`);
const dir = mkdtempSync(join(tmpdir(), 'hs-subscriber-loss-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Host writer that never finishes by itself: frame i holds the byte i & 0xff. */
class EndlessSource extends Operator {
  out!: OutputPort;
  sent = 0;
  constructor() {
    super('source');
  }
  setup(spec: OperatorSpec): void {
    this.out = spec.output('frames').producesTensor({
      representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: 64 },
      storage: 'runtimePool',
    });
  }
  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.out, { shape: [64], dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const guard = unwrap(loan.value.write(null));
    unwrap(guard.tensor.mutableHostView()).fill(this.sent & 0xff);
    unwrap(guard.commit());
    this.sent += 1;
    return ctx.emit(this.out, loan.value);
  }
}

function producerPlan(topic: string) {
  const graph = new Graph('loss-producer');
  const source = graph.add(new EndlessSource());
  graph.publish(source.out, topic, { subscriberQueueDepth: 2 });
  return { plan: unwrap(compile(graph)), source };
}

/**
 * Runs the producer session until a 'metrics' event shows the drop and, after it, `framesAfter` more
 * frames (the producer kept publishing); returns the snapshot that first showed the drop and the run's end.
 */
async function runUntilDropSeen(session: RunSession, framesAfter: number): Promise<{ atDrop: RunMetrics; end: RunMetrics }> {
  let atDrop: RunMetrics | null = null;
  session.on('metrics', (m) => {
    const topic = m.topics[0] as TopicMetrics;
    if (atDrop === null && topic.subscribersLost > 0) atDrop = m;
    else if (atDrop !== null && m.frames >= atDrop.frames + framesAfter) void session.stop();
  });
  const end = await session.run({ drainTimeoutMs: 5000 });
  if (atDrop === null) throw new Error('the run ended without a metrics snapshot showing the dropped subscriber');
  return { atDrop, end };
}

describe.skipIf(!available.available)('a producing session sees the subscribers its publisher dropped (RunMetrics.topics)', () => {
  it('a subscriber holding a slot past leaseTimeoutMs: dropped with ResourceExhausted, counted in metrics, the producer goes on', async () => {
    const backend = new HostBackend();
    const { plan, source } = producerPlan('loss-hung');
    const boundaries = await IpcBoundaries.prepare(plan, { backend, runtimeDirectory: dir, awaitSubscribers: 1, leaseTimeoutMs: 100, livenessIntervalMs: 20 });
    const session = unwrap(RunSession.create(plan, { backend, boundaries, metricsIntervalMs: 5 }));
    expect(session.metrics().topics).toEqual([{ topic: 'loss-hung', poolId: 'pool:source.frames', subscribers: 0, subscribersLost: 0, reclaimedLeases: 0, lastLoss: null, losses: [] }]);
    const channel = await ChannelRuntime.connect({ backend, topic: 'loss-hung', runtimeDirectory: dir });
    // The subscriber takes every tensor and never releases one: the producer runs out of slots until the drop.
    const held: TopicLease[] = [];
    const hold = (async () => {
      for (;;) {
        const lease = await channel.receive().catch((error: HsError) => error);
        if (lease instanceof HsError) return lease;
        held.push(lease);
      }
    })();
    const { atDrop, end: final } = await runUntilDropSeen(session, 50);
    const dropped = atDrop.topics[0] as TopicMetrics;
    expect(dropped).toMatchObject({ topic: 'loss-hung', subscribers: 0, subscribersLost: 1 });
    expect(dropped.reclaimedLeases).toBe(held.length);
    expect(dropped.lastLoss).toMatchObject({ pid: process.pid, reason: 'leaseTimeout', code: ErrorCode.ResourceExhausted });
    expect(dropped.lastLoss?.detail).toContain('longer than 100 ms; its slots were reclaimed');
    expect(dropped.losses).toEqual([dropped.lastLoss]);
    expect(final.frames).toBeGreaterThanOrEqual(atDrop.frames + 50);
    expect(final.topics[0]).toMatchObject({ subscribersLost: 1, reclaimedLeases: held.length });
    expect(final.pools).toEqual([expect.objectContaining({ id: 'pool:source.frames', outstanding: 0 })]);
    expect(source.sent).toBe(final.frames);
    // The subscriber was told too: its next receive() fails with a typed error.
    expect((await hold).code).toBe(ErrorCode.InvalidState);
    // The producer rewrites the reclaimed slots, so the leases the subscriber still holds give no access.
    expect(held.length).toBeGreaterThan(0);
    for (const lease of held) {
      expect(lease.reclaimed).toBe(true);
      const view = lease.tensor.hostView();
      expect(view.ok ? null : view.error.code).toBe(ErrorCode.InvalidState);
      expect(lease.release().ok).toBe(true);
    }
    channel.close();
    session.dispose();
  });

  it('a subscriber that closes its connection mid-stream: dropped with InvalidState (closed), every lease it held reclaimed', async () => {
    const backend = new HostBackend();
    const { plan } = producerPlan('loss-closed');
    const boundaries = await IpcBoundaries.prepare(plan, { backend, runtimeDirectory: dir, awaitSubscribers: 1 });
    const session = unwrap(RunSession.create(plan, { backend, boundaries, metricsIntervalMs: 5 }));
    const channel = await ChannelRuntime.connect({ backend, topic: 'loss-closed', runtimeDirectory: dir });
    const closing = (async () => {
      for (let i = 0; i < 20; i++) unwrap((await channel.receive()).release());
      // Two leases still held when the connection ends: they come back to the producer.
      await channel.receive();
      await channel.receive();
      channel.close();
    })();
    const { atDrop, end } = await runUntilDropSeen(session, 50);
    await closing;
    // The two taken leases, and any descriptor still queued in the closed channel.
    const slotCount = plan.pool('pool:source.frames')!.slotCount;
    expect(atDrop.topics[0]).toMatchObject({ subscribers: 0, subscribersLost: 1 });
    expect(atDrop.topics[0]!.reclaimedLeases).toBeGreaterThanOrEqual(2);
    expect(atDrop.topics[0]!.reclaimedLeases).toBeLessThanOrEqual(slotCount);
    expect(atDrop.topics[0]?.lastLoss).toMatchObject({ reason: 'closed', code: ErrorCode.InvalidState, pid: process.pid });
    expect(end.pools).toEqual([expect.objectContaining({ outstanding: 0 })]);
    session.dispose();
  });
});
