// Over 500 lines: one class, one concept (a tensor view with its readiness contract, host access and layout checks); Runtime B reworks its lifetimes here.
import {
  ErrorCode,
  HsError,
  OK_VOID,
  err,
  isHostAccessible,
  leakTracker,
  ok,
  type Backend,
  type Device,
  type DeviceMemory,
  type Err,
  type Event,
  type MemoryKind,
  type MemoryRange,
  type Ok,
  type Result,
  type Stream,
} from '@hs/streams';
import { DType } from './dtype.js';
import { ImportBacking } from './import-backing.js';
import type { TensorBacking } from './tensor-backing.js';
import {
  assertNumberList,
  contiguousByteSize,
  contiguousStrides,
  describeDimsProblem,
  formatDims,
  sameDims,
  stridedByteSize,
} from './tensor-layout.js';

/** What every tensor is built from; passed by backings (pools, buffers) that subclass `Tensor`. */
export interface TensorInit {
  /** Backend that owns `memory` and orders access to it. */
  readonly backend: Backend;
  /** The allocation the tensor's bytes live in (the whole allocation, not just the tensor's span). */
  readonly memory: DeviceMemory;
  /** Storage owner that tracks release streams and read leases; `null` when nothing tracks them. */
  readonly backing: TensorBacking | null;
  /** Label used in diagnostics, `MemoryRange` labels and ordering-checker reports. */
  readonly name: string;
}

/**
 * A foreign allocation to wrap as a tensor (the DLPack import path).
 * Spec: "Foreign tensors imported through DLPack".
 */
export interface TensorImportOptions {
  /** Backend that owns `memory`. */
  readonly backend: Backend;
  /** The foreign allocation. */
  readonly memory: DeviceMemory;
  /** Elements per dimension; each a non-negative safe integer. */
  readonly shape: readonly number[];
  /** Element type (`DType.float32`, ...); its `itemSize` converts elements to bytes. */
  readonly dtype: DType;
  /** Elements between neighbours per dimension, non-negative; default row-major packed. */
  readonly strides?: readonly number[];
  /** Bytes from the start of `memory` to the first element; default 0. */
  readonly byteOffset?: number;
  /** Diagnostics label; default `imported <memory label>`. */
  readonly name?: string;
  /**
   * Called once when the last holder dropped (the importer's `dispose()` and every read lease) and the
   * streams those leases were released on passed: the foreign owner's release hook (DLPack's deleter).
   */
  readonly deleter?: () => void;
}

const EMPTY_DIMS: readonly number[] = Object.freeze([] as number[]);

/** The one result `readinessFor` returns when a reader needs no wait. */
const NO_READINESS: Ok<Event | null> = Object.freeze(ok<Event | null>(null));

/** DLPack imports collected without `dispose()` (and held by no lease) are reported and their deleter run. */
const importLeaks = leakTracker('Tensor (DLPack import)');

/**
 * A typed, shaped view of bytes in one backend allocation, with the stream contract that orders
 * access to it.
 *
 * - Layout: `shape` and `strides` count elements, `byteOffset` and `byteSize` count bytes.
 * - Readiness: a tensor is safe to read on a stream after that stream waits on `readinessEvent`. A pool
 *   tensor gets its contract when its write guard commits (an event on the producer stream, or
 *   host-complete for a host writer, which leaves nothing to wait for). An imported tensor has no
 *   contract until `setReadinessStream()`; without one it cannot be ordered and host access fails closed.
 * - Write access: only a pool tensor inside its write phase is writable; received (published) and
 *   imported tensors are read-only and `mutableData()` returns `PermissionDenied`.
 * - Host access (`synchronizeForHost`, `copyToHost`) is the only place anything waits.
 * - A pool reuses one `Tensor` object per slot. When the slot is recycled the handle turns stale and
 *   its accessors report `InvalidState` until the slot is lent again, so hold a tensor only while you
 *   hold one of its read leases.
 *
 * Spec: "Two stream roles order every device tensor", "Receive: the tensor arrives pre-ordered",
 * "Foreign tensors imported through DLPack", "Host access: the only blocking calls".
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { DType, Tensor } from '@hs/tensor';
 *
 * const backend = new HostBackend();
 * const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
 * const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 1024 }));
 * unwrap(backend.memsetAsync(producer, { memory, byteOffset: 0, byteLength: 1024, label: 'frame' }, 7));
 *
 * const frame = unwrap(Tensor.import({ backend, memory, shape: [16, 16], dtype: DType.float32 }));
 * unwrap(frame.setReadinessStream(producer));
 * const host = new Uint8Array(frame.byteSize);
 * await frame.copyToHost(host, unwrap(backend.createStream(Device.cuda(0)))); // rejects with an HsError on failure
 * console.log(`${frame.shape.join('x')} ${frame.dtype}, strides ${frame.strides}, first byte ${host[0]}`);
 * frame.dispose();
 * ```
 */
export class Tensor {
  readonly #backend: Backend;
  readonly #memory: DeviceMemory;
  readonly #backing: TensorBacking | null;
  readonly #name: string;

  #dtype: DType = DType.uint8;
  #shape: readonly number[] = EMPTY_DIMS;
  #strides: readonly number[] = EMPTY_DIMS;
  #byteOffset = 0;
  #byteSize = 0;
  #range: MemoryRange;
  #rangeResult: Ok<MemoryRange>;
  #hostView: Ok<Uint8Array> | null = null;
  /**
   * The `byteLimit` of the last successful `bindContiguous` (`-1`: none yet): with the same dtype, byte
   * offset, limit and dims, the layout it checked still holds and a rebind skips the checks.
   */
  #boundLimit = -1;
  /** The dims of that bind, unfrozen (V8 compares a frozen array's elements through a generic lookup). */
  #boundDims: readonly number[] = [];

  #valid = false;
  /** Why the handle went stale, when its backing said (see `invalidate`); null: the generic reason. */
  #staleWhy: string | null = null;
  #readOnly = true;
  #foreign = false;
  #readiness: Event | null = null;
  /** The last success `readinessFor` returned with an event (reused while `#readiness` is that event). */
  #readinessResult: Ok<Event | null> = NO_READINESS;
  /** Stream the readiness event still has to be recorded on (a deferred commit), or `null`. */
  #pendingOn: Stream | null = null;
  #hostComplete = false;
  #ownedEvent: Event | null = null;
  #deleter: (() => void) | null = null;
  /** The reference count of an import (also its `backing`); `null` for other tensors. */
  #importRef: ImportBacking | null = null;

  /**
   * Creates an unbound tensor over `init.memory`: stale (accessors report `InvalidState`) until a
   * subclass binds a layout with `bindContiguous`. Use `Tensor.import` to wrap foreign memory.
   */
  protected constructor(init: TensorInit) {
    this.#backend = init.backend;
    this.#memory = init.memory;
    this.#backing = init.backing;
    this.#name = init.name;
    this.#range = this.#makeRange(0, 0);
    this.#rangeResult = ok(this.#range);
  }

  /**
   * Wraps a foreign allocation (the DLPack import path). The result is permanently read-only and has
   * no readiness contract until `setReadinessStream()` names the stream its producer wrote on.
   * Returns `InvalidArgument` for a bad shape (entries not non-negative safe integers), strides of the
   * wrong rank or with negative entries, a byte offset that is not a non-negative safe integer, or a
   * span that does not fit inside `memory`; `ArithmeticOverflow` when the span is not a safe integer;
   * `InvalidState` for freed memory.
   * @throws HsError `InvalidArgument` when `shape`/`strides` are not number arrays or `dtype` is not a `DType`.
   * Spec: "Foreign tensors imported through DLPack".
   */
  static import(options: TensorImportOptions): Result<Tensor> {
    const { backend, memory, shape, dtype } = options;
    assertNumberList(shape, 'shape');
    if (!(dtype instanceof DType)) throw new HsError(ErrorCode.InvalidArgument, 'dtype must be a DType (for example DType.float32)');
    if (options.strides !== undefined) assertNumberList(options.strides, 'strides');
    const name = options.name ?? `imported ${memory.label}`;
    if (memory.freed) return err(ErrorCode.InvalidState, `cannot import "${name}": its memory was already freed`);

    const shapeProblem = describeDimsProblem(shape, 'shape');
    if (shapeProblem !== null) return err(ErrorCode.InvalidArgument, `cannot import "${name}": ${shapeProblem}`);
    const strides = options.strides ?? contiguousStrides(shape);
    if (strides.length !== shape.length) {
      return err(
        ErrorCode.InvalidArgument,
        `cannot import "${name}": strides ${formatDims(strides)} have rank ${strides.length} but shape ${formatDims(shape)} has rank ${shape.length}; give one stride per dimension`,
      );
    }
    const strideProblem = describeDimsProblem(strides, 'strides');
    if (strideProblem !== null) {
      return err(ErrorCode.InvalidArgument, `cannot import "${name}": ${strideProblem} (negative strides are not supported; copy into a packed tensor)`);
    }
    const byteOffset = options.byteOffset ?? 0;
    if (!Number.isSafeInteger(byteOffset) || byteOffset < 0) {
      return err(ErrorCode.InvalidArgument, `cannot import "${name}": byteOffset is ${String(byteOffset)}; it must be a non-negative safe integer (bytes)`);
    }
    const byteSize = stridedByteSize(shape, strides, dtype.itemSize);
    if (!Number.isSafeInteger(byteSize)) {
      return err(ErrorCode.ArithmeticOverflow, `cannot import "${name}": shape ${formatDims(shape)} of ${dtype.name} spans more than 2^53 bytes`);
    }
    if (byteOffset + byteSize > memory.byteSize) {
      return err(
        ErrorCode.InvalidArgument,
        `cannot import "${name}": bytes ${byteOffset}..${byteOffset + byteSize} lie outside its ${memory.byteSize}-byte allocation; check shape, strides and byteOffset`,
      );
    }

    // The backing calls back once the last holder dropped; `tensor` is assigned before anyone can hold it.
    let tensor: Tensor | null = null;
    const backing = new ImportBacking(backend, name, () => (tensor as Tensor).#end());
    tensor = new Tensor({ backend, memory, backing, name });
    tensor.#importRef = backing;
    tensor.#setLayout(dtype, Object.freeze(shape.slice()), Object.isFrozen(strides) ? strides : Object.freeze(strides.slice()), byteOffset, byteSize);
    tensor.#foreign = true;
    tensor.#readOnly = true;
    tensor.#valid = true;
    tensor.#deleter = options.deleter ?? null;
    // Dropped without dispose() and held by no lease: the last reference is gone, so the deleter runs (DLPack).
    importLeaks.track(tensor, { label: `imported tensor "${name}"`, ...(options.deleter === undefined ? {} : { release: options.deleter }) }, backing);
    return ok(tensor);
  }

  /** Element type. */
  get dtype(): DType {
    return this.#dtype;
  }
  /** Elements per dimension (frozen). */
  get shape(): readonly number[] {
    return this.#shape;
  }
  /** Elements between neighbours per dimension (frozen). */
  get strides(): readonly number[] {
    return this.#strides;
  }
  /** Bytes from the start of `memory` to the first element. */
  get byteOffset(): number {
    return this.#byteOffset;
  }
  /** Bytes spanned from the first element to the end of the last (0 for an empty tensor). */
  get byteSize(): number {
    return this.#byteSize;
  }
  /** Device of the memory (`cpu` for host and pinned host memory). */
  get device(): Device {
    return this.#memory.device;
  }
  /** Memory kind of the allocation. */
  get memoryKind(): MemoryKind {
    return this.#memory.kind;
  }
  /** Diagnostics label. */
  get name(): string {
    return this.#name;
  }
  /** The allocation the bytes live in. */
  get memory(): DeviceMemory {
    return this.#memory;
  }
  /**
   * Release-stream and lease tracking of the storage: the pool slot, or for an import its reference
   * count (a lease keeps the import alive past the importer's `dispose()`); `null` when nothing tracks it.
   */
  get backing(): TensorBacking | null {
    return this.#backing;
  }
  /** True unless this is a pool tensor inside its write phase. Imported tensors are always read-only. */
  get readOnly(): boolean {
    return this.#readOnly;
  }
  /**
   * Event consumers wait on before reading; `null` when there is none (no contract, or host-complete).
   * A deferred readiness event (see `readinessFor`) is recorded now, on its producer stream.
   * @throws HsError the backend's error when that lazy record fails (fail closed).
   */
  get readinessEvent(): Event | null {
    const resolved = this.#resolvePending();
    if (!resolved.ok) throw resolved.error;
    return this.#readiness;
  }

  /** True while the readiness event is retained but not yet recorded (a commit on a proven fused edge). */
  get readinessDeferred(): boolean {
    return this.#pendingOn !== null;
  }

  /**
   * The event a reader on `stream` (`null`: the host) must wait on, or `null` when it needs none. When
   * the commit deferred its readiness record and `stream` is the producer stream itself, stream order
   * already implies readiness and nothing is recorded; any other reader makes the tensor record the
   * retained event now on the producer stream (the lazy fallback) and gets it.
   * Spec: "When the fences disappear: proven linear chains".
   * @returns the event or `null`; the backend's error when the lazy record fails.
   */
  readinessFor(stream: Stream | null): Result<Event | null> {
    if (this.#pendingOn !== null && stream === this.#pendingOn) return NO_READINESS;
    const resolved = this.#resolvePending();
    if (!resolved.ok) return resolved;
    const event = this.#readiness;
    if (event === null) return NO_READINESS;
    // One result per event, reused while the event stays the same (a pool slot's), so the receive path allocates nothing.
    if (this.#readinessResult.value !== event) this.#readinessResult = Object.freeze(ok<Event | null>(event));
    return this.#readinessResult;
  }

  /**
   * True when readers can be ordered after the producer: a readiness event was recorded, or a host
   * writer committed (host-complete). False for an import before `setReadinessStream()` and for a pool
   * tensor before its commit. Stream-aware consumers must not use a tensor without a contract.
   */
  hasReadinessStreamContract(): boolean {
    return this.#valid && (this.#readiness !== null || this.#hostComplete);
  }

  /**
   * The tensor's bytes for reading: `byteSize` bytes at `byteOffset` in `memory`, labelled with `name`.
   * The same object is returned while the layout is unchanged.
   * @throws HsError `InvalidState` when this handle is stale (its slot was recycled or it was disposed).
   */
  data(): MemoryRange {
    this.#assertValid();
    return this.#range;
  }

  /**
   * The tensor's bytes for writing. `PermissionDenied` for a received (published) or imported tensor:
   * write authority ends at commit, and imports never have it. `InvalidState` when stale.
   */
  mutableData(): Result<MemoryRange> {
    if (!this.#valid) return this.#staleError();
    if (this.#readOnly) return this.#readOnlyError();
    return this.#rangeResult;
  }

  /**
   * Names the stream a foreign producer issued its writes on: records a readiness event there (created
   * on first use on the stream's device), giving the import a readiness contract. Never blocks. Only
   * for imported tensors: `NotSupported` otherwise (a pool tensor's readiness comes from its commit).
   * `InvalidState` after `dispose()`; backend errors are passed through.
   * Spec: "Foreign tensors imported through DLPack".
   */
  setReadinessStream(stream: Stream): Result<void> {
    if (!this.#foreign) {
      return err(ErrorCode.NotSupported, `tensor "${this.#name}" gets its readiness from its write guard's commit; setReadinessStream is for imported tensors`);
    }
    if (!this.#valid) return this.#staleError();
    let event = this.#ownedEvent;
    if (event !== null && event.device !== stream.device) {
      this.#backend.destroyEvent(event);
      this.#ownedEvent = null;
      this.#readiness = null;
      event = null;
    }
    if (event === null) {
      const created = this.#backend.createEvent(stream.device, { label: `${this.#name} readiness` });
      if (!created.ok) return created;
      event = created.value;
      this.#ownedEvent = event;
    }
    const recorded = this.#backend.recordEvent(event, stream);
    if (!recorded.ok) return recorded;
    this.#readiness = event;
    return OK_VOID;
  }

  /**
   * Waits until the producer's writes are complete, after which host reads through `hostView()` are
   * safe. Resolves (with nothing) then, at once for a host-complete tensor. Rejects with an `HsError`:
   * `InvalidState` when stale or without a readiness contract (call `setReadinessStream()` on an import
   * first); the backend's errors from recording a deferred readiness event or from waiting on it
   * (`DeviceError` when the producer's work faulted, `InvalidState` when the backend was disposed). One of
   * the explicit host waits: keep it off the per-frame path. Spec: "Host access: the only blocking calls".
   * @example
   * ```ts
   * await tensor.synchronizeForHost(); // rejects with an HsError (InvalidState for a stale tensor)
   * const bytes = unwrap(tensor.hostView());
   * ```
   */
  synchronizeForHost(): Promise<void> {
    const blocked = this.#checkReadable();
    if (blocked !== null) return Promise.reject(blocked.error);
    const resolved = this.#resolvePending();
    if (!resolved.ok) return Promise.reject(resolved.error);
    if (this.#readiness === null) return Promise.resolve();
    return this.#backend.synchronizeEvent(this.#readiness);
  }

  /**
   * Copies the tensor's `byteSize` bytes into the start of `dst` through `stream`, then waits for that
   * stream: resolves (with nothing) once `dst` holds the bytes. Rejects with an `HsError`: the failures
   * of `copyToHostAsync` (`InvalidArgument` for a short or non-`Uint8Array` `dst`, `InvalidState` when
   * stale or without a readiness contract, the backend's errors) and of the stream wait (`DeviceError`
   * when work on `stream` faulted, `InvalidState` for a destroyed stream or a disposed backend). An
   * explicit host wait. Spec: "Host access".
   * @example
   * ```ts
   * const host = new Uint8Array(tensor.byteSize);
   * await tensor.copyToHost(host, stream); // rejects with an HsError (InvalidArgument for a short dst, DeviceError, …)
   * ```
   */
  async copyToHost(dst: Uint8Array, stream: Stream): Promise<void> {
    const refused = this.#checkCopy(dst);
    if (refused !== null) throw refused.error;
    const backing = this.#backing;
    // A lease (not a release stream) keeps the storage until the wait below returned: a finished blocking
    // copy leaves no obligation on `stream`. Spec: "Fanout release-stream caps".
    if (backing !== null) {
      const leased = backing.acquireLease();
      if (!leased.ok) throw leased.error;
    }
    try {
      const enqueued = this.#enqueueCopyToHost(dst, stream);
      if (!enqueued.ok) throw enqueued.error;
      await this.#backend.synchronizeStream(stream);
    } finally {
      backing?.releaseLease(null);
    }
  }

  /**
   * Enqueues, on `stream`, a wait on the readiness event and then a copy of the tensor's `byteSize`
   * bytes into the start of `dst`; returns at once. Read `dst` only after you synchronized `stream`.
   * `stream` becomes a release (deallocation) stream of the tensor's backing and its release event is
   * recorded right after the copy, so a pool slot (or an import) is not reused before the copy ran; a
   * stream already registered uses no capacity. Nothing is enqueued when this fails.
   * Returns `InvalidArgument` when `dst` is shorter than `byteSize`, `InvalidState` when stale or
   * without a readiness contract, `ResourceExhausted` naming the cap when `stream` would exceed the
   * backing's distinct release streams, `NotSupported` when the backing cannot track `stream` (a
   * host-only pool, or another device; use `copyToHost`); backend errors are passed through. A `dst`
   * longer than `byteSize` costs one `subarray` view per call; otherwise it allocates nothing.
   * Spec: "Host access", "Fanout release-stream caps" (asynchronous copies retain their stream).
   * @throws HsError `InvalidArgument` when `dst` is not a `Uint8Array`.
   */
  copyToHostAsync(dst: Uint8Array, stream: Stream): Result<void> {
    const refused = this.#checkCopy(dst);
    if (refused !== null) return refused;
    const backing = this.#backing;
    if (backing === null) return this.#enqueueCopyToHost(dst, stream);
    const registered = backing.registerReleaseStream(stream);
    if (!registered.ok) return registered;
    const leased = backing.acquireLease();
    if (!leased.ok) return leased;
    const enqueued = this.#enqueueCopyToHost(dst, stream);
    // Records the stream's release event after the copy (or after nothing, when enqueueing failed).
    try {
      backing.releaseLease(stream);
    } catch (cause) {
      if (cause instanceof HsError) return { ok: false, error: cause };
      throw cause;
    }
    return enqueued;
  }

  /**
   * A host view of the tensor's `byteSize` bytes for reading, declared to the backend as a host read.
   * Valid for host-accessible kinds (host, pinnedHost, cudaManaged); `NotSupported` for cudaDevice (use
   * `copyToHost`). It does not wait: call `synchronizeForHost()` first unless the tensor is
   * host-complete. `InvalidState` when stale. The view is cached while the layout is unchanged.
   * Spec: "Host access: the only blocking calls".
   */
  hostView(): Result<Uint8Array> {
    return this.#openHostView('read');
  }

  /**
   * A host view for writing, declared to the backend as a host write: how a host writer fills a pool
   * tensor inside its write phase. `PermissionDenied` on a read-only tensor, `NotSupported` for
   * cudaDevice, `InvalidState` when stale.
   */
  mutableHostView(): Result<Uint8Array> {
    if (this.#valid && this.#readOnly) return this.#readOnlyError();
    return this.#openHostView('write');
  }

  /**
   * Drops the importer's reference to an imported tensor. When no read lease is held either (and the
   * streams leases were released on passed), the import ends: its readiness event is destroyed, the
   * handle turns stale and the deleter runs once; otherwise that happens when the last lease is
   * released. For a pool tensor it does nothing: its slot is returned through its leases and release
   * events (`backing`). Idempotent. Spec: "Foreign tensors imported through DLPack".
   */
  dispose(): void {
    this.#importRef?.drop();
  }

  /** The last holder of an import dropped: destroy the readiness event, go stale, run the deleter. */
  #end(): void {
    if (this.#importRef !== null) importLeaks.untrack(this.#importRef);
    this.#valid = false;
    this.#readiness = null;
    if (this.#ownedEvent !== null) {
      this.#backend.destroyEvent(this.#ownedEvent);
      this.#ownedEvent = null;
    }
    const deleter = this.#deleter;
    this.#deleter = null;
    deleter?.();
  }

  /** Same as `dispose()`. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  /**
   * For backings: binds a packed row-major layout of `shape` and `dtype` at `byteOffset` and opens the
   * write phase (writable, no readiness contract). Reuses the previous shape, strides and range objects
   * when the layout is unchanged, so a steady frame allocates nothing. Returns `InvalidArgument` when
   * a dimension is not a non-negative safe integer or the span exceeds `byteLimit` bytes, and
   * `ArithmeticOverflow` when it is not a safe integer; the tensor is unchanged on failure.
   * @throws HsError `InvalidArgument` when `shape` is not a number array.
   */
  protected bindContiguous(dtype: DType, shape: readonly number[], byteOffset: number, byteLimit: number): Result<void> {
    // The steady frame: the layout of the last bind again (its dims were checked then), nothing to check or make.
    if (byteLimit === this.#boundLimit && dtype === this.#dtype && byteOffset === this.#byteOffset && Array.isArray(shape) && sameDims(shape, this.#boundDims)) {
      this.#openWrite();
      return OK_VOID;
    }
    return this.#bindChecked(dtype, shape, byteOffset, byteLimit);
  }

  /** `bindContiguous` of a new layout: checks `shape` and the span, then binds it. */
  #bindChecked(dtype: DType, shape: readonly number[], byteOffset: number, byteLimit: number): Result<void> {
    assertNumberList(shape, 'shape');
    const problem = describeDimsProblem(shape, 'shape');
    if (problem !== null) return err(ErrorCode.InvalidArgument, `tensor "${this.#name}": ${problem}`);
    const byteSize = contiguousByteSize(shape, dtype.itemSize);
    if (!Number.isSafeInteger(byteSize)) {
      return err(ErrorCode.ArithmeticOverflow, `tensor "${this.#name}": shape ${formatDims(shape)} of ${dtype.name} spans more than 2^53 bytes`);
    }
    if (byteSize > byteLimit || byteOffset + byteSize > this.#memory.byteSize) {
      return err(
        ErrorCode.InvalidArgument,
        `tensor "${this.#name}": shape ${formatDims(shape)} of ${dtype.name} spans ${byteSize} bytes, more than its ${byteLimit}-byte bound; request a smaller shape or raise the bound`,
      );
    }
    if (!sameDims(shape, this.#shape)) {
      this.#setLayout(dtype, Object.freeze(shape.slice()), contiguousStrides(shape), byteOffset, byteSize);
    } else {
      this.#setLayout(dtype, this.#shape, this.#strides, byteOffset, byteSize);
    }
    if (!sameDims(shape, this.#boundDims)) this.#boundDims = shape.slice();
    this.#boundLimit = byteLimit;
    this.#openWrite();
    return OK_VOID;
  }

  /** Opens the write phase of a bound layout: valid, writable, no readiness contract yet. */
  #openWrite(): void {
    this.#valid = true;
    this.#readOnly = false;
    this.#readiness = null;
    this.#pendingOn = null;
    this.#hostComplete = false;
  }

  /**
   * For backings: ends the write phase. With an event (already recorded on the producer stream by the
   * caller) it becomes the readiness event; with `null` the tensor is host-complete (a host writer
   * finished, nothing to wait on). With `deferredOn` (a proven fused edge) the event is retained but
   * not recorded yet: `readinessFor(deferredOn)` needs no wait, every other reader records it lazily on
   * `deferredOn`. The tensor turns read-only either way.
   */
  protected commitReadiness(event: Event | null, deferredOn: Stream | null = null): void {
    this.#readiness = event;
    this.#pendingOn = event === null ? null : deferredOn;
    this.#hostComplete = event === null;
    this.#readOnly = true;
  }

  /**
   * For backings: marks this handle stale (its slot was recycled or abandoned, or the pool disposed).
   * `why`, when given, replaces the generic reason in the `InvalidState` its accessors return until the
   * next bind (say what happened to the storage and what to do).
   */
  protected invalidate(why: string | null = null): void {
    this.#staleWhy = why;
    this.#valid = false;
    this.#readOnly = true;
    this.#readiness = null;
    this.#pendingOn = null;
    this.#hostComplete = false;
  }

  /**
   * Why a copy into `dst` cannot start (stale, no readiness contract, `dst` too short), or `null`.
   * @throws HsError `InvalidArgument` when `dst` is not a `Uint8Array`.
   */
  #checkCopy(dst: Uint8Array): Err | null {
    if (!(dst instanceof Uint8Array)) throw new HsError(ErrorCode.InvalidArgument, 'copyToHost destination must be a Uint8Array');
    const blocked = this.#checkReadable();
    if (blocked !== null) return blocked;
    if (dst.byteLength < this.#byteSize) {
      return err(
        ErrorCode.InvalidArgument,
        `tensor "${this.#name}" spans ${this.#byteSize} bytes but the destination holds ${dst.byteLength}; pass a larger Uint8Array`,
      );
    }
    return null;
  }

  /** The copy itself, after `#checkCopy`: readiness wait and copy on `stream`; no lease, no release stream. */
  #enqueueCopyToHost(dst: Uint8Array, stream: Stream): Result<void> {
    const readiness = this.readinessFor(stream);
    if (!readiness.ok) return readiness;
    if (readiness.value !== null) {
      const waited = this.#backend.streamWaitEvent(stream, readiness.value);
      if (!waited.ok) return waited;
    }
    const target = dst.byteLength === this.#byteSize ? dst : dst.subarray(0, this.#byteSize);
    return this.#backend.copyToHostAsync(stream, target, this.#range);
  }

  #setLayout(dtype: DType, shape: readonly number[], strides: readonly number[], byteOffset: number, byteSize: number): void {
    this.#dtype = dtype;
    this.#shape = shape;
    this.#strides = strides;
    if (byteOffset !== this.#byteOffset || byteSize !== this.#byteSize) {
      this.#byteOffset = byteOffset;
      this.#byteSize = byteSize;
      this.#range = this.#makeRange(byteOffset, byteSize);
      this.#rangeResult = ok(this.#range);
      this.#hostView = null;
    }
  }

  #makeRange(byteOffset: number, byteLength: number): MemoryRange {
    return Object.freeze({ memory: this.#memory, byteOffset, byteLength, label: this.#name });
  }

  #openHostView(access: 'read' | 'write'): Result<Uint8Array> {
    if (!this.#valid) return this.#staleError();
    if (!isHostAccessible(this.#memory.kind)) {
      return err(ErrorCode.NotSupported, `tensor "${this.#name}" lives in ${this.#memory.kind} memory, which the host cannot map; use copyToHost`);
    }
    if (access === 'read') {
      const resolved = this.#resolvePending();
      if (!resolved.ok) return resolved;
    }
    if (this.#hostView === null) {
      const whole = this.#backend.hostView(this.#memory);
      if (!whole.ok) return whole;
      this.#hostView = ok(whole.value.subarray(this.#byteOffset, this.#byteOffset + this.#byteSize));
    }
    this.#backend.noteHostAccess(this.#range, access);
    return this.#hostView;
  }

  /** Records a deferred readiness event on its producer stream (the lazy fallback); nothing when none is pending. */
  #resolvePending(): Result<void> {
    const stream = this.#pendingOn;
    if (stream === null || this.#readiness === null) return OK_VOID;
    const recorded = this.#backend.recordEvent(this.#readiness, stream);
    if (!recorded.ok) return recorded;
    this.#pendingOn = null;
    return OK_VOID;
  }

  #checkReadable(): Err | null {
    if (!this.#valid) return this.#staleError();
    if (this.#readiness === null && !this.#hostComplete) {
      return err(
        ErrorCode.InvalidState,
        `tensor "${this.#name}" has no readiness stream contract, so its writes cannot be ordered; ${
          this.#foreign ? 'call setReadinessStream(producerStream) first' : 'commit its write guard first'
        }`,
      );
    }
    return null;
  }

  #assertValid(): void {
    if (!this.#valid) throw this.#staleError().error;
  }

  #staleError(): Err {
    return err(
      ErrorCode.InvalidState,
      `tensor "${this.#name}" is stale: ${this.#staleWhy ?? 'its storage was recycled, abandoned or disposed; keep a tensor only while you hold a read lease on it'}`,
    );
  }

  #readOnlyError(): Err {
    return err(
      ErrorCode.PermissionDenied,
      this.#foreign
        ? `tensor "${this.#name}" is imported and permanently read-only; copy it into storage you allocate to modify it`
        : `tensor "${this.#name}" is read-only: write authority ended at its commit; received tensors cannot be written`,
    );
  }
}
