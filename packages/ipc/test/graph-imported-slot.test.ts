import { Device, ErrorCode, HostBackend, HsError, MemoryKind, unwrap, type Event } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { ImportedSlot } from '../src/graph/imported-slot.js';

function fixture(withEvents: boolean, releaseStreams = 2) {
  const backend = new HostBackend({ scheduling: 'manual' });
  const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 4096 }));
  const events: Event[] = withEvents ? Array.from({ length: releaseStreams }, (_, i) => unwrap(backend.createEvent(Device.cuda(0), { label: `release ${i}` }))) : [];
  const returned: number[] = [];
  const slot = new ImportedSlot(backend, memory, 'topic t[slot 1]', events, () => returned.push(1));
  return { backend, memory, slot, returned };
}

describe('ImportedSlot: an exporter slot held in the importing process', () => {
  it('binds the descriptor layout read-only with the given readiness, and returns the slot when the last lease of a host reader goes', () => {
    const { slot, returned } = fixture(false);
    unwrap(slot.lend(DType.float32, [4, 8], 1024, 2048, null));
    expect(slot.tensor.shape).toEqual([4, 8]);
    expect(slot.tensor.byteOffset).toBe(1024);
    expect(slot.tensor.readOnly).toBe(true);
    expect(slot.tensor.hasReadinessStreamContract()).toBe(true);
    expect(unwrap(slot.tensor.readinessFor(null))).toBeNull();
    expect(slot.tensor.mutableData().ok).toBe(false);
    unwrap(slot.acquireLease());
    slot.releaseLease(null);
    expect(returned).toEqual([]);
    slot.releaseLease(null);
    expect(returned).toEqual([1]);
    expect(slot.inUse).toBe(false);
    // The handle is stale once the slot went back.
    expect(slot.tensor.hostView().ok).toBe(false);
    expect(() => slot.releaseLease(null)).toThrow(HsError);
  });

  it('returns the slot only after the release stream passed its release event (polled, never waited)', () => {
    const { backend, memory, slot, returned } = fixture(true);
    const stream = unwrap(backend.createStream(Device.cuda(0)));
    unwrap(slot.lend(DType.uint8, [256], 0, 4096, null));
    unwrap(slot.registerReleaseStream(stream));
    unwrap(slot.registerReleaseStream(stream));
    unwrap(backend.memsetAsync(stream, { memory, byteOffset: 0, byteLength: 256, label: 'read' }, 1));
    slot.releaseLease(stream);
    expect(returned).toEqual([]);
    expect(slot.poll()).toBe(false);
    backend.runUntilIdle();
    expect(slot.poll()).toBe(true);
    expect(returned).toEqual([1]);
    expect(slot.poll()).toBe(false);
  });

  it('reclaim(): the lent tensor reports why (InvalidState), the leases still out release as no-ops, nothing is returned; the next lend serves again', () => {
    const { backend, slot, returned } = fixture(true);
    const stream = unwrap(backend.createStream(Device.cuda(0)));
    unwrap(slot.lend(DType.uint8, [16], 0, 4096, null));
    unwrap(slot.acquireLease());
    unwrap(slot.registerReleaseStream(stream));
    slot.reclaim('the publisher reclaimed this subscriber\'s slots');
    expect(slot.inUse).toBe(false);
    const view = slot.tensor.hostView();
    expect(view.ok ? null : [view.error.code, view.error.message]).toEqual([ErrorCode.InvalidState, expect.stringContaining("the publisher reclaimed this subscriber's slots")]);
    const more = slot.acquireLease();
    expect(more.ok ? null : more.error.message).toContain("not lent: the publisher reclaimed this subscriber's slots");
    slot.releaseLease(stream); // the consumer finishing: no release event recorded, nothing returned
    slot.releaseLease(null);
    expect(() => slot.releaseLease(null)).toThrow(/without a lease/);
    expect(slot.poll()).toBe(false);
    expect(returned).toEqual([]);
    unwrap(slot.lend(DType.uint8, [16], 0, 4096, null));
    slot.releaseLease(null);
    expect(returned).toEqual([1]);
  });

  it('caps distinct release streams, refuses unregistered ones, and abandon() returns nothing', () => {
    const { backend, slot, returned } = fixture(true);
    const [a, b, c] = [0, 1, 2].map(() => unwrap(backend.createStream(Device.cuda(0))));
    unwrap(slot.lend(DType.uint8, [16], 0, 4096, null));
    unwrap(slot.registerReleaseStream(a!));
    unwrap(slot.registerReleaseStream(b!));
    const third = slot.registerReleaseStream(c!);
    expect(third.ok ? null : third.error.code).toBe(ErrorCode.ResourceExhausted);
    expect(() => slot.releaseLease(c!)).toThrow(/never registered/);
    slot.abandon();
    expect(returned).toEqual([]);
    expect(slot.acquireLease().ok).toBe(false);
  });

  it('accepts no release stream when it has no events (a host-only consumer)', () => {
    const { backend, slot } = fixture(false);
    unwrap(slot.lend(DType.uint8, [16], 0, 4096, null));
    const registered = slot.registerReleaseStream(unwrap(backend.createStream(Device.cuda(0))));
    expect(registered.ok ? null : registered.error.code).toBe(ErrorCode.ResourceExhausted);
  });

  // Spec: "Fanout release-stream caps": the bound is device-wide, so forwarding one import to several
  // CUDA consumers stays inside it (the plan gives a subscribe endpoint two streams per CUDA operator).
  it('tracks as many release streams as the plan bound: an import forwarded to three CUDA-stream consumers returns once all three passed', () => {
    const { backend, memory, slot, returned } = fixture(true, 6);
    const consumers = [0, 1, 2].map((i) => unwrap(backend.createStream(Device.cuda(0), { label: `consumer ${i}` })));
    unwrap(slot.lend(DType.uint8, [64], 0, 4096, null));
    for (const stream of consumers) {
      unwrap(slot.registerReleaseStream(stream));
      unwrap(slot.acquireLease());
      unwrap(backend.memsetAsync(stream, { memory, byteOffset: 1024, byteLength: 64, label: 'consumer work' }, 1));
    }
    slot.releaseLease(null); // the channel's own lease
    for (const stream of consumers.slice(0, 2)) slot.releaseLease(stream);
    expect(slot.inUse).toBe(true);
    slot.releaseLease(consumers[2]!);
    expect(slot.poll()).toBe(false);
    expect(returned).toEqual([]);
    backend.runUntilIdle();
    expect(slot.poll()).toBe(true);
    expect(returned).toEqual([1]);
  });
});
