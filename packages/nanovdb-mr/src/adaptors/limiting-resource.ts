import { ErrorCode, HsError, err, type Result, type Stream } from '@hs/streams';
import { requestProblem } from '../allocation-checks.js';
import type { MemoryBlock, SyncResource } from '../resource.js';
import { ResourceAdaptor } from './resource-adaptor.js';

/**
 * Caps the bytes outstanding through it: an allocation that would take the requested bytes past
 * `limitBytes` fails with `OutOfMemory` before reaching the upstream (nothing allocated). Deallocation
 * gives the bytes back. Keeps the upstream's tier.
 * Spec: RMM's limiting adaptor (nanovdb-memory-resources: adaptors).
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { DeviceResource, LimitingResource, ResourceBuffer } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * // cap what one tenant may hold on the device at 1 MiB
 * const capped = new LimitingResource(new DeviceResource(backend, Device.cuda(0)), 1 << 20);
 * const first = unwrap(ResourceBuffer.allocateAsync(backend, stream, capped, 768 << 10, { noInit: true }));
 * const second = ResourceBuffer.allocateAsync(backend, stream, capped, 512 << 10, { noInit: true });
 * if (!second.ok) console.log(`${second.error.code} with ${capped.allocatedBytes} bytes outstanding`); // OutOfMemory, before the upstream
 * first.dispose(); // gives the bytes back
 * console.log(`outstanding after dispose: ${capped.allocatedBytes}`);
 * await backend.synchronizeStream(stream);
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export class LimitingResource<R extends SyncResource> extends ResourceAdaptor<R> {
  /** Largest number of bytes outstanding at once. */
  readonly limitBytes: number;
  #allocatedBytes = 0;

  /** @throws HsError InvalidArgument when `upstream` is not a resource or `limitBytes` not a non-negative safe integer. */
  constructor(upstream: R, limitBytes: number) {
    super(upstream, 'LimitingResource');
    if (!Number.isSafeInteger(limitBytes) || limitBytes < 0) {
      throw new HsError(ErrorCode.InvalidArgument, `LimitingResource: limitBytes must be a non-negative safe integer, got ${String(limitBytes)}`);
    }
    this.limitBytes = limitBytes;
  }

  /** Bytes outstanding through this adaptor. */
  get allocatedBytes(): number {
    return this.#allocatedBytes;
  }

  protected allocateOn(bytes: number, alignment: number, stream: Stream | null): Result<MemoryBlock | null> {
    const problem = requestProblem('LimitingResource.allocate', bytes, alignment);
    if (problem !== null) return problem;
    if (this.#allocatedBytes + bytes > this.limitBytes) {
      return err(
        ErrorCode.OutOfMemory,
        `LimitingResource: ${bytes} bytes requested with ${this.#allocatedBytes} of ${this.limitBytes} already outstanding; free blocks or raise the limit`,
      );
    }
    const made = this.forwardAllocate(bytes, alignment, stream);
    if (made.ok) this.#allocatedBytes += bytes;
    return made;
  }

  protected deallocateOn(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream | null): Result<void> {
    const done = this.forwardDeallocate(block, bytes, alignment, stream);
    if (done.ok) this.#allocatedBytes -= bytes;
    return done;
  }
}
