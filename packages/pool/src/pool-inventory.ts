import { isAsyncResource, type AsyncResource, type MemoryBlock, type SyncResource } from '@hs/nanovdb-mr';
import { ErrorCode, err, ok, type Backend, type DeviceMemory, type Event, type Result } from '@hs/streams';
import { needsStreamOrder, poolResource } from './pool-resource.js';
import type { ResolvedPoolSpec } from './pool-spec.js';

/**
 * Everything a pool takes on the cold path: one backing block from its resource, one readiness event
 * per slot and `maxReleaseStreams` release events per slot on the event device and on each release device
 * (no events for a host-only pool, which has no event device).
 * Spec: "Sized cold, borrowed hot", "Fanout release-stream caps".
 */
export interface PoolInventory {
  /** The resource the backing came from and returns to. */
  readonly resource: SyncResource;
  /** True when the backing was allocated (and returns) in stream order on the producer stream: cudaDevice pools. */
  readonly streamOrdered: boolean;
  /** The backing block: `totalBytes` bytes at `block.byteOffset` of `block.memory`. */
  readonly block: MemoryBlock;
  /** The allocation the block lies in (`block.memory`). */
  readonly memory: DeviceMemory;
  /** Index `i` is slot `i`'s readiness event. */
  readonly readinessEvents: readonly Event[];
  /**
   * Release events, per device then per slot: on device `d` (0 the event device, `d` > 0 `releaseDevices[d - 1]`)
   * slot `i`'s are indices `(d * slotCount + i) * maxReleaseStreams` up to (excluding) the next slot's.
   */
  readonly releaseEvents: readonly Event[];
}

/**
 * Makes a pool's inventory: the backing from the spec's resource (or, when none was injected, the current
 * device resource for cudaDevice memory and the memory kind's default resource of `backend` otherwise),
 * then the events. A cudaDevice pool's backing is stream-ordered: `allocateAsync` on the producer stream
 * at materialization, `deallocateAsync` there at disposal, when its resource is async (a synchronous one
 * is used through `allocate`/`deallocate`). Before anything is allocated, InvalidArgument when the
 * resource declares (`resourceOrigin`) another memory kind, device or backend than the pool's; after allocation, InvalidArgument when the block it
 * handed out is not of the pool's kind and device (returned first); otherwise the resource's and backend's
 * errors. On any failure it destroys the events already created, returns the block and reports that
 * failure: nothing is left behind.
 */
export function materializeInventory(backend: Backend, spec: ResolvedPoolSpec): Result<PoolInventory> {
  // A standalone pool also takes a synchronous resource (its blocks are valid on every stream at once,
  // as a pre-exported IPC region's are); the graph bindings of @hs/runtime require the async tier.
  const chosen = poolResource(backend, spec, spec.resource, false);
  if (!chosen.ok) return chosen;
  const resource = chosen.value;
  const streamOrdered = needsStreamOrder(spec.memoryKind) && spec.producerStream !== null && isAsyncResource(resource);
  const producer = spec.producerStream;
  const allocated = streamOrdered && producer !== null ? (resource as AsyncResource).allocateAsync(spec.totalBytes, spec.alignment, producer) : resource.allocate(spec.totalBytes, spec.alignment);
  if (!allocated.ok) return allocated;
  const block = allocated.value;
  if (block === null || block.memory.kind !== spec.memoryKind || block.memory.device !== spec.device || block.byteLength < spec.totalBytes) {
    if (block !== null) returnBacking(resource, streamOrdered, spec, block);
    return err(
      ErrorCode.InvalidArgument,
      `pool "${spec.name}": the resource returned ${block === null ? 'no block' : `${block.byteLength} bytes of ${block.memory.kind} memory on ${block.memory.device.toString()}`} for ${spec.totalBytes} bytes of ${spec.memoryKind} memory on ${spec.device.toString()}; inject a resource of the pool's memory kind and device`,
    );
  }
  const readinessEvents: Event[] = [];
  const releaseEvents: Event[] = [];
  const inventory: PoolInventory = Object.freeze({ resource, streamOrdered, block, memory: block.memory, readinessEvents, releaseEvents });
  const unwind = (): void => releaseInventory(backend, spec, inventory);
  const eventDevice = spec.eventDevice;
  if (eventDevice === null) return ok(inventory);
  for (let slot = 0; slot < spec.slotCount; slot++) {
    const created = backend.createEvent(eventDevice, { label: `${spec.name}[slot ${slot}] readiness` });
    if (!created.ok) {
      unwind();
      return created;
    }
    readinessEvents.push(created.value);
  }
  for (const device of [eventDevice, ...spec.releaseDevices]) {
    const on = device === eventDevice ? '' : ` on ${device.toString()}`;
    for (let slot = 0; slot < spec.slotCount; slot++) {
      for (let r = 0; r < spec.maxReleaseStreams; r++) {
        const created = backend.createEvent(device, { label: `${spec.name}[slot ${slot}] release ${r}${on}` });
        if (!created.ok) {
          unwind();
          return created;
        }
        releaseEvents.push(created.value);
      }
    }
  }
  return ok(inventory);
}

/** Destroys every event of the inventory and returns its backing block to its resource. */
export function releaseInventory(backend: Backend, spec: ResolvedPoolSpec, inventory: PoolInventory): void {
  for (const e of inventory.readinessEvents) backend.destroyEvent(e);
  for (const e of inventory.releaseEvents) backend.destroyEvent(e);
  returnBacking(inventory.resource, inventory.streamOrdered, spec, inventory.block);
}

/** Returns the backing: stream-ordered on the producer stream while it lives, else through the synchronous pair. */
function returnBacking(resource: SyncResource, streamOrdered: boolean, spec: ResolvedPoolSpec, block: MemoryBlock): void {
  const producer = spec.producerStream;
  if (streamOrdered && producer !== null && !producer.destroyed) (resource as AsyncResource).deallocateAsync(block, spec.totalBytes, spec.alignment, producer);
  else resource.deallocate(block, spec.totalBytes, spec.alignment);
}
