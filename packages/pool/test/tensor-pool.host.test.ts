import { Device, ErrorCode, HostBackend, MemoryKind, unwrap, type Result, type Stream } from '@hs/streams';
import { DType } from '@hs/tensor';
import { afterEach, describe, expect, it } from 'vitest';
import { TensorPool } from '../src/index.js';
import { countingBackend } from '../src/test/counting-backend.js';

const code = <T>(r: Result<T>): ErrorCode | undefined => (r.ok ? undefined : r.error.code);

describe('TensorPool on the host backend', () => {
  const backends: HostBackend[] = [];
  const make = (deviceCount = 1): HostBackend => {
    const b = new HostBackend({ scheduling: 'manual', deviceCount });
    backends.push(b);
    return b;
  };
  afterEach(() => {
    for (const b of backends.splice(0)) b.dispose();
  });

  it('a host-only pool creates no events and takes host readers only', () => {
    const { backend, tally } = countingBackend(make());
    const pool = unwrap(
      TensorPool.materialize(backend, {
        name: 'host frames',
        memoryKind: MemoryKind.Host,
        device: Device.cpu(),
        slotCount: 2,
        slotByteSpan: 32,
        maxRank: 1,
        producerStream: null,
      }),
    );
    expect(pool.eventDevice).toBeNull();
    expect(tally).toMatchObject({ liveAllocations: 1, liveEvents: 0 });
    const loan = unwrap(pool.allocateTensor({ shape: [32], dtype: DType.int8 }));
    const guard = unwrap(loan.write(null));
    unwrap(guard.tensor.mutableHostView()).fill(5);
    unwrap(guard.commit());
    const t = unwrap(loan.emit());
    const s = unwrap(backend.createStream(Device.cuda(0), { label: 'gpu reader' }));
    const refused = t.backing!.registerReleaseStream(s);
    expect(code(refused)).toBe(ErrorCode.NotSupported);
    expect(refused.ok ? '' : refused.error.message).toMatch(/host-only/);
    expect(Array.from(new Int8Array(unwrap(t.hostView()).buffer, unwrap(t.hostView()).byteOffset, 32))).toEqual(new Array(32).fill(5));
    expect(pool.retire()).toBe(1);
    pool.dispose();
    expect(tally).toMatchObject({ liveAllocations: 0, liveEvents: 0 });
  });

  it('a malformed shape throws but never keeps the slot it looked at', () => {
    const backend = make();
    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
    const pool = unwrap(
      TensorPool.materialize(backend, {
        name: 'frames',
        memoryKind: MemoryKind.CudaDevice,
        device: Device.cuda(0),
        slotCount: 2,
        slotByteSpan: 64,
        maxRank: 1,
        producerStream: producer,
      }),
    );
    for (const bad of [[null], ['64'], [64n], [[64]]]) {
      expect(() => pool.allocateTensor({ shape: bad as unknown as number[], dtype: DType.uint8 })).toThrowError(
        expect.objectContaining({ code: ErrorCode.InvalidArgument }),
      );
      expect(pool.available).toBe(2);
    }
    unwrap(pool.allocateTensor({ shape: [64], dtype: DType.uint8 }));
    expect(pool.available).toBe(1);
    pool.dispose();
  });

  it('refuses an absurd event inventory up front with ResourceExhausted, creating nothing', () => {
    const { backend, tally } = countingBackend(make());
    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
    const made = TensorPool.materialize(backend, {
      name: 'huge',
      memoryKind: MemoryKind.CudaDevice,
      device: Device.cuda(0),
      slotCount: 4,
      slotByteSpan: 64,
      maxRank: 1,
      maxReleaseStreams: 2 ** 23,
      producerStream: producer,
    });
    expect(code(made)).toBe(ErrorCode.ResourceExhausted);
    expect(made.ok ? '' : made.error.message).toMatch(/events/);
    expect(tally).toMatchObject({ liveAllocations: 0, liveEvents: 0 });
  });

  it('refuses release streams of another device with NotSupported', () => {
    const backend = make(2);
    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
    const pool = unwrap(
      TensorPool.materialize(backend, {
        name: 'gpu0',
        memoryKind: MemoryKind.CudaDevice,
        device: Device.cuda(0),
        slotCount: 1,
        slotByteSpan: 16,
        maxRank: 1,
        producerStream: producer,
      }),
    );
    const loan = unwrap(pool.allocateTensor({ shape: [16], dtype: DType.uint8 }));
    unwrap(unwrap(loan.write(producer)).commit());
    const t = unwrap(loan.emit());
    const other = unwrap(backend.createStream(Device.cuda(1), { label: 'gpu1 consumer' }));
    expect(code(t.backing!.registerReleaseStream(other))).toBe(ErrorCode.NotSupported);
    const mismatched = TensorPool.materialize(backend, {
      name: 'mismatch',
      memoryKind: MemoryKind.CudaDevice,
      device: Device.cuda(0),
      slotCount: 1,
      slotByteSpan: 16,
      maxRank: 1,
      producerStream: other,
    });
    expect(code(mismatched)).toBe(ErrorCode.InvalidArgument);
  });

  it('fails closed: a registered stream that never released keeps the slot; releasing on an unregistered stream throws', () => {
    const backend = make();
    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
    const pool = unwrap(
      TensorPool.materialize(backend, {
        name: 'strict',
        memoryKind: MemoryKind.CudaDevice,
        device: Device.cuda(0),
        slotCount: 1,
        slotByteSpan: 16,
        maxRank: 1,
        producerStream: producer,
      }),
    );
    const loan = unwrap(pool.allocateTensor({ shape: [16], dtype: DType.uint8 }));
    unwrap(unwrap(loan.write(producer)).commit());
    const t = unwrap(loan.emit());
    const reader = unwrap(backend.createStream(Device.cuda(0), { label: 'reader' }));
    const stranger = unwrap(backend.createStream(Device.cuda(0), { label: 'stranger' }));
    unwrap(t.backing!.registerReleaseStream(reader));
    unwrap(t.backing!.acquireLease());
    expect(() => t.backing!.releaseLease(stranger as Stream)).toThrow(/never registered/);
    t.backing!.releaseLease(null);
    backend.runUntilIdle();
    expect(pool.retire()).toBe(0);
    unwrap(t.backing!.acquireLease());
    const out = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 16 }));
    unwrap(backend.memcpyAsync(reader, { memory: out, byteOffset: 0, byteLength: 16, label: 'out' }, t.data()));
    t.backing!.releaseLease(reader);
    expect(pool.retire()).toBe(0); // recorded, not yet complete: manual scheduling has not run it
    backend.runUntilIdle();
    expect(pool.retire()).toBe(1);
  });

  it('releaseDevices: a reader on another GPU releases in stream order with release events of its own device', () => {
    const backend = make(3);
    const [cuda0, cuda1, cuda2] = [Device.cuda(0), Device.cuda(1), Device.cuda(2)];
    const producer = unwrap(backend.createStream(cuda0, { label: 'producer' }));
    const spec = { name: 'shared', memoryKind: MemoryKind.CudaDevice, device: cuda0, slotCount: 2, slotByteSpan: 16, maxRank: 1, maxReleaseStreams: 2, producerStream: producer };
    const pool = unwrap(TensorPool.materialize(backend, { ...spec, releaseDevices: [cuda1] }));
    expect(pool.releaseDevices).toEqual([cuda1]);
    const loan = unwrap(pool.allocateTensor({ shape: [16], dtype: DType.uint8 }));
    unwrap(unwrap(loan.write(producer)).commit());
    const t = unwrap(loan.emit());
    const remote = unwrap(backend.createStream(cuda1, { label: 'copy on cuda:1' }));
    const local = unwrap(backend.createStream(cuda0, { label: 'reader on cuda:0' }));
    const stranger = unwrap(backend.createStream(cuda2, { label: 'cuda:2 reader' }));
    const refused = t.backing!.registerReleaseStream(stranger);
    expect(code(refused)).toBe(ErrorCode.NotSupported);
    expect(refused.ok ? '' : refused.error.message).toMatch(/events are on cuda:0 and cuda:1; add cuda:2 to the pool's releaseDevices/);
    unwrap(t.backing!.registerReleaseStream(remote));
    unwrap(t.backing!.registerReleaseStream(local));
    unwrap(t.backing!.acquireLease());
    unwrap(t.backing!.acquireLease());
    const out = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: cuda1, byteSize: 16 }));
    unwrap(backend.memcpyAsync(remote, { memory: out, byteOffset: 0, byteLength: 16, label: 'out' }, t.data()));
    t.backing!.releaseLease(remote);
    t.backing!.releaseLease(local);
    expect(pool.retire()).toBe(0); // both recorded, neither run yet
    backend.runUntilIdle();
    expect(pool.retire()).toBe(1);
    backend.free(out);
    pool.dispose();

    // bad lists are refused before anything is made
    for (const [releaseDevices, message] of [
      [[Device.cpu()], /releaseDevices\[0\] is cpu.*CUDA devices/],
      [[cuda0], /repeats the event device/],
      [[cuda1, cuda1], /releaseDevices\[1\].*repeats/],
    ] as const) {
      const made = TensorPool.materialize(backend, { ...spec, releaseDevices });
      expect(code(made)).toBe(ErrorCode.InvalidArgument);
      expect(made.ok ? '' : made.error.message).toMatch(message);
    }
    expect(() => TensorPool.materialize(backend, { ...spec, releaseDevices: [1] as never })).toThrow(/releaseDevices must be an array of Devices/);
    // misuse with null arguments: typed errors, no raw TypeError, no slot taken
    const live = unwrap(TensorPool.materialize(backend, spec));
    expect(() => live.allocateTensor(null as never)).toThrow(/allocateTensor takes a request \{ shape, dtype \}, got null/);
    const lent = unwrap(live.allocateTensor({ shape: [16], dtype: DType.uint8 }));
    unwrap(unwrap(lent.write(producer)).commit());
    const published = unwrap(lent.emit());
    const nullStream = published.backing!.registerReleaseStream(null as never);
    expect(code(nullStream)).toBe(ErrorCode.InvalidArgument);
    expect(nullStream.ok ? '' : nullStream.error.message).toMatch(/takes the consumer's Stream, got null/);
    live.dispose();
    const hostOnly = TensorPool.materialize(backend, { ...spec, memoryKind: MemoryKind.Host, device: Device.cpu(), producerStream: null, releaseDevices: [cuda1] });
    expect(hostOnly.ok ? '' : hostOnly.error.message).toMatch(/needs the pool to have an event device/);
  });
});
