import { ErrorCode, HsError, type Result, type Stream } from '@hs/streams';
import { DEFAULT_ALIGNMENT, type AsyncResource, type MemoryBlock } from '../resource.js';

/**
 * Base class for a custom stream-ordered resource: implement `allocateAsync` and `deallocateAsync` (two
 * methods) and get the synchronous pair too (four), delegated in this one audited place.
 *
 * hs has no null stream and never blocks the JS thread, so the synchronous pair runs on `syncStream`,
 * a stream the resource is given: `allocate` is `allocateAsync(…, syncStream)` and `deallocate` is
 * `deallocateAsync(…, syncStream)`. A synchronous `deallocate` already promises the block is quiescent,
 * so ordering its free on `syncStream` is safe. A block from the synchronous `allocate` is ready for work
 * ordered after `syncStream` (work on `syncStream` itself, or on a stream that waited on an event recorded
 * there); resources that allocate eagerly (as the host backend does) make it valid everywhere at once.
 * Spec: "SyncFromAsync<Derived> CRTP mixin (a custom resource is two methods rather than four)".
 *
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap, type Result, type Stream } from '@hs/streams';
 * import { DeviceResource, ResourceBuffer, SyncFromAsync, type MemoryBlock } from '@hs/nanovdb-mr';
 *
 * // a custom stream-ordered resource is two methods; the synchronous pair runs on syncStream
 * class LoggingResource extends SyncFromAsync {
 *   constructor(private readonly upstream: DeviceResource, syncStream: Stream) {
 *     super(syncStream);
 *   }
 *   allocateAsync(bytes: number, alignment: number, stream: Stream): Result<MemoryBlock | null> {
 *     console.log(`allocate ${bytes} bytes on ${stream === this.syncStream ? 'syncStream' : 'a caller stream'}`);
 *     return this.upstream.allocateAsync(bytes, alignment, stream);
 *   }
 *   deallocateAsync(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream): Result<void> {
 *     return this.upstream.deallocateAsync(block, bytes, alignment, stream);
 *   }
 * }
 * const backend = new HostBackend();
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * const resource = new LoggingResource(new DeviceResource(backend, Device.cuda(0)), stream);
 * unwrap(ResourceBuffer.allocate(backend, resource, 64)).dispose(); // the synchronous pair, for free
 * await backend.synchronizeStream(stream);
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export abstract class SyncFromAsync implements AsyncResource {
  /** The stream the synchronous pair orders its work on. */
  readonly syncStream: Stream;

  /** @throws HsError InvalidArgument when `syncStream` is not a stream. */
  constructor(syncStream: Stream) {
    if (typeof syncStream !== 'object' || syncStream === null || typeof syncStream.id !== 'number') {
      throw new HsError(ErrorCode.InvalidArgument, 'SyncFromAsync: syncStream must be a Stream of the backend the resource allocates from');
    }
    this.syncStream = syncStream;
  }

  /** Stream-ordered allocation; see `AsyncResource.allocateAsync`. */
  abstract allocateAsync(bytes: number, alignment: number, stream: Stream): Result<MemoryBlock | null>;
  /** Stream-ordered deallocation; see `AsyncResource.deallocateAsync`. */
  abstract deallocateAsync(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream): Result<void>;

  /** `allocateAsync(bytes, alignment, syncStream)`. */
  allocate(bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<MemoryBlock | null> {
    return this.allocateAsync(bytes, alignment, this.syncStream);
  }

  /** `deallocateAsync(block, bytes, alignment, syncStream)`; the block must be quiescent. */
  deallocate(block: MemoryBlock | null, bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<void> {
    return this.deallocateAsync(block, bytes, alignment, this.syncStream);
  }
}
