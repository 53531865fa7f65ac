import type { DeviceMemory } from '../backend.js';
import type { Device } from '../device.js';
import type { Ok } from '../errors.js';
import type { MemoryKind } from '../memory-kind.js';

/**
 * One emulated allocation of the host backend: a `DeviceMemory` handle over its own `ArrayBuffer`.
 * The bytes stay reachable from work already enqueued after `free()` (like `cudaFree`, which waits for
 * that work), but the handle refuses new use.
 */
export class HostMemory implements DeviceMemory {
  freed = false;
  /** Cached `hostView` success, so repeated views allocate nothing. */
  hostView: Ok<Uint8Array> | null = null;
  /** 32-bit words over the whole buffer, made on first use by a stream value op (null: not 4-byte aligned). */
  private wordView: Uint32Array | null | undefined = undefined;

  constructor(
    /** Backend that made the allocation; handles from another backend are foreign. */
    readonly owner: object,
    readonly id: number,
    readonly device: Device,
    readonly kind: MemoryKind,
    readonly address: bigint,
    readonly byteSize: number,
    readonly label: string,
    /** The whole allocation, `byteSize` bytes. */
    readonly bytes: Uint8Array,
  ) {}

  /**
   * A `Uint32Array` over the whole underlying buffer for the 64-bit stream value ops (made once), or null
   * when `bytes` does not start at a 4-byte boundary of its buffer (the ops then use byte access).
   */
  words(): Uint32Array | null {
    let w = this.wordView;
    if (w === undefined) {
      const b = this.bytes;
      w = b.byteOffset % 4 === 0 ? new Uint32Array(b.buffer, 0, Math.floor(b.buffer.byteLength / 4)) : null;
      this.wordView = w;
    }
    return w;
  }
}

/** First emulated address handed out; non-zero so that address 0 never names an allocation. */
const ADDRESS_BASE = 0x10_0000_0000n;
/** Gap left between allocations (bytes) so that an off-by-one range never lands in the neighbour. */
const ADDRESS_GUARD = 256n;

/**
 * Hands out emulated addresses: aligned as requested, never reused, never overlapping. Addresses are a
 * bump pointer in a 64-bit space, so a process cannot run out of them in practice.
 */
export class HostAddressSpace {
  private next = ADDRESS_BASE;

  /** Reserves `byteSize` bytes aligned to `alignment` (a power of two) and returns the first address. */
  reserve(byteSize: number, alignment: number): bigint {
    const align = BigInt(alignment);
    const address = ((this.next + align - 1n) / align) * align;
    this.next = address + BigInt(byteSize) + ADDRESS_GUARD;
    return address;
  }
}
