import { ErrorCode, HsError, type Result, type Stream } from '@hs/streams';
import { DEFAULT_ALIGNMENT, isAsyncResource, isResource, type AsyncResource, type MemoryBlock, type SyncResource } from '../resource.js';

/** `allocateAsync` of an adaptor over `U`: a method when `U` is an async resource, `undefined` otherwise. */
export type AllocateAsyncOf<U extends SyncResource> = U extends AsyncResource ? AsyncResource['allocateAsync'] : undefined;
/** `deallocateAsync` of an adaptor over `U`: a method when `U` is an async resource, `undefined` otherwise. */
export type DeallocateAsyncOf<U extends SyncResource> = U extends AsyncResource ? AsyncResource['deallocateAsync'] : undefined;

/**
 * Base of the adaptors: wraps an `upstream` resource, adds one concern, and keeps its tier. Over an async
 * upstream it has `allocateAsync`/`deallocateAsync` (so `isAsyncResource` is true); over a sync one those
 * members are `undefined` (so the guard reports the sync tier truthfully). Subclasses implement
 * `allocateOn`/`deallocateOn`, where `stream` is `null` for the synchronous pair, and forward with
 * `forwardAllocate`/`forwardDeallocate`. Accessibility is the upstream's.
 * Spec: adaptors compose (RMM's resource adaptors), and "enable_if-gated async members so a ref over a
 * synchronous resource does not misreport its tier".
 * @example
 * ```ts
 * import { HostBackend, unwrap, type Result, type Stream } from '@hs/streams';
 * import { HostResource, ResourceAdaptor, ResourceBuffer, type MemoryBlock, type SyncResource } from '@hs/nanovdb-mr';
 *
 * // an adaptor adds one concern and keeps its upstream's tier: this one counts the calls on each tier
 * class CallCounter<R extends SyncResource> extends ResourceAdaptor<R> {
 *   calls = { sync: 0, streamOrdered: 0 };
 *   constructor(upstream: R) {
 *     super(upstream, 'CallCounter');
 *   }
 *   protected allocateOn(bytes: number, alignment: number, stream: Stream | null): Result<MemoryBlock | null> {
 *     this.calls[stream === null ? 'sync' : 'streamOrdered'] += 1;
 *     return this.forwardAllocate(bytes, alignment, stream);
 *   }
 *   protected deallocateOn(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream | null): Result<void> {
 *     return this.forwardDeallocate(block, bytes, alignment, stream);
 *   }
 * }
 * const backend = new HostBackend();
 * const counted = new CallCounter(new HostResource(backend));
 * unwrap(ResourceBuffer.allocate(backend, counted, 64)).dispose();
 * console.log(`allocations: ${JSON.stringify(counted.calls)}, async pair: ${counted.allocateAsync === undefined ? 'absent (sync upstream)' : 'present'}`);
 * ```
 */
export abstract class ResourceAdaptor<U extends SyncResource> implements SyncResource {
  /** The wrapped resource. */
  readonly upstream: U;
  /** Stream-ordered allocate, present only over an async upstream. */
  readonly allocateAsync: AllocateAsyncOf<U>;
  /** Stream-ordered deallocate, present only over an async upstream. */
  readonly deallocateAsync: DeallocateAsyncOf<U>;

  /** @throws HsError InvalidArgument when `upstream` is not a resource. */
  constructor(upstream: U, who: string) {
    if (!isResource(upstream)) {
      throw new HsError(ErrorCode.InvalidArgument, `${who}: upstream must be a resource (an object with allocate and deallocate)`);
    }
    this.upstream = upstream;
    if (isAsyncResource(upstream)) {
      const allocateAsync: AsyncResource['allocateAsync'] = (bytes, alignment, stream) => this.allocateOn(bytes, alignment, stream);
      const deallocateAsync: AsyncResource['deallocateAsync'] = (block, bytes, alignment, stream) =>
        this.deallocateOn(block, bytes, alignment, stream);
      this.allocateAsync = allocateAsync as AllocateAsyncOf<U>;
      this.deallocateAsync = deallocateAsync as DeallocateAsyncOf<U>;
    } else {
      this.allocateAsync = undefined as AllocateAsyncOf<U>;
      this.deallocateAsync = undefined as DeallocateAsyncOf<U>;
    }
  }

  /** The upstream's `hostAccessible`. */
  get hostAccessible(): boolean {
    return this.upstream.hostAccessible === true;
  }

  /** The upstream's `deviceAccessible`. */
  get deviceAccessible(): boolean {
    return this.upstream.deviceAccessible === true;
  }

  /** Synchronous allocate through the adaptor (alignment default 256 bytes). */
  allocate(bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<MemoryBlock | null> {
    return this.allocateOn(bytes, alignment, null);
  }

  /** Synchronous deallocate through the adaptor (alignment default 256 bytes); the block must be quiescent. */
  deallocate(block: MemoryBlock | null, bytes: number, alignment: number = DEFAULT_ALIGNMENT): Result<void> {
    return this.deallocateOn(block, bytes, alignment, null);
  }

  /** The adaptor's allocate; `stream` is `null` for the synchronous tier. */
  protected abstract allocateOn(bytes: number, alignment: number, stream: Stream | null): Result<MemoryBlock | null>;
  /** The adaptor's deallocate; `stream` is `null` for the synchronous tier. */
  protected abstract deallocateOn(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream | null): Result<void>;

  /** Upstream allocate on the same tier. */
  protected forwardAllocate(bytes: number, alignment: number, stream: Stream | null): Result<MemoryBlock | null> {
    return stream === null
      ? this.upstream.allocate(bytes, alignment)
      : (this.upstream as unknown as AsyncResource).allocateAsync(bytes, alignment, stream);
  }

  /** Upstream deallocate on the same tier. */
  protected forwardDeallocate(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream | null): Result<void> {
    return stream === null
      ? this.upstream.deallocate(block, bytes, alignment)
      : (this.upstream as unknown as AsyncResource).deallocateAsync(block, bytes, alignment, stream);
  }
}
