import { Device, ErrorCode, HostBackend, MemoryKind, unwrap, type Stream } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';
import { afterEach, describe, expect, it } from 'vitest';
import { TensorPool } from '../src/index.js';

/**
 * `copyToHostAsync` on a caller-owned stream keeps the slot out of reuse until the copy ran: the stream
 * becomes a release stream of the slot. Spec: "Fanout release-stream caps" (asynchronous copies retain
 * their stream-lifetime obligations), "Host access: the only blocking calls".
 */
describe('copyToHostAsync on a side stream and the pool slot it reads', () => {
  const backends: HostBackend[] = [];
  afterEach(() => {
    for (const b of backends.splice(0)) b.dispose();
  });

  function setup(maxReleaseStreams: number): { backend: HostBackend; pool: TensorPool; producer: Stream; produce: (value: number) => Tensor } {
    const backend = new HostBackend({ scheduling: 'manual', orderingChecker: true });
    backends.push(backend);
    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
    const pool = unwrap(
      TensorPool.materialize(backend, {
        name: 'frames',
        memoryKind: MemoryKind.CudaDevice,
        device: Device.cuda(0),
        slotCount: 1,
        slotByteSpan: 64,
        maxRank: 1,
        producerStream: producer,
        maxReleaseStreams,
      }),
    );
    const produce = (value: number): Tensor => {
      const loan = unwrap(pool.allocateTensor({ shape: [64], dtype: DType.uint8 }));
      const guard = unwrap(loan.write(producer));
      backend.memsetAsync(producer, unwrap(guard.tensor.mutableData()), value);
      unwrap(guard.commit());
      return unwrap(loan.emit());
    };
    return { backend, pool, producer, produce };
  }

  it('keeps the slot until the copy ran, so the next frame never overwrites bytes still being copied', () => {
    const { backend, pool, produce } = setup(2);
    const side = unwrap(backend.createStream(Device.cuda(0), { label: 'side copy' }));
    const host = new Uint8Array(64);
    const recycledBeforeCopy: number[] = [];
    for (let frame = 1; frame <= 8; frame++) {
      const tensor = produce(frame);
      // A host-side holder: lease, enqueue the copy on its own stream, return the lease at once.
      unwrap(tensor.backing!.acquireLease());
      unwrap(tensor.copyToHostAsync(host, side));
      tensor.backing!.releaseLease(null);
      recycledBeforeCopy.push(pool.retire()); // the copy has not run yet (manual scheduling)
      backend.runUntilIdle();
      pool.retire();
      expect(host[0]).toBe(frame);
    }
    // Without the side stream as a release stream, each next frame's write races the previous copy.
    expect(backend.orderingChecker!.violations.map((v) => v.hazard)).toEqual([]);
    expect(recycledBeforeCopy).toEqual(new Array(8).fill(0));
  });

  it('returns ResourceExhausted naming the cap before enqueueing anything', () => {
    const { backend, produce } = setup(1);
    const reader = unwrap(backend.createStream(Device.cuda(0), { label: 'reader' }));
    const side = unwrap(backend.createStream(Device.cuda(0), { label: 'side copy' }));
    const tensor = produce(3);
    unwrap(tensor.backing!.registerReleaseStream(reader));
    const host = new Uint8Array(64);
    const refused = tensor.copyToHostAsync(host, side);
    expect(refused.ok ? undefined : refused.error.code).toBe(ErrorCode.ResourceExhausted);
    expect(refused.ok ? '' : refused.error.message).toMatch(/1 distinct release streams, its cap/);
    backend.runUntilIdle();
    expect(host[0]).toBe(0); // nothing was copied
    // The already registered stream uses no capacity: the copy on it goes through.
    unwrap(tensor.copyToHostAsync(host, reader));
    backend.runUntilIdle();
    expect(host[0]).toBe(3);
  });
});
