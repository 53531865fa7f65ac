import { ErrorCode, HsError, MemoryKind, OK_VOID, checkOptionFields, err, leakTracker, ok, unwrap, type Backend, type Result, type Stream } from '@hs/streams';
import type { ElementSpan } from './element-span.js';
import { isElementType, type ElementArrayOf, type ElementType } from './element-type.js';
import { resourceOrigin } from './resource-origin.js';
import { DEFAULT_ALIGNMENT, isAsyncResource, isResource, type AsyncResource, type MemoryBlock, type SyncResource } from './resource.js';

/** Options of the synchronous `ResourceBuffer.allocate`. */
export interface ResourceBufferOptions<E extends ElementType> {
  /** Element type (a typed-array constructor); default `Uint8Array` (raw bytes). */
  readonly element?: E;
  /** Alignment of the block in bytes, a power of two at least the element size; default 256. */
  readonly alignment?: number;
}

/**
 * Options of the stream-ordered `ResourceBuffer.allocateAsync`. `noInit: true` is mandatory: a buffer is never
 * filled implicitly (fresh memory holds whatever was there), so the caller states that it knows.
 */
export interface AsyncResourceBufferOptions<E extends ElementType> extends ResourceBufferOptions<E> {
  /** Must be `true`: the elements are left uninitialized. */
  readonly noInit: true;
}

/**
 * An owning, single-space, typed buffer of `size` elements allocated from one resource.
 *
 * - Async form (`allocateAsync(backend, stream, resource, count, { noInit: true })`, over an
 *   `AsyncResource`): the buffer retains its allocation stream and frees on it (never on another
 *   stream); the stream must outlive the buffer or be replaced with `setStream`, which never
 *   synchronizes. `resize`, `copy` and `destroy(stream)` order everything on the stream passed.
 * - Sync form (`allocate(backend, resource, count)`, over any resource): no stream at all; the stream
 *   methods are typed away (a `this` parameter over `AsyncResource`) and return NotSupported if reached.
 *
 * Nothing fills the elements. `size` counts elements, `sizeBytes` bytes. The resource is held by
 * reference as given: a concrete resource is a shared handle; pass a `ResourceRef` to borrow or a
 * `SharedResource` to share ownership explicitly. Lifetimes are explicit: `dispose()` (or `using`).
 * The backend is passed in because hs has no process-global device runtime: copies go through it.
 * Spec: "cuda::ResourceBuffer<T,R> (storage)", "Stream ownership", "Resource ownership".
 *
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { DeviceResource, ResourceBuffer } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * const resource = new DeviceResource(backend, Device.cuda(0));
 * const buf = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, 1024, { noInit: true, element: Float32Array }));
 * console.log(`${buf.size} floats, ${buf.sizeBytes} bytes`); // 1024 floats, 4096 bytes
 * unwrap(buf.resize(2048, stream)); // prefix copied, old block freed on `stream`
 * const copy = unwrap(buf.copy(stream)); // same resource, element type and contents
 * console.log(`after resize: ${buf.sizeBytes} bytes, copy ${copy.sizeBytes}`);
 * copy.dispose();
 * buf.dispose(); // freed on the retained stream
 * await backend.synchronizeStream(stream);
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export class ResourceBuffer<R extends SyncResource = SyncResource, E extends ElementType = Uint8ArrayConstructor>
  implements ElementSpan<E>, Disposable
{
  readonly #backend: Backend;
  /** Everything the buffer owns, in one record its leak report can release without the buffer. */
  readonly #a: BufferState<R, E>;
  /** Unregisters the buffer from the leak report (`destroy()`); a fresh one per registration. */
  #leakToken: object | null = null;

  private constructor(backend: Backend, resource: R, element: E, alignment: number, stream: Stream | null, block: MemoryBlock | null, size: number) {
    this.#backend = backend;
    this.#a = { resource, element, alignment, stream, block, size, held: true };
    this.#track();
  }

  /** Registers the held allocation with the leak report: freed on the retained stream, or (host memory) synchronously, if the buffer is collected undisposed. */
  #track(): void {
    const state = this.#a;
    this.#leakToken = {};
    leaks.track(this, { label: `${this.sizeBytes} bytes`, release: () => releaseLeaked(state) }, this.#leakToken);
  }

  /**
   * Allocates `count` uninitialized elements stream-ordered on `stream` from `resource`.
   * Errors: the resource's (`OutOfMemory`, `NotSupported`, stream errors), `InvalidArgument` for a bad
   * count or alignment, `ArithmeticOverflow` when the byte size is not a safe integer.
   * @throws HsError InvalidArgument when `backend` is not a Backend, `resource` is not an async resource, `noInit` is not `true`,
   * `element` is not a supported typed-array constructor, or `options` holds a field that is not an option.
   */
  static allocateAsync<R extends AsyncResource, E extends ElementType = Uint8ArrayConstructor>(
    backend: Backend,
    stream: Stream,
    resource: R,
    count: number,
    options: AsyncResourceBufferOptions<E>,
  ): Result<ResourceBuffer<R, E>> {
    requireBackend('ResourceBuffer.allocateAsync', backend);
    if (!isAsyncResource(resource)) {
      throw new HsError(ErrorCode.InvalidArgument, 'ResourceBuffer.allocateAsync: resource must be an async resource; use ResourceBuffer.allocate for a synchronous one, or lift it with AsyncFromSync');
    }
    unwrap(checkOptionFields('ResourceBuffer.allocateAsync', options, ['element', 'alignment', 'noInit']));
    if (options?.noInit !== true) {
      throw new HsError(ErrorCode.InvalidArgument, 'ResourceBuffer.allocateAsync: pass { noInit: true }; buffers are never filled implicitly');
    }
    const shape = resolveShape('ResourceBuffer.allocateAsync', count, options);
    if (!shape.ok) return shape;
    const { element, alignment, bytes } = shape.value;
    const made = resource.allocateAsync(bytes, alignment, stream);
    if (!made.ok) return made;
    return ok(new ResourceBuffer<R, E>(backend, resource, element as E, alignment, stream, made.value, count));
  }

  /**
   * Allocates `count` uninitialized elements synchronously from `resource`; the buffer has no stream.
   * Errors as `allocateAsync`, without stream errors.
   * @throws HsError InvalidArgument when `backend` is not a Backend, `resource` is not a resource, `element` is not supported, or `options` is not
   *   an object or holds a field that is not an option (a misspelt one, naming the closest).
   */
  static allocate<R extends SyncResource, E extends ElementType = Uint8ArrayConstructor>(
    backend: Backend,
    resource: R,
    count: number,
    options: ResourceBufferOptions<E> = {},
  ): Result<ResourceBuffer<R, E>> {
    requireBackend('ResourceBuffer.allocate', backend);
    if (!isResource(resource)) throw new HsError(ErrorCode.InvalidArgument, 'ResourceBuffer.allocate: resource must be a resource (allocate and deallocate)');
    unwrap(checkOptionFields('ResourceBuffer.allocate', options, ['element', 'alignment']));
    const shape = resolveShape('ResourceBuffer.allocate', count, options);
    if (!shape.ok) return shape;
    const { element, alignment, bytes } = shape.value;
    const made = resource.allocate(bytes, alignment);
    if (!made.ok) return made;
    return ok(new ResourceBuffer<R, E>(backend, resource, element as E, alignment, null, made.value, count));
  }

  /** The owned bytes, `null` when empty. */
  get data(): MemoryBlock | null {
    return this.#a.block;
  }
  /** Element type. */
  get element(): E {
    return this.#a.element;
  }
  /** Length in elements. */
  get size(): number {
    return this.#a.size;
  }
  /** Length in bytes. */
  get sizeBytes(): number {
    return this.#a.size * this.#a.element.BYTES_PER_ELEMENT;
  }
  /** True when the buffer holds no elements (after `destroy`, or allocated with count 0). */
  get empty(): boolean {
    return this.#a.size === 0;
  }
  /** The resource the block came from and returns to. */
  get resource(): R {
    return this.#a.resource;
  }
  /** Alignment of the block, bytes. */
  get alignment(): number {
    return this.#a.alignment;
  }
  /** The retained stream the block is freed on; `null` for a synchronous buffer. */
  get stream(): Stream | null {
    return this.#a.stream;
  }

  /**
   * Replaces the retained stream (the one the block will be freed on) without synchronizing; the caller
   * orders `stream` after the old one where the block is still in use there. NotSupported on a
   * synchronous buffer.
   */
  setStream<A extends AsyncResource>(this: ResourceBuffer<A, E>, stream: Stream): Result<void> {
    if (this.#a.stream === null) return syncOnly('setStream');
    this.#a.stream = stream;
    return OK_VOID;
  }

  /**
   * Changes the size to `count` elements, everything ordered on `stream`: allocate the new block, copy
   * the common prefix, free the old block (its last use is that copy); `stream` becomes the retained
   * stream. On any failure the buffer is unchanged and nothing is leaked. The same count is a no-op.
   * Errors as `allocateAsync`, plus the backend's copy errors; NotSupported on a synchronous buffer.
   */
  resize<A extends AsyncResource>(this: ResourceBuffer<A, E>, count: number, stream: Stream): Result<void> {
    if (this.#a.stream === null) return syncOnly('resize');
    if (count === this.#a.size && this.#a.held) return OK_VOID;
    const shape = resolveShape('ResourceBuffer.resize', count, { element: this.#a.element, alignment: this.#a.alignment });
    if (!shape.ok) return shape;
    const resource = this.#a.resource;
    const newBytes = shape.value.bytes;
    const made = resource.allocateAsync(newBytes, this.#a.alignment, stream);
    if (!made.ok) return made;
    const fresh = made.value;
    const old = this.#a.block;
    const oldBytes = this.sizeBytes;
    const common = Math.min(oldBytes, newBytes);
    if (common > 0 && old !== null && fresh !== null) {
      const copied = this.#backend.memcpyAsync(stream, { ...fresh, byteLength: common }, { ...old, byteLength: common });
      if (!copied.ok) {
        resource.deallocateAsync(fresh, newBytes, this.#a.alignment, stream);
        return copied;
      }
    }
    const freed = this.#a.held ? resource.deallocateAsync(old, oldBytes, this.#a.alignment, stream) : OK_VOID;
    if (!freed.ok) {
      resource.deallocateAsync(fresh, newBytes, this.#a.alignment, stream);
      return freed;
    }
    this.#a.block = fresh;
    this.#a.size = count;
    this.#a.stream = stream;
    this.#a.held = true;
    if (this.#leakToken === null) this.#track();
    return OK_VOID;
  }

  /**
   * A new buffer with the same resource, element type, alignment and contents, allocated and copied on
   * `stream` (its retained stream). Errors as `allocateAsync` and the backend's copy; nothing leaks on
   * failure. NotSupported on a synchronous buffer.
   */
  copy<A extends AsyncResource>(this: ResourceBuffer<A, E>, stream: Stream): Result<ResourceBuffer<A, E>> {
    if (this.#a.stream === null) return syncOnly('copy');
    const made = ResourceBuffer.allocateAsync(this.#backend, stream, this.#a.resource, this.#a.size, {
      noInit: true,
      element: this.#a.element,
      alignment: this.#a.alignment,
    });
    if (!made.ok || this.#a.block === null) return made;
    const copy = made.value;
    const copied = this.#backend.memcpyAsync(stream, copy.data as MemoryBlock, this.#a.block);
    if (!copied.ok) {
      copy.destroy(stream);
      return copied;
    }
    return made;
  }

  /**
   * Frees the block and leaves the buffer empty: on `stream` when given, else on the retained stream
   * (async buffers), or synchronously (sync buffers, which must be quiescent). Errors are the
   * resource's; on failure the buffer is unchanged. Destroying an empty buffer is a no-op.
   */
  destroy(stream?: Stream): Result<void> {
    if (!this.#a.held) return OK_VOID;
    const on = stream ?? this.#a.stream;
    const bytes = this.sizeBytes;
    const done =
      on === null
        ? this.#a.resource.deallocate(this.#a.block, bytes, this.#a.alignment)
        : (this.#a.resource as unknown as AsyncResource).deallocateAsync(this.#a.block, bytes, this.#a.alignment, on);
    if (!done.ok) return done;
    this.#a.block = null;
    this.#a.size = 0;
    this.#a.held = false;
    if (this.#leakToken !== null) leaks.untrack(this.#leakToken);
    this.#leakToken = null;
    return OK_VOID;
  }

  /**
   * Exchanges everything (block, size, element type, alignment, resource, stream) with `other`, which
   * must have the same backend.
   * @throws HsError InvalidArgument for a buffer of another backend.
   */
  swap(other: ResourceBuffer<R, E>): void {
    if (other.#backend !== this.#backend) throw new HsError(ErrorCode.InvalidArgument, 'ResourceBuffer.swap: the buffers belong to different backends');
    const mine = { ...this.#a };
    Object.assign(this.#a, other.#a);
    Object.assign(other.#a, mine);
    [this.#leakToken, other.#leakToken] = [other.#leakToken, this.#leakToken];
    // Each record stays registered with its own buffer; re-register so the labels follow the contents.
    for (const buffer of [this, other]) {
      if (buffer.#leakToken !== null) leaks.untrack(buffer.#leakToken);
      buffer.#leakToken = null;
      if (buffer.#a.held) buffer.#track();
    }
  }

  /**
   * A host view of the elements (a typed array of `element`) for host-accessible memory; an empty array
   * when the buffer is empty. Errors: the backend's `hostView` (NotSupported for cudaDevice memory).
   * Read it only after the writes were synchronized for the host.
   */
  hostView(): Result<ElementArrayOf<E>> {
    const block = this.#a.block;
    const El = this.#a.element as unknown as new (buffer: ArrayBufferLike, byteOffset?: number, length?: number) => ElementArrayOf<E>;
    if (block === null) return ok(new El(new ArrayBuffer(0)));
    const view = this.#backend.hostView(block.memory);
    if (!view.ok) return view;
    return ok(new El(view.value.buffer, view.value.byteOffset + block.byteOffset, this.#a.size));
  }

  /**
   * `destroy()` on the retained stream.
   * @throws HsError the resource's error (for example InvalidState when the retained stream was destroyed
   * first: keep the stream alive or `setStream` before disposing).
   */
  dispose(): void {
    const done = this.destroy();
    if (!done.ok) throw done.error;
  }

  /** Same as `dispose()`. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}

function syncOnly(method: string): Result<never> {
  return err(ErrorCode.NotSupported, `ResourceBuffer.${method}: this buffer came from a synchronous resource and has no stream API; use ResourceBuffer.allocateAsync with an async resource`);
}

interface ResolvedShape {
  readonly element: ElementType;
  readonly alignment: number;
  readonly bytes: number;
}

function resolveShape(who: string, count: number, options: ResourceBufferOptions<ElementType>): Result<ResolvedShape> {
  const element = options.element ?? Uint8Array;
  if (!isElementType(element)) throw new HsError(ErrorCode.InvalidArgument, `${who}: element must be a typed-array constructor such as Float32Array`);
  const alignment = options.alignment ?? DEFAULT_ALIGNMENT;
  if (!Number.isSafeInteger(count) || count < 0) return err(ErrorCode.InvalidArgument, `${who}: count must be a non-negative safe integer (elements), got ${String(count)}`);
  if (!Number.isSafeInteger(alignment) || alignment < element.BYTES_PER_ELEMENT || (alignment & (alignment - 1)) !== 0) {
    return err(ErrorCode.InvalidArgument, `${who}: alignment must be a power of two of at least ${element.BYTES_PER_ELEMENT} bytes, got ${String(alignment)}`);
  }
  const bytes = count * element.BYTES_PER_ELEMENT;
  if (!Number.isSafeInteger(bytes)) return err(ErrorCode.ArithmeticOverflow, `${who}: ${count} elements of ${element.BYTES_PER_ELEMENT} bytes exceed 2^53 bytes`);
  return ok({ element, alignment, bytes });
}

/** The owned state of a `ResourceBuffer`. */
interface BufferState<R extends SyncResource, E extends ElementType> {
  resource: R;
  element: E;
  alignment: number;
  stream: Stream | null;
  block: MemoryBlock | null;
  size: number;
  /** True while the buffer holds an allocation (a 0-element buffer holds a `null` one until destroyed). */
  held: boolean;
}

const leaks = leakTracker('ResourceBuffer');

/**
 * Frees the allocation of a buffer collected without `dispose()`: stream-ordered on its retained stream, or
 * synchronously when it is host memory; a synchronous buffer of device memory is left to its resource (a
 * free on the JS thread could block on the device).
 * @throws HsError the resource's error, for the leak report.
 */
function releaseLeaked(state: BufferState<SyncResource, ElementType>): void {
  if (!state.held) return;
  const bytes = state.size * state.element.BYTES_PER_ELEMENT;
  let done: Result<void> = OK_VOID;
  if (state.stream !== null) done = (state.resource as unknown as AsyncResource).deallocateAsync(state.block, bytes, state.alignment, state.stream);
  else if (resourceOrigin(state.resource)?.kind === MemoryKind.Host) done = state.resource.deallocate(state.block, bytes, state.alignment);
  if (!done.ok) throw done.error;
  state.held = false;
}

/** @throws HsError InvalidArgument naming `who` when `backend` is not a backend (the builders pass theirs through). */
function requireBackend(who: string, backend: unknown): void {
  if (typeof backend !== 'object' || backend === null || typeof (backend as Backend).hostView !== 'function') {
    throw new HsError(ErrorCode.InvalidArgument, `${who}: backend must be a Backend (a HostBackend or a CudaBackend), got ${backend === null ? 'null' : typeof backend}`);
  }
}
