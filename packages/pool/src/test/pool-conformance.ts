// Over 500 lines: one suite of the whole TensorPool stream contract; its tests share the per-test harness and helpers.
import { Device, ErrorCode, MemoryKind, unwrap, type DeviceMemory, type MemoryRange, type Result, type Stream } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TensorPool, type TensorPoolSpec } from '@hs/pool';
import { countingBackend } from './counting-backend.js';
import type { PoolConformanceHarness } from './pool-harness.js';

const code = <T>(r: Result<T>): ErrorCode | undefined => (r.ok ? undefined : r.error.code);

/** What a harness cannot do, for {@link describePoolConformance}. */
export interface PoolConformanceOptions {
  /**
   * Why `harness.hold` cannot be used here. The one test that needs it (fan-out to three consumers) is
   * then skipped, and the suite logs this reason once.
   */
  readonly holdUnavailable?: string;
}

/**
 * Registers `TensorPool`'s stream contract as a vitest suite named `TensorPool conformance: <name>`. The
 * tests use only the `Backend` interface (fills, copies, events) plus the harness's `hold`/`settle`, so
 * the same cases run on the host backend, on the CUDA backend and on a backend of your own.
 *
 * Most tests materialize `cudaDevice` pools of a few 256-byte slots on `harness.device`. They check: a
 * consumer that waits on the readiness event sees what the producer stream wrote, with no ordering
 * violation; `commit` records readiness and `emit` publishes a read-only tensor (a second commit, write
 * or emit is `InvalidState`); a fanned-out slot recycles only after every consumer released it and the
 * held consumer's reads completed; a read lease keeps a slot even with no release stream; the 9th
 * distinct release stream at the default cap is `ResourceExhausted` (duplicates are free); a pool with
 * every slot in use answers `ResourceExhausted` at once and counts it; writes only on the producer
 * stream (`NotSupported` otherwise); `mutableData()` on a received tensor is `PermissionDenied`; a loan
 * or guard dropped early returns its slot; a materialization failing at any backend call (allocation or
 * event creation) returns that call's error and leaves nothing allocated; every event and the backing
 * exist before the first frame and no more are created while running; one tensor object per slot is
 * reused across frames; a request that breaks the declared spec is `InvalidArgument` and keeps the slot,
 * a zero `maxRank` or `slotByteSpan` refuses every request, and a bad spec is `InvalidArgument` before
 * anything is allocated; slots sit at aligned strides in one backing allocation; a `pinnedHost` pool
 * with a host writer (`write(null)`) is still released by CUDA consumers. Sizes are bytes. Spec: "Two
 * stream roles order every device tensor", "Pool mechanics: bounded by construction"
 * (holoscan-5.0-tensors-in-depth).
 *
 * @param name - Names the harness in the suite's title.
 * @param makeHarness - Called before every test for a fresh harness; the suite disposes it after the test.
 * @param options - What the harness cannot do.
 * @example A backend of your own that cannot hold a stream back, in a vitest test file
 * ```ts
 * // my-backend.pool-conformance.test.ts, run with `vitest run` (makeHostHarness is a harness that can hold)
 * import { unwrap, type Device, type Stream } from '@hs/streams';
 * import { describePoolConformance, type PoolConformanceHarness } from '@hs/pool/test';
 * import { MyBackend } from '../src/my-backend.js';
 *
 * const cannotHold = 'MyBackend has no way to hold a stream back';
 * function makeHarness(): PoolConformanceHarness {
 *   const backend = new MyBackend();
 *   const device = backend.devices[0] as Device;
 *   const streams: Stream[] = [];
 *   return {
 *     backend,
 *     device,
 *     createStream(label) {
 *       const stream = unwrap(backend.createStream(device, { label }));
 *       streams.push(stream);
 *       return stream;
 *     },
 *     hold() {
 *       throw new Error(cannotHold);
 *     },
 *     async settle() {
 *       for (const stream of streams) await backend.synchronizeStream(stream);
 *     },
 *     orderingViolations: () => 0,
 *     dispose: () => backend.dispose(),
 *   };
 * }
 *
 * describePoolConformance('MyBackend', makeHarness, { holdUnavailable: cannotHold });
 * ```
 */
export function describePoolConformance(name: string, makeHarness: () => PoolConformanceHarness, options: PoolConformanceOptions = {}): void {
  const holdUnavailable = options.holdUnavailable;
  if (holdUnavailable !== undefined) console.log(`TensorPool conformance (${name}): the test that holds a stream back is skipped: ${holdUnavailable}`);
  describe(`TensorPool conformance: ${name}`, () => {
    let h: PoolConformanceHarness;
    let producer: Stream;

    beforeEach(() => {
      h = makeHarness();
      producer = h.createStream('producer');
    });
    afterEach(() => h.dispose());

    const devicePool = (overrides: Partial<TensorPoolSpec> = {}): TensorPool =>
      unwrap(
        TensorPool.materialize(h.backend, {
          name: 'frames',
          memoryKind: MemoryKind.CudaDevice,
          device: h.device,
          slotCount: 3,
          slotByteSpan: 256,
          maxRank: 2,
          dtype: DType.uint8,
          producerStream: producer,
          ...overrides,
        }),
      );

    /** allocate, write on the producer stream with memset(value), commit, emit. */
    const produce = (pool: TensorPool, value: number, shape: number[] = [256]): Tensor => {
      const loan = unwrap(pool.allocateTensor({ shape, dtype: DType.uint8 }));
      const guard = unwrap(loan.write(producer));
      unwrap(h.backend.memsetAsync(producer, guard.range, value));
      unwrap(guard.commit());
      return unwrap(loan.emit());
    };

    /** The consumer side of a receive: wait on readiness, register the release stream, take a lease. */
    const receive = (tensor: Tensor, consumer: Stream): void => {
      const readiness = tensor.readinessEvent;
      if (readiness !== null) unwrap(h.backend.streamWaitEvent(consumer, readiness));
      const backing = tensor.backing;
      if (backing === null) throw new Error('pool tensors have a backing');
      unwrap(backing.registerReleaseStream(consumer));
      unwrap(backing.acquireLease());
    };

    const scratch = (byteSize: number): MemoryRange => {
      const memory: DeviceMemory = unwrap(h.backend.allocate({ kind: MemoryKind.CudaDevice, device: h.device, byteSize, label: 'consumer output' }));
      return { memory, byteOffset: 0, byteLength: byteSize, label: 'consumer output' };
    };

    /** Copies `range` to the host on `s` (the stream that wrote it) and waits. */
    const readBack = async (range: MemoryRange, s: Stream): Promise<Uint8Array> => {
      const dst = new Uint8Array(range.byteLength);
      unwrap(h.backend.copyToHostAsync(s, dst, range));
      // Both awaited together, so a rejected wait is handled while settle() runs.
      await Promise.all([h.backend.synchronizeStream(s), h.settle()]);
      return dst;
    };

    it('orders a consumer after the producer: the consumer stream sees the producer kernel output', async () => {
      const pool = devicePool();
      const consumer = h.createStream('consumer');
      const tensor = produce(pool, 0x2a);
      receive(tensor, consumer);
      const out = scratch(256);
      unwrap(h.backend.memcpyAsync(consumer, out, tensor.data()));
      tensor.backing?.releaseLease(consumer);
      const bytes = await readBack(out, consumer);
      expect(bytes.every((b) => b === 0x2a)).toBe(true);
      expect(h.orderingViolations()).toBe(0);
      expect(pool.retire()).toBe(1);
      expect(pool.available).toBe(3);
    });

    it('commit records readiness and nothing else: the tensor turns read-only with a contract, emit publishes it', () => {
      const pool = devicePool();
      const loan = unwrap(pool.allocateTensor({ shape: [16, 16], dtype: DType.uint8 }));
      expect(code(loan.emit())).toBe(ErrorCode.InvalidState);
      const guard = unwrap(loan.write(producer));
      expect(guard.stream).toBe(producer);
      expect(guard.tensor.readOnly).toBe(false);
      expect(guard.tensor.hasReadinessStreamContract()).toBe(false);
      expect(unwrap(guard.tensor.mutableData())).toBe(guard.range);
      expect(guard.range.byteLength).toBe(256);
      expect(code(loan.write(producer))).toBe(ErrorCode.InvalidState);
      unwrap(guard.commit());
      expect(code(guard.commit())).toBe(ErrorCode.InvalidState);
      const tensor = unwrap(loan.emit());
      expect(tensor).toBe(guard.tensor);
      expect(tensor.readOnly).toBe(true);
      expect(tensor.hasReadinessStreamContract()).toBe(true);
      expect(tensor.readinessEvent).not.toBeNull();
      expect(tensor.backing).not.toBeNull();
      expect(tensor.shape).toEqual([16, 16]);
      expect(tensor.device).toBe(h.device);
      expect(code(loan.emit())).toBe(ErrorCode.InvalidState);
      expect(pool.stats).toMatchObject({ slotCount: 3, available: 2, loaned: 0, published: 1, highWater: 1 });
    });

    it.skipIf(holdUnavailable !== undefined)('fans out to three consumers and recycles the slot only after all three release', async () => {
      const pool = devicePool({ slotCount: 2 });
      const consumers = [h.createStream('consumer A'), h.createStream('consumer B'), h.createStream('consumer C')];
      const tensor = produce(pool, 7);
      for (const c of consumers) receive(tensor, c);
      const release = h.hold(consumers[2] as Stream);
      const outs = consumers.map(() => scratch(256));
      consumers.forEach((c, i) => {
        unwrap(h.backend.memcpyAsync(c, outs[i] as MemoryRange, tensor.data()));
      });
      // Two consumers finished reading and released; the third still holds its lease.
      tensor.backing?.releaseLease(consumers[0] as Stream);
      tensor.backing?.releaseLease(consumers[1] as Stream);
      await h.settle();
      expect(pool.retire()).toBe(0);
      // The third releases, but its reads are held back on the device.
      tensor.backing?.releaseLease(consumers[2] as Stream);
      await h.settle();
      expect(pool.retire()).toBe(0);
      expect(pool.available).toBe(1);
      expect(tensor.data().byteLength).toBe(256);
      release();
      await h.settle();
      expect(pool.retire()).toBe(1);
      expect(pool.available).toBe(2);
      for (const [i, out] of outs.entries()) expect((await readBack(out, consumers[i] as Stream)).every((b) => b === 7)).toBe(true);
      expect(h.orderingViolations()).toBe(0);
      // The recycled handle is stale.
      expect(() => tensor.data()).toThrow(/stale/);
      expect(code(tensor.backing!.acquireLease())).toBe(ErrorCode.InvalidState);
    });

    it('keeps a published slot while a read lease is held, even with no release stream', () => {
      const pool = devicePool();
      const tensor = produce(pool, 1);
      unwrap(tensor.backing!.acquireLease());
      unwrap(tensor.backing!.acquireLease());
      expect(pool.retire()).toBe(0);
      tensor.backing?.releaseLease(null);
      expect(pool.retire()).toBe(0);
      tensor.backing?.releaseLease(null);
      expect(() => tensor.backing?.releaseLease(null)).toThrow(/without a held lease/);
      expect(pool.retire()).toBe(1);
      // A published tensor nobody took a lease on is recycled by the next retire().
      const unheld = produce(pool, 2);
      expect(pool.retire()).toBe(1);
      expect(() => unheld.data()).toThrow(/stale/);
    });

    it('rejects the 9th distinct release stream at the default cap with ResourceExhausted', () => {
      const pool = devicePool();
      expect(pool.maxReleaseStreams).toBe(8);
      const tensor = produce(pool, 3);
      const backing = tensor.backing!;
      const streams = Array.from({ length: 9 }, (_, i) => h.createStream(`consumer ${i}`));
      for (const s of streams.slice(0, 8)) expect(backing.registerReleaseStream(s).ok).toBe(true);
      const ninth = backing.registerReleaseStream(streams[8] as Stream);
      expect(code(ninth)).toBe(ErrorCode.ResourceExhausted);
      expect(ninth.ok ? '' : ninth.error.message).toMatch(/8 distinct release streams/);
    });

    it('does not count duplicate registrations against the cap', () => {
      const pool = devicePool({ maxReleaseStreams: 2 });
      const tensor = produce(pool, 3);
      const backing = tensor.backing!;
      const [a, b, c] = [h.createStream('a'), h.createStream('b'), h.createStream('c')];
      for (let i = 0; i < 10; i++) expect(backing.registerReleaseStream(a as Stream).ok).toBe(true);
      expect(backing.registerReleaseStream(b as Stream).ok).toBe(true);
      expect(backing.registerReleaseStream(a as Stream).ok).toBe(true);
      expect(code(backing.registerReleaseStream(c as Stream))).toBe(ErrorCode.ResourceExhausted);
    });

    it('returns ResourceExhausted at once when every slot is in use, and counts it', () => {
      const pool = devicePool({ slotCount: 2 });
      const a = unwrap(pool.allocateTensor({ shape: [8], dtype: DType.uint8 }));
      produce(pool, 1);
      const third = pool.allocateTensor({ shape: [8], dtype: DType.uint8 });
      expect(third).not.toBeInstanceOf(Promise);
      expect(code(third)).toBe(ErrorCode.ResourceExhausted);
      expect(code(pool.allocateTensor({ shape: [8], dtype: DType.uint8 }))).toBe(ErrorCode.ResourceExhausted);
      expect(pool.stats).toMatchObject({ available: 0, loaned: 1, published: 1, highWater: 2, exhaustions: 2 });
      a.abandon();
      expect(pool.allocateTensor({ shape: [8], dtype: DType.uint8 }).ok).toBe(true);
    });

    it('accepts writes only on the producer stream (NotSupported otherwise)', () => {
      const pool = devicePool();
      const other = h.createStream('not the producer');
      const loan = unwrap(pool.allocateTensor({ shape: [4], dtype: DType.uint8 }));
      const wrong = loan.write(other);
      expect(code(wrong)).toBe(ErrorCode.NotSupported);
      expect(wrong.ok ? '' : wrong.error.message).toMatch(/producer stream "producer"/);
      expect(code(loan.write(null))).toBe(ErrorCode.NotSupported);
      expect(loan.write(producer).ok).toBe(true);
    });

    it('returns PermissionDenied for mutableData() on a received tensor', () => {
      const pool = devicePool();
      const consumer = h.createStream('consumer');
      const tensor = produce(pool, 5);
      receive(tensor, consumer);
      expect(code(tensor.mutableData())).toBe(ErrorCode.PermissionDenied);
      expect(tensor.readOnly).toBe(true);
      expect(tensor.data().label).toBe('frames[slot 0]');
    });

    it('returns the slot when a loan or a guard is dropped early, and not after emit', () => {
      const pool = devicePool({ slotCount: 2 });
      const loan = unwrap(pool.allocateTensor({ shape: [8], dtype: DType.uint8 }));
      expect(pool.available).toBe(1);
      loan.abandon();
      expect(pool.available).toBe(2);
      expect(code(loan.write(producer))).toBe(ErrorCode.InvalidState);

      const loan2 = unwrap(pool.allocateTensor({ shape: [8], dtype: DType.uint8 }));
      const guard = unwrap(loan2.write(producer));
      const tensor = guard.tensor;
      guard.abandon();
      expect(pool.available).toBe(2);
      expect(code(guard.commit())).toBe(ErrorCode.InvalidState);
      expect(() => guard.range).toThrow(/stale/);
      expect(code(tensor.mutableData())).toBe(ErrorCode.InvalidState);
      loan2.abandon(); // already returned: nothing happens
      expect(pool.available).toBe(2);

      {
        using scoped = unwrap(pool.allocateTensor({ shape: [8], dtype: DType.uint8 }));
        using scopedGuard = unwrap(scoped.write(producer));
        expect(scopedGuard.range.byteLength).toBe(8);
        expect(pool.available).toBe(1);
      }
      expect(pool.available).toBe(2);

      {
        using committed = unwrap(pool.allocateTensor({ shape: [8], dtype: DType.uint8 }));
        unwrap(unwrap(committed.write(producer)).commit());
      }
      expect(pool.available).toBe(2);

      {
        using emitted = unwrap(pool.allocateTensor({ shape: [8], dtype: DType.uint8 }));
        using g = unwrap(emitted.write(producer));
        unwrap(g.commit());
        unwrap(emitted.emit());
      }
      expect(pool.available).toBe(1);
      expect(pool.stats.published).toBe(1);
    });

    it('leaves nothing allocated when materialization fails at any step', () => {
      const slotCount = 2;
      const maxReleaseStreams = 3;
      const creations = 1 + slotCount * (1 + maxReleaseStreams);
      for (let failAt = 1; failAt <= creations; failAt++) {
        const { backend, tally } = countingBackend(h.backend, failAt);
        const r = TensorPool.materialize(backend, {
          name: 'doomed',
          memoryKind: MemoryKind.CudaDevice,
          device: h.device,
          slotCount,
          slotByteSpan: 64,
          maxRank: 1,
          maxReleaseStreams,
          producerStream: producer,
        });
        expect(code(r)).toBe(ErrorCode.DeviceError);
        expect(tally.liveAllocations).toBe(0);
        expect(tally.liveEvents).toBe(0);
        expect(tally.allocateCalls + tally.createEventCalls).toBe(failAt);
      }
      const { backend, tally } = countingBackend(h.backend);
      const pool = unwrap(
        TensorPool.materialize(backend, {
          name: 'fine',
          memoryKind: MemoryKind.CudaDevice,
          device: h.device,
          slotCount,
          slotByteSpan: 64,
          maxRank: 1,
          maxReleaseStreams,
          producerStream: producer,
        }),
      );
      expect(tally).toMatchObject({ liveAllocations: 1, liveEvents: slotCount * (1 + maxReleaseStreams) });
      pool.dispose();
      pool.dispose();
      expect(tally).toMatchObject({ liveAllocations: 0, liveEvents: 0 });
      expect(code(pool.allocateTensor({ shape: [1], dtype: DType.uint8 }))).toBe(ErrorCode.InvalidState);
    });

    it('creates every event and the backing up front, and never creates more while running', async () => {
      const { backend, tally } = countingBackend(h.backend);
      const pool = unwrap(
        TensorPool.materialize(backend, {
          name: 'steady',
          memoryKind: MemoryKind.CudaDevice,
          device: h.device,
          slotCount: 2,
          slotByteSpan: 64,
          maxRank: 1,
          producerStream: producer,
        }),
      );
      const before = { ...tally };
      const consumer = h.createStream('consumer');
      for (let frame = 0; frame < 6; frame++) {
        const loan = unwrap(pool.allocateTensor({ shape: [64], dtype: DType.uint8 }));
        const guard = unwrap(loan.write(producer));
        unwrap(backend.memsetAsync(producer, guard.range, frame));
        unwrap(guard.commit());
        const t = unwrap(loan.emit());
        receive(t, consumer);
        t.backing?.releaseLease(consumer);
        await h.settle();
        const queries = tally.queryEventsCalls;
        expect(pool.retire()).toBe(1);
        expect(tally.queryEventsCalls).toBe(queries + 1);
      }
      expect(tally.allocateCalls).toBe(before.allocateCalls);
      expect(tally.createEventCalls).toBe(before.createEventCalls);
      expect(pool.retire()).toBe(0);
      pool.dispose();
    });

    it('reuses one tensor object per slot across frames and keeps the shape arrays for an unchanged shape', () => {
      const pool = devicePool({ slotCount: 1 });
      const first = produce(pool, 1, [4, 8]);
      const shape = first.shape;
      expect(pool.retire()).toBe(1);
      const second = produce(pool, 2, [4, 8]);
      expect(second).toBe(first);
      expect(second.shape).toBe(shape);
      expect(pool.retire()).toBe(1);
      const third = produce(pool, 3, [2, 8]);
      expect(third.shape).toEqual([2, 8]);
      expect(third.byteSize).toBe(16);
    });

    it('rejects requests that break the declared spec with InvalidArgument and keeps the slot', () => {
      const pool = devicePool({ slotCount: 1, maxRank: 2, slotByteSpan: 100, dtype: DType.uint16 });
      const bad = (shape: number[], dtype: DType = DType.uint16): ErrorCode | undefined => code(pool.allocateTensor({ shape, dtype }));
      expect(bad([2, 2, 2])).toBe(ErrorCode.InvalidArgument);
      expect(bad([4], DType.uint8)).toBe(ErrorCode.InvalidArgument);
      expect(bad([-1])).toBe(ErrorCode.InvalidArgument);
      expect(bad([2.5])).toBe(ErrorCode.InvalidArgument);
      expect(bad([51])).toBe(ErrorCode.InvalidArgument); // 102 bytes > 100
      expect(bad([2 ** 40, 2 ** 40])).toBe(ErrorCode.ArithmeticOverflow);
      const overBound = pool.allocateTensor({ shape: [10, 6], dtype: DType.uint16 });
      expect(overBound.ok ? '' : overBound.error.message).toMatch(/120 bytes, more than its 100-byte bound/);
      expect(pool.available).toBe(1);
      expect(pool.stats.highWater).toBe(0);
      expect(pool.allocateTensor({ shape: [50], dtype: DType.uint16 }).ok).toBe(true);
      expect(() => pool.allocateTensor({ shape: [1], dtype: 'uint16' as unknown as DType })).toThrow(/DType/);
      expect(() => pool.allocateTensor({ shape: 4 as unknown as number[], dtype: DType.uint16 })).toThrow(/array/);
    });

    it('rejects every allocation when maxRank or slotByteSpan is zero', () => {
      for (const overrides of [{ maxRank: 0 }, { slotByteSpan: 0 }]) {
        const pool = devicePool(overrides);
        const r = pool.allocateTensor({ shape: [], dtype: DType.uint8 });
        expect(code(r)).toBe(ErrorCode.InvalidArgument);
        expect(r.ok ? '' : r.error.message).toMatch(/rejects allocation/);
        expect(pool.available).toBe(3);
        pool.dispose();
      }
    });

    it('rejects bad specs before allocating anything', () => {
      const { backend, tally } = countingBackend(h.backend);
      const base: TensorPoolSpec = {
        name: 'bad',
        memoryKind: MemoryKind.CudaDevice,
        device: h.device,
        slotCount: 2,
        slotByteSpan: 64,
        maxRank: 1,
        producerStream: producer,
      };
      const cases: [Partial<TensorPoolSpec>, ErrorCode][] = [
        [{ slotCount: 0 }, ErrorCode.InvalidArgument],
        [{ slotCount: 1.5 }, ErrorCode.InvalidArgument],
        [{ slotByteSpan: -1 }, ErrorCode.InvalidArgument],
        [{ maxRank: -1 }, ErrorCode.InvalidArgument],
        [{ maxReleaseStreams: 0 }, ErrorCode.InvalidArgument],
        [{ alignment: 48 }, ErrorCode.InvalidArgument],
        [{ device: Device.cpu() }, ErrorCode.InvalidArgument],
        [{ producerStream: null }, ErrorCode.InvalidArgument],
        [{ memoryKind: MemoryKind.Host, device: Device.cpu() }, ErrorCode.InvalidArgument],
        [{ eventDevice: Device.cpu() }, ErrorCode.InvalidArgument],
        [{ slotCount: 2 ** 40, slotByteSpan: 2 ** 20 }, ErrorCode.ArithmeticOverflow],
      ];
      for (const [overrides, expected] of cases) {
        expect(code(TensorPool.materialize(backend, { ...base, ...overrides }))).toBe(expected);
      }
      expect(tally.allocateCalls + tally.createEventCalls).toBe(0);
      expect(() => TensorPool.materialize(backend, { ...base, device: 'cuda:0' as unknown as Device })).toThrow(/Device/);
    });

    it('lays slots out at aligned strides inside one backing allocation', () => {
      const pool = devicePool({ slotCount: 3, slotByteSpan: 300, alignment: 128 });
      expect(pool.memory.byteSize).toBe(3 * 384);
      const offsets = [0, 1, 2].map(() => {
        const loan = unwrap(pool.allocateTensor({ shape: [300], dtype: DType.uint8 }));
        return unwrap(loan.write(producer)).range.byteOffset;
      });
      expect(offsets.sort((a, b) => a - b)).toEqual([0, 384, 768]);
    });

    it('host writer pool: write(null), commit marks host-complete, CUDA consumers can still release', async () => {
      const pool = unwrap(
        TensorPool.materialize(h.backend, {
          name: 'camera',
          memoryKind: MemoryKind.PinnedHost,
          device: Device.cpu(),
          eventDevice: h.device,
          slotCount: 2,
          slotByteSpan: 64,
          maxRank: 1,
          producerStream: null,
        }),
      );
      const loan = unwrap(pool.allocateTensor({ shape: [64], dtype: DType.uint8 }));
      expect(code(loan.write(producer))).toBe(ErrorCode.NotSupported);
      const guard = unwrap(loan.write(null));
      unwrap(guard.tensor.mutableHostView()).fill(0x11);
      unwrap(guard.commit());
      const tensor = unwrap(loan.emit());
      expect(tensor.hasReadinessStreamContract()).toBe(true);
      expect(tensor.readinessEvent).toBeNull();
      await tensor.synchronizeForHost();
      expect(unwrap(tensor.hostView()).every((b) => b === 0x11)).toBe(true);

      const consumer = h.createStream('uploader');
      receive(tensor, consumer);
      const out = scratch(64);
      unwrap(h.backend.memcpyAsync(consumer, out, tensor.data()));
      tensor.backing?.releaseLease(consumer);
      expect((await readBack(out, consumer)).every((b) => b === 0x11)).toBe(true);
      expect(pool.retire()).toBe(1);
      expect(h.orderingViolations()).toBe(0);
    });
  });
}
