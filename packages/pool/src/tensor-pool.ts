import {
  ErrorCode,
  HsError,
  err,
  leakTracker,
  ok,
  type Backend,
  type Device,
  type DeviceMemory,
  type Err,
  type Event,
  type MemoryKind,
  type Result,
  type Stream,
} from '@hs/streams';
import type { MemoryBlock, SyncResource } from '@hs/nanovdb-mr';
import { DType } from '@hs/tensor';
import { materializeInventory, releaseInventory, type PoolInventory } from './pool-inventory.js';
import { PoolSlot } from './pool-slot.js';
import { resolvePoolSpec, type ResolvedPoolSpec, type TensorPoolSpec } from './pool-spec.js';
import { SlotLedger } from './slot-ledger.js';
import type { TensorLoan } from './tensor-loan.js';

/** What `TensorPool.allocateTensor` is asked for. */
export interface TensorRequest {
  /** Elements per dimension; rank exactly the pool's declared `rank` when it has one, else at most `maxRank`; each a non-negative safe integer. */
  readonly shape: readonly number[];
  /** Element type; must be the pool's declared dtype when it has one. */
  readonly dtype: DType;
}

/** A snapshot of a pool's slot accounting. */
export interface TensorPoolStats {
  /** Slots in the pool, fixed when it was materialized (the plan's admitted slot count). */
  readonly slotCount: number;
  /** Free slots. */
  readonly available: number;
  /** Slots lent and not yet published (loaned, writing or committed). */
  readonly loaned: number;
  /** Published slots awaiting retirement. */
  readonly published: number;
  /** Most slots in use at once since materialization. */
  readonly highWater: number;
  /** `allocateTensor` calls that found no free slot. */
  readonly exhaustions: number;
}

/**
 * Pools collected without `dispose()` are reported; their backing stays with the backend until it is
 * disposed (a release stream may still read a slot, so nothing is freed behind it).
 */
const poolLeaks = leakTracker('TensorPool');

/**
 * A runtime tensor pool: one backing allocation cut into `slotCount` slots of `slotByteSpan` bytes,
 * materialized cold and only borrowed while the graph runs.
 *
 * - `allocateTensor` lends a free slot or fails at once with `ResourceExhausted`; it never waits and
 *   never allocates device memory.
 * - A loan is written only on the pool's producer stream (or by the host for a host-written pool),
 *   committed (readiness event), then emitted as a read-only tensor whose `backing` is the slot.
 * - Consumers register their streams as release streams (capped per slot, duplicates free) and take
 *   read leases; `retire()` recycles a published slot once its leases are all returned and every
 *   release event completed, found by one batched event query, never a host wait.
 *
 * Spec: "Pool mechanics: bounded by construction" ("Sized cold, borrowed hot", "Exhaustion fails fast",
 * "Fanout release-stream caps") and "Two stream roles order every device tensor".
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 * import { TensorPool } from '@hs/pool';
 *
 * const backend = new HostBackend();
 * const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
 * const pool = unwrap(TensorPool.materialize(backend, {
 *   name: 'frames', memoryKind: MemoryKind.CudaDevice, device: Device.cuda(0),
 *   slotCount: 2, slotByteSpan: 1024, maxRank: 2, dtype: DType.uint8, producerStream: producer,
 * }));
 * const loans = [pool.allocateTensor({ shape: [32, 32], dtype: DType.uint8 }), pool.allocateTensor({ shape: [32, 32], dtype: DType.uint8 })];
 * const third = pool.allocateTensor({ shape: [32, 32], dtype: DType.uint8 });
 * console.log(`third loan: ${third.ok ? 'lent' : third.error.code}`); // ResourceExhausted, at once: drop or degrade the frame
 * for (const loan of loans) if (loan.ok) loan.value.abandon();
 * pool.dispose();
 * ```
 */
export class TensorPool implements Disposable {
  readonly #backend: Backend;
  readonly #spec: ResolvedPoolSpec;
  readonly #inventory: PoolInventory;
  readonly #ledger: SlotLedger;
  readonly #slots: readonly PoolSlot[];
  /** Completion flags written by the batched release-event query; one byte per release event. */
  readonly #completed: Uint8Array;
  /** The release events one `retire()` polls, gathered from its candidate slots (reused; as long as the pool's release-event list). */
  readonly #polled: Event[];
  /** The exhaustion error, made at the first refusal and shared from then on (no allocation per refusal). */
  #exhausted: Err | null = null;
  readonly #rejectAll: Err | null;
  #disposed = false;
  /** Unregisters the pool from the leak report at `dispose()`. */
  readonly #leakToken = {};

  private constructor(backend: Backend, spec: ResolvedPoolSpec, inventory: PoolInventory) {
    this.#backend = backend;
    this.#spec = spec;
    this.#inventory = inventory;
    this.#ledger = new SlotLedger(spec.slotCount);
    const slots: PoolSlot[] = [];
    for (let i = 0; i < spec.slotCount; i++) slots.push(new PoolSlot(backend, spec, inventory, this.#ledger, i));
    this.#slots = slots;
    this.#completed = new Uint8Array(inventory.releaseEvents.length);
    this.#polled = inventory.releaseEvents.slice();
    poolLeaks.track(this, { label: `pool "${spec.name}" (${spec.slotCount} slots)` }, this.#leakToken);
    this.#rejectAll =
      spec.maxRank === 0 || spec.slotByteSpan === 0
        ? err(
            ErrorCode.InvalidArgument,
            `pool "${spec.name}" rejects allocation: its ${spec.maxRank === 0 ? 'maxRank' : 'slotByteSpan'} is 0, which means reject, not unbounded; declare a positive bound`,
          )
        : null;
  }

  /**
   * Validates `spec` and makes the pool's whole inventory: one backing block from the spec's resource
   * (see `TensorPoolSpec.resource`: stream-ordered on the producer stream for cudaDevice memory; default the
   * current device resource or the kind's default resource of `@hs/nanovdb-mr`), `slotCount` slots of
   * `slotByteSpan` bytes rounded up to `alignment`, one readiness event per
   * slot and `maxReleaseStreams` release events per slot on the event device and on each of `releaseDevices`,
   * plus all slot records. Errors are those of
   * the spec check (`InvalidArgument`, `ArithmeticOverflow`), `InvalidArgument` for a resource that declares or
   * hands out another memory kind, device or backend than the pool's (checked before allocating where the
   * resource declares its origin), and whatever the resource (`OutOfMemory`, …) and backend return; on any
   * failure everything already made is destroyed and freed before the error is returned.
   * @throws HsError `InvalidArgument` for wrong argument types in `spec`.
   * Spec: "Sized cold, borrowed hot".
   */
  static materialize(backend: Backend, spec: TensorPoolSpec): Result<TensorPool> {
    const resolved = resolvePoolSpec(spec);
    if (!resolved.ok) return resolved;
    const inventory = materializeInventory(backend, resolved.value);
    if (!inventory.ok) return inventory;
    return ok(new TensorPool(backend, resolved.value, inventory.value));
  }

  /** Diagnostics label. */
  get name(): string {
    return this.#spec.name;
  }
  /** Memory kind of every slot. */
  get memoryKind(): MemoryKind {
    return this.#spec.memoryKind;
  }
  /** Device of the backing allocation. */
  get device(): Device {
    return this.#spec.device;
  }
  /** CUDA device of the pool's events (the producer stream must be on it); `null` for a host-only pool. */
  get eventDevice(): Device | null {
    return this.#spec.eventDevice;
  }
  /** Devices besides `eventDevice` whose streams may release the pool's tensors (`TensorPoolSpec.releaseDevices`). */
  get releaseDevices(): readonly Device[] {
    return this.#spec.releaseDevices;
  }
  /** Number of slots. */
  get slotCount(): number {
    return this.#spec.slotCount;
  }
  /** Largest tensor a slot holds, in bytes. */
  get slotByteSpan(): number {
    return this.#spec.slotByteSpan;
  }
  /** Largest rank a request may have. */
  get maxRank(): number {
    return this.#spec.maxRank;
  }
  /** The declared dtype, or `null` when any dtype is accepted. */
  get dtype(): DType | null {
    return this.#spec.dtype;
  }
  /** Cap on distinct release streams per slot. */
  get maxReleaseStreams(): number {
    return this.#spec.maxReleaseStreams;
  }
  /** Slot alignment in bytes. */
  get alignment(): number {
    return this.#spec.alignment;
  }
  /** The only stream writes are accepted on; `null` for a host-written pool. */
  get producerStream(): Stream | null {
    return this.#spec.producerStream;
  }
  /** The allocation the backing block lies in. */
  get memory(): DeviceMemory {
    return this.#inventory.memory;
  }
  /** The one backing block (all slots), as the resource handed it out. */
  get backing(): MemoryBlock {
    return this.#inventory.block;
  }
  /** The resource the backing came from (the injected one, or the memory kind's default). */
  get resource(): SyncResource {
    return this.#inventory.resource;
  }
  /** Free slots now. */
  get available(): number {
    return this.#ledger.available;
  }

  /** A fresh snapshot of the slot accounting (allocates the returned object; not for the hot path). */
  get stats(): TensorPoolStats {
    const l = this.#ledger;
    return {
      slotCount: this.#spec.slotCount,
      available: l.available,
      loaned: l.loaned,
      published: l.published,
      highWater: l.highWater,
      exhaustions: l.exhaustions,
    };
  }

  /**
   * Lends a free slot as a tensor of `shape` and `dtype` (packed row-major at the slot's start).
   * Never waits. Returns `ResourceExhausted` when no slot is free (a shared, preallocated error);
   * `InvalidArgument` when the pool has a zero `maxRank` or `slotByteSpan` (it rejects every
   * allocation), the rank differs from the pool's declared `rank` (naming pool, declared and requested
   * rank) or exceeds `maxRank`, the dtype differs from the declared one, a dimension is
   * not a non-negative safe integer, or the tensor needs more than `slotByteSpan` bytes;
   * `ArithmeticOverflow` when its size is not a safe integer; `InvalidState` after `dispose()`.
   * Rank, dtype and zero bounds are checked first; the shape's values are checked when a slot is free.
   * Steady state (same shape as the slot's previous loan) allocates nothing.
   * @throws HsError `InvalidArgument` when `request` is not an object, `shape` not a number array or `dtype` not a `DType`.
   * Spec: "Sized cold, borrowed hot", "Exhaustion fails fast".
   */
  allocateTensor(request: TensorRequest): Result<TensorLoan> {
    // One test for every refusal but exhaustion (`#refusal` names it), so the steady frame stays small enough to inline.
    if (this.#disposed || this.#rejectAll !== null || typeof request !== 'object' || request === null) return this.#refusal(request);
    const { shape, dtype } = request;
    const spec = this.#spec;
    // The declared dtype, when there is one, is the only one accepted: an identity test, no `instanceof` walk.
    const declared = spec.dtype;
    if ((declared === null ? !(dtype instanceof DType) : dtype !== declared) || !Array.isArray(shape) || (spec.rank !== null && shape.length !== spec.rank) || shape.length > spec.maxRank) {
      return this.#refusal(request);
    }
    const index = this.#ledger.take();
    if (index < 0) return this.#exhaustion();
    const slot = this.#slots[index] as PoolSlot;
    let lent: Result<void>;
    try {
      lent = slot.lend(dtype, shape);
    } catch (thrown) {
      // A malformed shape is a programmer error and throws, but never keeps the slot.
      this.#ledger.untake(index);
      throw thrown;
    }
    if (!lent.ok) {
      this.#ledger.untake(index);
      return lent;
    }
    this.#ledger.lent();
    return slot.loanResult;
  }

  /**
   * Why `allocateTensor` refuses `request` before taking a slot, checked in its documented order.
   * @throws HsError `InvalidArgument` for a request that is not an object, a `dtype` that is not a `DType` or a
   *   `shape` that is not an array.
   */
  #refusal(request: TensorRequest): Err {
    if (this.#disposed) return err(ErrorCode.InvalidState, `pool "${this.#spec.name}" was disposed`);
    if (this.#rejectAll !== null) return this.#rejectAll;
    if (typeof request !== 'object' || request === null) {
      throw new HsError(ErrorCode.InvalidArgument, `pool "${this.#spec.name}": allocateTensor takes a request { shape, dtype }, got ${String(request)}`);
    }
    const { shape, dtype } = request;
    if (!(dtype instanceof DType)) throw new HsError(ErrorCode.InvalidArgument, `pool "${this.#spec.name}": request dtype must be a DType`);
    if (!Array.isArray(shape)) throw new HsError(ErrorCode.InvalidArgument, `pool "${this.#spec.name}": request shape must be an array of numbers`);
    const rank = this.#spec.rank;
    if (rank !== null && shape.length !== rank) {
      return err(ErrorCode.InvalidArgument, `pool "${this.#spec.name}": shape has rank ${shape.length}, but the output is declared with rank ${rank}; request a rank-${rank} shape`);
    }
    if (shape.length > this.#spec.maxRank) {
      return err(
        ErrorCode.InvalidArgument,
        `pool "${this.#spec.name}": shape has rank ${shape.length}, more than the declared maxRank ${this.#spec.maxRank}`,
      );
    }
    const declared = this.#spec.dtype as DType;
    return err(ErrorCode.InvalidArgument, `pool "${this.#spec.name}": dtype ${dtype.name} requested, but the pool is declared for ${declared.name}`);
  }

  /** The shared `ResourceExhausted` result, made at the first refusal. */
  #exhaustion(): Err {
    this.#exhausted ??= err(
      ErrorCode.ResourceExhausted,
      `pool "${this.#spec.name}": all ${this.#spec.slotCount} slots are in use; drop or degrade this frame, or raise the pool's bounds (allocation never waits)`,
    );
    return this.#exhausted;
  }

  /**
   * Recycles every published slot whose read leases are all returned and whose registered release
   * streams all recorded release events that completed. Polls with one `backend.queryEvents` call over
   * the release events of those candidate slots only, gathered into a preallocated list (skipped when no
   * candidate has an event to poll); never waits, allocates nothing. Returns the number of slots recycled.
   * Spec: "Two stream roles order every device tensor" (recycling), "Fanout release-stream caps".
   */
  retire(): number {
    if (this.#disposed) return 0;
    const slots = this.#slots;
    const polled = this.#polled;
    let candidates = 0;
    let count = 0;
    for (let i = 0; i < slots.length; i++) {
      const next = (slots[i] as PoolSlot).gatherReleaseEvents(polled, count);
      if (next < 0) continue;
      count = next;
      candidates++;
    }
    if (candidates === 0) return 0;
    if (count > 0) this.#backend.queryEvents(polled, this.#completed, count);
    let recycled = 0;
    for (let i = 0; i < slots.length; i++) if ((slots[i] as PoolSlot).tryRecycle(this.#completed)) recycled++;
    return recycled;
  }

  /**
   * Destroys the pool's events and frees its backing; every loan, guard and tensor of the pool turns
   * stale. Call it once the streams that used the pool are idle (device work still reading a slot
   * would read freed memory). Idempotent.
   */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    poolLeaks.untrack(this.#leakToken);
    for (const slot of this.#slots) slot.shutdown();
    releaseInventory(this.#backend, this.#spec, this.#inventory);
  }

  /** Same as `dispose()`. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}
