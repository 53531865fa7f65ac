import { Device, ErrorCode, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { ChannelRuntime, TopicPublisher, ipcAvailability, type SubscriberLost } from '../src/index.js';
import { TopicGraphSubscription } from '../src/graph/topic-graph-subscription.js';
import { subscribeEndpoint, testRuntimeDirectory, until } from './fixtures/topic-test-setup.js';

// Issue 21, defect 3: once the publisher reclaimed a subscriber's slots (a lease held past leaseTimeoutMs),
// the publisher may rewrite them, so what the subscriber still holds must stop giving access to the bytes.
const dir = testRuntimeDirectory('hs-ipc-reclaim-');

async function hungTopic(topic: string) {
  const backend = new HostBackend();
  // long enough that the descriptors arrive before the reclaim on a loaded CI machine
  const pub = await TopicPublisher.create({ backend, topic, memoryKind: MemoryKind.Host, slotCount: 4, slotByteSpan: 64, maxRank: 1, leaseTimeoutMs: 1000, livenessIntervalMs: 10, runtimeDirectory: dir });
  const lost: SubscriberLost[] = [];
  pub.on('subscriberLost', (l: SubscriberLost) => lost.push(l));
  const publish = (value: number): void => {
    const loan = unwrap(pub.pool.allocateTensor({ shape: [64], dtype: DType.uint8 }));
    const guard = unwrap(loan.write(null));
    unwrap(guard.tensor.mutableHostView()).fill(value);
    unwrap(guard.commit());
    unwrap(pub.publish(unwrap(loan.emit())));
  };
  return { backend, pub, lost, publish };
}

/** The InvalidState a reclaimed tensor's accessors give, checked to name the topic, the slot and why. */
async function expectReclaimed(tensor: Tensor, topic: string, slot: number): Promise<void> {
  const view = tensor.hostView();
  expect(view.ok).toBe(false);
  if (view.ok) return;
  expect(view.error.code).toBe(ErrorCode.InvalidState);
  expect(view.error.message).toContain(`topic ${topic}`);
  expect(view.error.message).toContain(`slot ${slot}`);
  expect(view.error.message).toContain('leaseTimeoutMs');
  await expect(tensor.synchronizeForHost()).rejects.toMatchObject({ code: ErrorCode.InvalidState });
}

const endpoint = subscribeEndpoint('reclaim-graph', { memoryKind: MemoryKind.Host, device: Device.cpu(), transport: 'posixShm', stream: null, maxReleaseStreams: 0 });

describe.skipIf(!ipcAvailability().available)('a lease the publisher reclaimed gives no access to the slot any more', () => {
  it('ChannelRuntime: after a lease-timeout GOODBYE the held and the queued leases return InvalidState (topic, slot, why); release() is a no-op', async () => {
    const { backend, pub, lost, publish } = await hungTopic('reclaim-channel');
    const channel = await ChannelRuntime.connect({ backend, topic: 'reclaim-channel', runtimeDirectory: dir });
    await until(() => pub.subscriberCount === 1, 'attach');
    publish(1);
    publish(2);
    const held = await channel.receive();
    expect(unwrap(held.tensor.hostView()).every((b) => b === 1)).toBe(true);
    await until(() => channel.closedError !== null, 'the lease-timeout GOODBYE', 5000);
    expect(lost).toEqual([expect.objectContaining({ reason: 'leaseTimeout', reclaimedLeases: 2 })]);
    expect(channel.closedError!.code).toBe(ErrorCode.InvalidState);
    expect(channel.closedError!.message).toContain('leaseTimeoutMs');
    // The publisher has the slots back and may rewrite them: the held lease gives no access now.
    expect(pub.occupancy).toBe(0);
    expect(held.reclaimed).toBe(true);
    expect(held.held).toBe(false);
    await expectReclaimed(held.tensor, 'reclaim-channel', held.slot);
    expect(held.release().ok).toBe(true); // harmless: nothing is sent
    expect(held.release().ok).toBe(true);
    // The queued one was reclaimed too: it is never handed out.
    const next = channel.tryReceive();
    expect(next.ok ? 'a lease' : next.error).toBe(channel.closedError);
    expect(channel.heldCount).toBe(0);
    channel.close();
    await pub.close();
    backend.dispose();
  });

  it('a graph input: after a lease-timeout GOODBYE the subscription fails and the tensor it lent returns InvalidState; its release is a no-op', async () => {
    const { backend, pub, publish } = await hungTopic('reclaim-graph');
    const subscription = new TopicGraphSubscription(backend, endpoint, null, { runtimeDirectory: dir, connectTimeoutMs: 2000 }, () => undefined);
    await subscription.start();
    await until(() => pub.subscriberCount === 1, 'attach');
    publish(3);
    let tensor: Tensor | undefined;
    await until(() => (tensor ??= subscription.next()) !== undefined, 'the descriptor');
    expect(unwrap(tensor!.hostView()).every((b) => b === 3)).toBe(true);
    await until(() => subscription.failure !== null, 'the lease-timeout GOODBYE');
    expect(subscription.failure!.code).toBe(ErrorCode.InvalidState);
    expect(pub.occupancy).toBe(0);
    await expectReclaimed(tensor!, 'reclaim-graph', 0);
    expect(tensor!.backing!.acquireLease().ok).toBe(false);
    expect(() => tensor!.backing!.releaseLease(null)).not.toThrow(); // the consumer finishing: nothing to return
    subscription.dispose();
    await pub.close();
    backend.dispose();
  });
});
