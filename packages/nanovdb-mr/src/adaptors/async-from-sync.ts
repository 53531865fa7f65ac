import { ErrorCode, HsError, OK_VOID, err, type Backend, type Result, type Stream } from '@hs/streams';
import { DEFAULT_ALIGNMENT, isResource, type AsyncResource, type MemoryBlock, type SyncResource } from '../resource.js';

/**
 * Lifts a synchronous resource into the async tier, explicitly (never a silent facade).
 *
 * - `allocateAsync` forwards to the upstream's `allocate`: synchronously allocated memory is valid on
 *   every stream, which is stronger than stream order requires.
 * - `deallocateAsync(block, …, stream)` waits for `stream` before the upstream's `deallocate` runs, so the
 *   upstream's quiescence contract holds. It never blocks the JS thread: the deallocation is enqueued on
 *   `stream` as a host function (`Backend.launchHostFunc`) and runs once the work enqueued before it
 *   completed.
 *
 * The cost, chosen by the caller: the block returns to the upstream only after the stream drained to
 * that point plus a host round trip, so memory is recycled later than with a stream-ordered pool, and
 * every free puts a host node in the stream (and in a captured graph). An upstream deallocate that fails
 * inside that host function faults the stream (`DeviceError` from the next synchronization).
 * Spec: "Synchronous arenas … The explicit lift is AsyncFromSync<R> (#2272)".
 *
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { AsyncFromSync, MallocResource, ResourceBuffer, TrackingResource } from '@hs/nanovdb-mr';
 *
 * // a pool-less device: opt into synchronous device malloc where a stream-ordered resource is required
 * const backend = new HostBackend({ memoryPools: false });
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * const malloc = new TrackingResource(new MallocResource(backend, Device.cuda(0)));
 * const resource = new AsyncFromSync(backend, malloc);
 * const buffer = unwrap(ResourceBuffer.allocateAsync(backend, stream, resource, 1024, { noInit: true, element: Float32Array }));
 * if (buffer.data !== null) unwrap(backend.memsetAsync(stream, buffer.data, 0));
 * buffer.dispose(); // enqueued: a host function on `stream` runs the synchronous free after the memset
 * await backend.synchronizeStream(stream);
 * console.log(`blocks still held by MallocResource after the stream drained: ${malloc.outstanding.length}`);
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export class AsyncFromSync<R extends SyncResource> implements AsyncResource {
  /** The lifted synchronous resource. */
  readonly upstream: R;
  /** The backend whose streams order the deallocations. */
  readonly backend: Backend;

  /** @throws HsError InvalidArgument when `upstream` is not a resource or `backend` not a Backend. */
  constructor(backend: Backend, upstream: R) {
    if (typeof backend !== 'object' || backend === null || typeof backend.launchHostFunc !== 'function') {
      throw new HsError(ErrorCode.InvalidArgument, 'AsyncFromSync: expected a Backend as the first argument');
    }
    if (!isResource(upstream)) throw new HsError(ErrorCode.InvalidArgument, 'AsyncFromSync: upstream must be a resource (allocate and deallocate)');
    this.backend = backend;
    this.upstream = upstream;
  }

  /** The upstream's `hostAccessible`. */
  get hostAccessible(): boolean {
    return this.upstream.hostAccessible === true;
  }

  /** The upstream's `deviceAccessible`. */
  get deviceAccessible(): boolean {
    return this.upstream.deviceAccessible === true;
  }

  /** The upstream's `allocate`. */
  allocate(bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<MemoryBlock | null> {
    return this.upstream.allocate(bytes, alignment);
  }

  /** The upstream's `deallocate` (the block must be quiescent). */
  deallocate(block: MemoryBlock | null, bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<void> {
    return this.upstream.deallocate(block, bytes, alignment);
  }

  /** The upstream's `allocate`; InvalidState for a destroyed stream. */
  allocateAsync(bytes: number, alignment: number, stream: Stream): Result<MemoryBlock | null> {
    if (stream.destroyed) return err(ErrorCode.InvalidState, `AsyncFromSync.allocateAsync: stream "${stream.label}" was destroyed`);
    return this.upstream.allocate(bytes, alignment);
  }

  /**
   * Enqueues the upstream's `deallocate` on `stream` behind the work already there. A `null` block (0
   * bytes) needs no wait and returns at once. Stream errors are the backend's.
   */
  deallocateAsync(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream): Result<void> {
    if (block === null) return this.upstream.deallocate(null, bytes, alignment);
    const upstream = this.upstream;
    // Non-blocking: nothing later on the stream depends on the block's return, and a stream that waited
    // for the JS thread could deadlock against a synchronizing allocation (cudaMalloc) made there.
    const enqueued = this.backend.launchHostFunc(
      stream,
      () => {
        const done = upstream.deallocate(block, bytes, alignment);
        if (!done.ok) throw done.error;
      },
      { blocking: false },
    );
    return enqueued.ok ? OK_VOID : enqueued;
  }
}
