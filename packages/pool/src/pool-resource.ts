import { DeviceResource, currentDeviceResource, defaultResource, isAsyncResource, resourceOrigin, type SyncResource } from '@hs/nanovdb-mr';
import { ErrorCode, MemoryKind, err, ok, type Backend, type Device, type Result } from '@hs/streams';

/** What a pool's resource must provide: memory of one kind on one device. */
export interface PoolMemory {
  /** Pool name, for messages. */
  readonly name: string;
  /** Memory kind of the backing. */
  readonly memoryKind: MemoryKind;
  /** Device of the backing. */
  readonly device: Device;
}

/**
 * True for the memory kinds whose pool backing is allocated and returned in stream order on the producer
 * stream: cudaDevice memory (its writer is always a stream). Spec: "Resource (allocator): two tiers".
 * @example
 * ```ts
 * import { MemoryKind } from '@hs/streams';
 * import { needsStreamOrder } from '@hs/pool';
 *
 * for (const kind of [MemoryKind.CudaDevice, MemoryKind.PinnedHost, MemoryKind.Host]) {
 *   console.log(`${kind}: backing allocated in stream order on the producer stream: ${needsStreamOrder(kind)}`);
 * }
 * ```
 */
export function needsStreamOrder(kind: MemoryKind): boolean {
  return kind === MemoryKind.CudaDevice;
}

/**
 * The resource a pool of `memory` allocates from, checked against it before anything is allocated:
 * `resource` when given, else the current device resource (`currentDeviceResource` of `@hs/nanovdb-mr`)
 * for cudaDevice memory and `defaultResource(backend, kind, device)` for the other kinds.
 * @returns InvalidArgument when the resource declares (`resourceOrigin`) another memory kind, device or
 *   backend than the pool's, or (with `requireStreamOrder`, the default) is synchronous for cudaDevice
 *   memory (lift it with `AsyncFromSync`);
 *   NotSupported when the default device resource meets a device without stream-ordered memory pools;
 *   the default resource's errors (a device the backend does not have).
 * Spec: "Resource (allocator): two tiers" (nanovdb-memory-resources), "Sized cold, borrowed hot".
 * @example
 * ```ts
 * import { HostResource, StatisticsResource } from '@hs/nanovdb-mr';
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { poolResource } from '@hs/pool';
 *
 * const backend = new HostBackend();
 * const counted = new StatisticsResource(new HostResource(backend));
 * // the resource a host pool would allocate from: the injected one, checked against the pool's memory
 * const chosen = unwrap(poolResource(backend, { name: 'frames', memoryKind: MemoryKind.Host, device: Device.cpu() }, counted));
 * console.log(`pool allocates from the injected resource: ${chosen === counted}`);
 * ```
 */
export function poolResource(backend: Backend, memory: PoolMemory, resource: SyncResource | null, requireStreamOrder = true): Result<SyncResource> {
  const pool = `pool "${memory.name}"`;
  let chosen: SyncResource;
  if (resource !== null) chosen = resource;
  else {
    const fallback = needsStreamOrder(memory.memoryKind) ? currentDeviceResource(backend, memory.device) : defaultResource(backend, memory.memoryKind, memory.device);
    if (!fallback.ok) return err(fallback.error.code, `${pool}: ${fallback.error.message}`);
    chosen = fallback.value;
    if (chosen instanceof DeviceResource && !backend.supportsMemoryPools(memory.device)) {
      return err(
        ErrorCode.NotSupported,
        `${pool} needs cudaDevice memory on ${memory.device.toString()}, which has no stream-ordered memory pools; give the pool a synchronous device malloc lifted explicitly: new AsyncFromSync(backend, new MallocResource(backend, device))`,
      );
    }
  }
  const origin = resourceOrigin(chosen);
  if (origin !== null && (origin.kind !== memory.memoryKind || origin.device !== memory.device)) {
    return err(
      ErrorCode.InvalidArgument,
      `${pool} needs ${memory.memoryKind} memory on ${memory.device.toString()}, but its resource hands out ${origin.kind} memory on ${origin.device.toString()}; give it a resource of the pool's memory kind and device`,
    );
  }
  if (origin !== null && origin.backend !== null && origin.backend !== backend) {
    return err(ErrorCode.InvalidArgument, `${pool}: its resource allocates from another backend than the pool's; make the resource with the backend the pool runs on`);
  }
  if (requireStreamOrder && needsStreamOrder(memory.memoryKind) && !isAsyncResource(chosen)) {
    return err(
      ErrorCode.InvalidArgument,
      `${pool} holds ${memory.memoryKind} memory written on its producer stream, which needs a stream-ordered resource (allocateAsync and deallocateAsync); this one is synchronous: lift it with new AsyncFromSync(backend, resource)`,
    );
  }
  return ok(chosen);
}
