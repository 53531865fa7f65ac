import type { Result, Stream } from '@hs/streams';
import type { MemoryBlock, SyncResource } from '../resource.js';
import { ResourceAdaptor } from './resource-adaptor.js';

/**
 * A non-owning reference to a resource, itself a resource: it forwards every call, never disposes the
 * referent, and has the async pair only when the referent does. Two refs are equal (`equals`) when they
 * refer to the same object (identity equality). Non-owning containers (`TempPool`) hold their resource
 * through one; the referent must outlive every ref.
 * Spec: "ResourceRef<R> (#2269) borrows".
 *
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { DeviceResource, ResourceBuffer, ResourceRef, isAsyncResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * const device = new DeviceResource(backend, Device.cuda(0));
 * // borrow the resource: the buffer holds the ref, the referent must outlive it
 * const ref = new ResourceRef(device);
 * console.log(`async: ${isAsyncResource(ref)}, same referent: ${ref.equals(new ResourceRef(device))}, is it: ${ref.referent === device}`);
 * const buffer = unwrap(ResourceBuffer.allocateAsync(backend, stream, ref, 256, { noInit: true }));
 * buffer.dispose();
 * await backend.synchronizeStream(stream);
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export class ResourceRef<R extends SyncResource> extends ResourceAdaptor<R> {
  /** @throws HsError InvalidArgument when `referent` is not a resource. */
  constructor(referent: R) {
    super(referent, 'ResourceRef');
  }

  /** The borrowed resource. */
  get referent(): R {
    return this.upstream;
  }

  /** True when `other` is this ref's referent, or a `ResourceRef` to the same referent. */
  equals(other: SyncResource): boolean {
    return other === this.upstream || (other instanceof ResourceRef && other.upstream === this.upstream);
  }

  protected allocateOn(bytes: number, alignment: number, stream: Stream | null): Result<MemoryBlock | null> {
    return this.forwardAllocate(bytes, alignment, stream);
  }

  protected deallocateOn(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream | null): Result<void> {
    return this.forwardDeallocate(block, bytes, alignment, stream);
  }
}
