import { ErrorCode, err, ok, type Backend, type Result, type Stream } from '@hs/streams';
import { ResourceRef } from './adaptors/resource-ref.js';
import { ResourceBuffer } from './resource-buffer.js';
import type { AsyncResource, MemoryBlock } from './resource.js';

/**
 * Reusable scratch bytes for builders: one block through a `ResourceRef` (the pool borrows the resource,
 * which must outlive it), retained on one stream. `reserve(bytes)` returns the current block when it is
 * large enough; otherwise it discards the old block (freed on the retained stream, no copy: scratch
 * contents are not kept) and allocates a larger one on that stream. Everything is stream-ordered; nothing
 * synchronizes. Spec: "TempPool routes through a resource instance and frees on its retained stream"
 * (Step 1), "TempPool's bytes onto ResourceBuffer<std::byte, ResourceRef<R>>" (B2).
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { DeviceResource, StatisticsResource, TempPool } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * const stats = new StatisticsResource(new DeviceResource(backend, Device.cuda(0)));
 * // a builder's scratch: reused while large enough, grown by discarding, all on `stream`
 * const scratch = new TempPool(backend, stats, stream);
 * for (const bytes of [4096, 1024, 65536, 2048]) {
 *   const block = unwrap(scratch.reserve(bytes));
 *   if (block !== null) unwrap(backend.memsetAsync(stream, { ...block, byteLength: bytes }, 0)); // the pass's work
 * }
 * console.log(`holds ${scratch.size} bytes after ${stats.statistics.allocations.total} allocations for 4 passes`);
 * scratch.dispose(); // freed on the retained stream
 * await backend.synchronizeStream(stream);
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export class TempPool<R extends AsyncResource> implements Disposable {
  readonly #backend: Backend;
  readonly #ref: ResourceRef<R>;
  #stream: Stream;
  #bytes: ResourceBuffer<ResourceRef<R>, Uint8ArrayConstructor> | null = null;
  #disposed = false;

  /** @throws HsError InvalidArgument when `resource` is not a resource. */
  constructor(backend: Backend, resource: R | ResourceRef<R>, stream: Stream) {
    this.#backend = backend;
    this.#ref = resource instanceof ResourceRef ? resource : new ResourceRef(resource);
    this.#stream = stream;
  }

  /** The borrowed resource. */
  get resource(): ResourceRef<R> {
    return this.#ref;
  }
  /** The stream scratch is allocated and freed on. */
  get stream(): Stream {
    return this.#stream;
  }
  /** Bytes held now (0 before the first `reserve`). */
  get size(): number {
    return this.#bytes?.sizeBytes ?? 0;
  }
  /** The current block, `null` when nothing is held. */
  get data(): MemoryBlock | null {
    return this.#bytes?.data ?? null;
  }

  /**
   * At least `bytes` bytes of scratch, valid for work on the retained stream from now on. Grows by
   * discarding; never shrinks. Errors are the resource's (`OutOfMemory`, …); on failure the pool holds
   * nothing (the old block is already discarded). InvalidState after `dispose()`.
   */
  reserve(bytes: number): Result<MemoryBlock | null> {
    if (this.#disposed) return err(ErrorCode.InvalidState, 'TempPool.reserve: the pool was disposed');
    const held = this.#bytes;
    if (held !== null && held.sizeBytes >= bytes) return ok(held.data);
    if (held !== null) {
      const freed = held.destroy(this.#stream);
      if (!freed.ok) return freed;
      this.#bytes = null;
    }
    const made = ResourceBuffer.allocateAsync(this.#backend, this.#stream, this.#ref as ResourceRef<R> & AsyncResource, bytes, { noInit: true });
    if (!made.ok) return made;
    this.#bytes = made.value;
    return ok(made.value.data);
  }

  /** Changes the retained stream without synchronizing (order it after the old one where needed). */
  setStream(stream: Stream): void {
    this.#stream = stream;
    this.#bytes?.setStream(stream);
  }

  /**
   * Frees the scratch on the retained stream; idempotent.
   * @throws HsError the resource's error when the free cannot be enqueued.
   */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    const held = this.#bytes;
    this.#bytes = null;
    if (held !== null) held.dispose();
  }

  /** Same as `dispose()`. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}

