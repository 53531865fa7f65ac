import type { MemoryRange, Result, Stream } from '@hs/streams';

/**
 * A block handed out by a resource: a byte range of one backend allocation (`memory`, `byteOffset`,
 * `byteLength`), directly usable in `Backend` copies, fills and kernel launches. Its address is
 * `memory.address + BigInt(byteOffset)`. A resource may cut many blocks from one allocation. A request
 * for 0 bytes gives `null` instead of a block.
 */
export type MemoryBlock = MemoryRange;

/**
 * The synchronous resource tier: memory valid on every stream and for the host (where the memory is
 * host-accessible) as soon as `allocate` returns. `deallocate` requires the block to be quiescent: no
 * work enqueued on any stream still uses it.
 *
 * A plain JS object with these two methods is a resource and can be injected wherever hs allocates.
 * Spec: "Resource (allocator): two tiers", synchronous tier (nanovdb-memory-resources).
 */
export interface SyncResource {
  /**
   * Allocates `bytes` bytes (a non-negative safe integer) whose address is a multiple of `alignment`
   * (a power of two). Returns `null` for 0 bytes. Errors: `OutOfMemory` when a valid size cannot be
   * satisfied (nothing allocated), `InvalidArgument` for a bad size or alignment, `NotSupported` when
   * the device cannot provide this kind of memory.
   */
  allocate(bytes: number, alignment: number): Result<MemoryBlock | null>;
  /**
   * Returns a block from `allocate` (or `null` from a 0-byte request) with the same `bytes` and
   * `alignment`. Errors: `InvalidArgument` for a block this resource did not hand out or a size or
   * alignment mismatch, `InvalidState` for a block already returned.
   */
  deallocate(block: MemoryBlock | null, bytes: number, alignment: number): Result<void>;
  /** True when the host may read and write the blocks directly (host, pinned, managed memory). */
  readonly hostAccessible?: boolean;
  /** True when device work may access the blocks (pinned, device, managed memory). */
  readonly deviceAccessible?: boolean;
}

/**
 * The stream-ordered tier: the synchronous pair plus `allocateAsync`/`deallocateAsync` on a stream. An
 * async resource is always a sync one too. A block from `allocateAsync(…, s)` may be used by work
 * enqueued on `s` after the call (and by other streams ordered after it through an event);
 * `deallocateAsync(…, s)` returns it once the work enqueued on `s` before the call completes.
 * Spec: "Resource (allocator): two tiers", stream-ordered tier.
 */
export interface AsyncResource extends SyncResource {
  /** Stream-ordered `allocate`; same sizes, alignment and errors, plus stream errors (`InvalidState`, `InvalidArgument`). */
  allocateAsync(bytes: number, alignment: number, stream: Stream): Result<MemoryBlock | null>;
  /** Stream-ordered `deallocate`; same arguments and errors, plus stream errors. */
  deallocateAsync(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream): Result<void>;
}

/**
 * Default alignment of resource blocks, in bytes (CUDA's allocation granularity for device memory).
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { DEFAULT_ALIGNMENT, HostResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * // the alignment argument defaults to DEFAULT_ALIGNMENT (256 bytes, CUDA's allocation granularity)
 * const block = unwrap(host.allocate(1000));
 * const address = block === null ? 0n : block.memory.address + BigInt(block.byteOffset);
 * console.log(`aligned to ${DEFAULT_ALIGNMENT} bytes: ${address % BigInt(DEFAULT_ALIGNMENT) === 0n}`);
 * unwrap(host.deallocate(block, 1000, DEFAULT_ALIGNMENT));
 * ```
 */
export const DEFAULT_ALIGNMENT = 256;

/**
 * True when `value` has the synchronous pair `allocate` and `deallocate` (the `is_resource` trait).
 * Spec: "the two detection traits".
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { HostResource, ResourceBuffer, isAsyncResource, isResource, type MemoryBlock } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * // a plain object with allocate and deallocate is a resource: this one logs every request
 * const logging = {
 *   allocate: (bytes: number, alignment: number) => (console.log(`allocate ${bytes} bytes`), host.allocate(bytes, alignment)),
 *   deallocate: (block: MemoryBlock | null, bytes: number, alignment: number) => host.deallocate(block, bytes, alignment),
 * };
 * console.log(`resource: ${isResource(logging)}, stream-ordered: ${isAsyncResource(logging)}, a Map: ${isResource(new Map())}`);
 * const buffer = unwrap(ResourceBuffer.allocate(backend, logging, 64)); // prints "allocate 64 bytes"
 * buffer.dispose();
 * ```
 */
export function isResource(value: unknown): value is SyncResource {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Partial<SyncResource>;
  return typeof r.allocate === 'function' && typeof r.deallocate === 'function';
}

/**
 * True when `value` has all four methods (the `is_async_resource` trait). An object with only the
 * async pair is not an async resource: the async tier refines the sync one.
 * @example
 * ```ts
 * import { Device, HostBackend } from '@hs/streams';
 * import { AsyncFromSync, DeviceResource, MallocResource, isAsyncResource, type SyncResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const malloc = new MallocResource(backend, Device.cuda(0));
 * const candidates: Record<string, SyncResource> = {
 *   DeviceResource: new DeviceResource(backend, Device.cuda(0)), // all four methods
 *   MallocResource: malloc, // the synchronous pair only
 *   'AsyncFromSync(MallocResource)': new AsyncFromSync(backend, malloc), // lifted explicitly
 * };
 * for (const [name, resource] of Object.entries(candidates)) console.log(`${name}: stream-ordered ${isAsyncResource(resource)}`);
 * ```
 */
export function isAsyncResource(value: unknown): value is AsyncResource {
  if (!isResource(value)) return false;
  const r = value as Partial<AsyncResource>;
  return typeof r.allocateAsync === 'function' && typeof r.deallocateAsync === 'function';
}

/**
 * True when `resource` declares its blocks host-accessible (an undeclared property counts as false).
 * @example
 * ```ts
 * import { Device, HostBackend } from '@hs/streams';
 * import { DeviceResource, HostResource, ManagedResource, PinnedResource, hostAccessible, type SyncResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * // a library fills host-accessible blocks in place and stages everything else through a host copy
 * function needsStaging(resource: SyncResource): boolean {
 *   return !hostAccessible(resource);
 * }
 * const resources = [new HostResource(backend), new PinnedResource(backend), new ManagedResource(backend, Device.cuda(0)), new DeviceResource(backend, Device.cuda(0))];
 * for (const r of resources) console.log(`${r.label}: staging ${needsStaging(r)}`); // only DeviceResource needs it
 * ```
 */
export function hostAccessible(resource: SyncResource): boolean {
  return resource.hostAccessible === true;
}

/**
 * True when `resource` declares its blocks device-accessible (an undeclared property counts as false).
 * @example
 * ```ts
 * import { HostBackend } from '@hs/streams';
 * import { HostResource, PinnedResource, deviceAccessible, type MemoryBlock } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * // a plain JS resource that declares nothing counts as not device-accessible
 * const undeclared = {
 *   allocate: (bytes: number, alignment: number) => host.allocate(bytes, alignment),
 *   deallocate: (block: MemoryBlock | null, bytes: number, alignment: number) => host.deallocate(block, bytes, alignment),
 * };
 * console.log(`pinned: ${deviceAccessible(new PinnedResource(backend))}, pageable: ${deviceAccessible(host)}, undeclared: ${deviceAccessible(undeclared)}`);
 * ```
 */
export function deviceAccessible(resource: SyncResource): boolean {
  return resource.deviceAccessible === true;
}
