import type { Device } from '../device.js';
import type { MemoryKind } from '../memory-kind.js';
import { HostAddressSpace, HostMemory } from './host-memory.js';

/**
 * The host backend's live allocations (its own and adopted ones) and their emulated addresses. Requests
 * are validated by the backend first.
 */
export class HostMemoryTable {
  private readonly allocations = new Set<HostMemory>();
  private readonly addresses = new HostAddressSpace();
  private nextMemoryId = 1;

  constructor(
    /** The backend that owns every allocation made here. */
    private readonly owner: object,
  ) {}

  /**
   * Tracks `bytes` as memory of `kind` on `device`: at `address` when the caller has a real one (an
   * adopted mapping: alignment checks and native tables see the true pointer; emulated addresses start far
   * below any mapping), else at a fresh emulated address aligned to `alignment`. `label` defaults to
   * `${kind} allocation <id>`, or `adopted ${kind} memory <id>` when `adopted`.
   */
  track(device: Device, kind: MemoryKind, bytes: Uint8Array, alignment: number, address: bigint | null, label: string | undefined, adopted: boolean): HostMemory {
    const id = this.nextMemoryId++;
    const at = address ?? this.addresses.reserve(bytes.byteLength, alignment);
    const name = label ?? (adopted ? `adopted ${kind} memory ${id}` : `${kind} allocation ${id}`);
    const memory = new HostMemory(this.owner, id, device, kind, at, bytes.byteLength, name, bytes);
    this.allocations.add(memory);
    return memory;
  }

  /** Refuses new use of `m` (work already enqueued still reaches its bytes). */
  forget(m: HostMemory): void {
    m.freed = true;
    m.hostView = null;
    this.allocations.delete(m);
  }

  /** Refuses new use of every live allocation. */
  forgetAll(): void {
    for (const m of this.allocations) {
      m.freed = true;
      m.hostView = null;
    }
    this.allocations.clear();
  }
}
