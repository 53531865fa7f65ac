import { TensorPool } from '@hs/pool';
import { Device, ErrorCode, HostBackend, MemoryKind, type Stream, unwrap } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Channel } from '../src/channel.js';
import { InputBinding, type InputRequirement } from '../src/input-binding.js';

const FRAME = 64;
const ANY: InputRequirement = { memoryKind: null, dtype: null, rank: null };

/**
 * A producer stream writing a device pool, a consumer stream reading it, and one channel between them,
 * on a manually stepped host backend with the ordering checker on.
 */
function rig(options: { maxReleaseStreams?: number } = {}) {
  const backend = new HostBackend({ scheduling: 'manual', seed: 7, orderingChecker: true });
  const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
  const consumer = unwrap(backend.createStream(Device.cuda(0), { label: 'consumer' }));
  const pool = unwrap(
    TensorPool.materialize(backend, {
      name: 'frames',
      memoryKind: MemoryKind.CudaDevice,
      device: Device.cuda(0),
      slotCount: 2,
      slotByteSpan: FRAME,
      maxRank: 1,
      producerStream: producer,
      ...(options.maxReleaseStreams === undefined ? {} : { maxReleaseStreams: options.maxReleaseStreams }),
    }),
  );
  const channel = new Channel('source.frames->sink.input', 2);
  /** Writes a frame on the producer stream, commits and emits it, and queues it with one lease (as publish does). */
  const produce = (value: number, deferOn?: 'producer'): Tensor => {
    const loan = unwrap(pool.allocateTensor({ shape: [FRAME], dtype: DType.uint8 }));
    if (deferOn === 'producer') unwrap(loan.deferReadiness());
    const guard = unwrap(loan.write(producer));
    unwrap(backend.memsetAsync(producer, guard.range, value));
    unwrap(guard.commit());
    const tensor = unwrap(loan.emit());
    unwrap(tensor.backing!.acquireLease());
    expect(channel.push(tensor)).toBe(true);
    return tensor;
  };
  const read = (stream: Stream, tensor: Tensor) =>
    unwrap(backend.launchKernel(stream, { name: 'test.read', reads: [tensor.data()], writes: [], params: [], host: () => {} }));
  const binding = (stream: Stream | null, fused = false) => new InputBinding(backend, stream, { name: 'input', channel, requirement: ANY, fused });
  const violations = () => backend.orderingChecker!.violations.length;
  disposers.push(() => {
    pool.dispose();
    backend.dispose();
  });
  return { backend, producer, consumer, pool, channel, produce, read, binding, violations };
}

const disposers: (() => void)[] = [];
afterEach(() => {
  for (const dispose of disposers.splice(0)) dispose();
});

describe('InputBinding (the consumer half of the stream contract)', () => {
  it('enqueues the readiness wait on the consumer stream: the consumer cannot run before the producer wrote', () => {
    const { backend, producer, consumer, produce, read, binding, violations } = rig();
    const tensor = produce(3);
    const input = binding(consumer);
    const wait = vi.spyOn(backend, 'streamWaitEvent');
    expect(input.receive()).toEqual({ ok: true, value: null });
    expect(input.current).toBe(tensor);
    expect(wait).toHaveBeenCalledTimes(1);
    expect(wait.mock.calls[0]![0]).toBe(consumer);
    expect(wait.mock.calls[0]![1]).toBe(tensor.readinessEvent);
    read(consumer, tensor);
    // The producer's memset and readiness record have not run, so the consumer's head (the wait) is blocked.
    expect(backend.step(consumer)).toBe(false);
    expect(backend.step(producer)).toBe(true);
    while (backend.step(producer));
    expect(backend.step(consumer)).toBe(true);
    backend.runUntilIdle();
    expect(violations()).toBe(0);
  });

  it('is what keeps the read ordered: the same read without receive() is a race the ordering checker reports', () => {
    const { backend, consumer, produce, read, violations } = rig();
    const tensor = produce(3);
    read(consumer, tensor);
    expect(backend.step(consumer)).toBe(true);
    backend.runUntilIdle();
    expect(violations()).toBeGreaterThan(0);
  });

  it('registers the consumer stream as a release stream and releases on it at activation end: the slot waits for the reads', () => {
    const { backend, producer, consumer, pool, produce, read, binding, violations } = rig();
    const tensor = produce(9);
    const input = binding(consumer);
    const register = vi.spyOn(tensor.backing!, 'registerReleaseStream');
    const release = vi.spyOn(tensor.backing!, 'releaseLease');
    unwrap(input.receive());
    expect(register).toHaveBeenCalledTimes(1);
    expect(register.mock.calls[0]![0]).toBe(consumer);
    read(consumer, tensor);
    expect(release).not.toHaveBeenCalled();
    input.release();
    expect(input.current).toBeUndefined();
    expect(release).toHaveBeenCalledTimes(1);
    expect(release.mock.calls[0]![0]).toBe(consumer);
    input.release(); // nothing current any more: a second end of activation does nothing
    expect(release).toHaveBeenCalledTimes(1);
    // The producer finished, but the consumer's read and release event are still queued: no recycle.
    while (backend.step(producer));
    expect(pool.retire()).toBe(0);
    expect(pool.available).toBe(1);
    backend.runUntilIdle();
    expect(pool.retire()).toBe(1);
    expect(pool.available).toBe(2);
    // Both slots are reused by the producer; had the slot not waited for the consumer, the checker would see a write-after-read.
    produce(10);
    produce(11);
    backend.runUntilIdle();
    expect(violations()).toBe(0);
  });

  it('allocates nothing per frame: no events are created and a stream consumer gets one shared result', () => {
    const { backend, consumer, pool, produce, read, binding, violations } = rig();
    const input = binding(consumer);
    const createEvent = vi.spyOn(backend, 'createEvent');
    const results = new Set<unknown>();
    for (let frame = 0; frame < 8; frame++) {
      const tensor = produce(frame);
      const received = input.receive();
      expect(received.ok).toBe(true);
      results.add(received);
      read(consumer, tensor);
      input.release();
      backend.runUntilIdle();
      expect(pool.retire()).toBe(1);
    }
    expect(results.size).toBe(1);
    expect(createEvent).not.toHaveBeenCalled();
    expect(violations()).toBe(0);
  });

  it('on a proven fused edge: no wait when the commit deferred readiness on this stream, no release registration, lease returned without a stream', () => {
    const { backend, producer, produce, binding, read, violations } = rig();
    const tensor = produce(5, 'producer');
    expect(tensor.readinessDeferred).toBe(true);
    const input = binding(producer, true);
    const wait = vi.spyOn(backend, 'streamWaitEvent');
    const record = vi.spyOn(backend, 'recordEvent');
    const register = vi.spyOn(tensor.backing!, 'registerReleaseStream');
    const release = vi.spyOn(tensor.backing!, 'releaseLease');
    unwrap(input.receive());
    read(producer, tensor);
    input.release();
    expect(wait).not.toHaveBeenCalled();
    expect(record).not.toHaveBeenCalled();
    expect(register).not.toHaveBeenCalled();
    expect(release.mock.calls).toEqual([[null]]);
    backend.runUntilIdle();
    expect(violations()).toBe(0);
  });

  it('for a host-only consumer returns the readiness event to wait on and registers no stream', () => {
    const { backend, produce, binding } = rig();
    const tensor = produce(1);
    const input = binding(null);
    const wait = vi.spyOn(backend, 'streamWaitEvent');
    const register = vi.spyOn(tensor.backing!, 'registerReleaseStream');
    const release = vi.spyOn(tensor.backing!, 'releaseLease');
    const received = unwrap(input.receive());
    expect(received).not.toBeNull();
    expect(received).toBe(tensor.readinessEvent);
    expect(wait).not.toHaveBeenCalled();
    expect(register).not.toHaveBeenCalled();
    input.release();
    expect(release.mock.calls).toEqual([[null]]);
  });

  it('fails closed when the release stream is refused: the lease goes back without a stream and nothing is current', () => {
    const { backend, consumer, channel, pool, produce, binding } = rig({ maxReleaseStreams: 1 });
    const tensor = produce(2);
    unwrap(tensor.backing!.acquireLease());
    expect(channel.push(tensor)).toBe(true); // a second edge to a second consumer
    const first = binding(consumer);
    const other = unwrap(backend.createStream(Device.cuda(0), { label: 'second consumer' }));
    const second = binding(other);
    unwrap(first.receive());
    const release = vi.spyOn(tensor.backing!, 'releaseLease');
    const refused = second.receive();
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error.code).toBe(ErrorCode.ResourceExhausted);
    expect(second.current).toBeUndefined();
    expect(release.mock.calls).toEqual([[null]]);
    first.release();
    backend.runUntilIdle();
    expect(pool.retire()).toBe(1);
  });

  it('rejects a tensor without a readiness stream contract with ProtocolError and gives its lease back', () => {
    const { consumer, channel, binding } = rig();
    // A tensor with no readiness contract, as an import before setReadinessStream() is.
    const uncommitted = { name: 'import', hasReadinessStreamContract: () => false, backing: { releaseLease: vi.fn() } } as unknown as Tensor;
    expect(channel.push(uncommitted)).toBe(true);
    const input = binding(consumer);
    const received = input.receive();
    expect(received.ok).toBe(false);
    if (!received.ok) {
      expect(received.error.code).toBe(ErrorCode.ProtocolError);
      expect(received.error.message).toContain('setReadinessStream()');
    }
    expect(input.current).toBeUndefined();
    expect(uncommitted.backing!.releaseLease).toHaveBeenCalledWith(null);
  });
});
