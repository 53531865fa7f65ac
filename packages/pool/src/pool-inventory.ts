import { ok, type Backend, type DeviceMemory, type Event, type Result } from '@hs/streams';
import type { ResolvedPoolSpec } from './pool-spec.js';

/**
 * Everything a pool takes from its backend, made once on the cold path: one backing allocation, one
 * readiness event per slot and `maxReleaseStreams` release events per slot (no events for a host-only
 * pool, which has no event device).
 * Spec: "Sized cold, borrowed hot", "Fanout release-stream caps".
 */
export interface PoolInventory {
  readonly memory: DeviceMemory;
  /** Index `i` is slot `i`'s readiness event. */
  readonly readinessEvents: readonly Event[];
  /** Slot `i`'s release events are indices `i * maxReleaseStreams` up to (excluding) `(i + 1) * maxReleaseStreams`. */
  readonly releaseEvents: readonly Event[];
}

/**
 * Makes a pool's inventory. On any backend failure it destroys the events already created, frees the
 * allocation and returns that failure, so nothing is left behind.
 */
export function materializeInventory(backend: Backend, spec: ResolvedPoolSpec): Result<PoolInventory> {
  const allocated = backend.allocate({
    kind: spec.memoryKind,
    device: spec.device,
    byteSize: spec.totalBytes,
    alignment: spec.alignment,
    label: `pool ${spec.name} backing`,
  });
  if (!allocated.ok) return allocated;
  const readinessEvents: Event[] = [];
  const releaseEvents: Event[] = [];
  const unwind = (): void => releaseInventory(backend, { memory: allocated.value, readinessEvents, releaseEvents });
  const eventDevice = spec.eventDevice;
  if (eventDevice === null) return ok(Object.freeze({ memory: allocated.value, readinessEvents, releaseEvents }));
  for (let slot = 0; slot < spec.slotCount; slot++) {
    const created = backend.createEvent(eventDevice, { label: `${spec.name}[slot ${slot}] readiness` });
    if (!created.ok) {
      unwind();
      return created;
    }
    readinessEvents.push(created.value);
  }
  for (let slot = 0; slot < spec.slotCount; slot++) {
    for (let r = 0; r < spec.maxReleaseStreams; r++) {
      const created = backend.createEvent(eventDevice, { label: `${spec.name}[slot ${slot}] release ${r}` });
      if (!created.ok) {
        unwind();
        return created;
      }
      releaseEvents.push(created.value);
    }
  }
  return ok(Object.freeze({ memory: allocated.value, readinessEvents, releaseEvents }));
}

/** Destroys every event of the inventory and frees its allocation. */
export function releaseInventory(backend: Backend, inventory: PoolInventory): void {
  for (const e of inventory.readinessEvents) backend.destroyEvent(e);
  for (const e of inventory.releaseEvents) backend.destroyEvent(e);
  backend.free(inventory.memory);
}
