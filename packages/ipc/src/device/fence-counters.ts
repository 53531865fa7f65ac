import type { DeviceMemory, MemoryRange } from '@hs/streams';

/**
 * Geometry of a device boundary's generation-fence counters: one little-endian u64 per slot, stored in
 * the exported allocation right after the last slot (so one CUDA IPC handle carries both), the area
 * rounded up to 256 bytes. The producer stream writes a slot's generation into its counter; an importer
 * waits until the counter reaches the descriptor's fence value.
 * Spec: "Crossing process boundaries: the generation fence".
 */

/**
 * Bytes of the counters of `slotCount` slots.
 *
 * @example
 * ```ts
 * import { fenceCounterBytes } from '@hs/ipc';
 *
 * // one u64 counter per slot after the last slot, rounded up to 256 bytes: size a device allocation or a pinnedHost segment
 * const slotStride = 640 * 480 * 4;
 * for (const slotCount of [1, 32, 33]) {
 *   const counters = fenceCounterBytes(slotCount);
 *   console.log(`${slotCount} slot(s): ${counters} counter bytes, ${slotCount * slotStride + counters} bytes in all`);
 * }
 * ```
 */
export function fenceCounterBytes(slotCount: number): number {
  return Math.ceil((slotCount * 8) / 256) * 256;
}

/**
 * Byte offset of `slot`'s counter from the start of the allocation.
 *
 * @example
 * ```ts
 * import { fenceCounterBytes, fenceCounterOffset } from '@hs/ipc';
 *
 * // an importer's check of a slot's generation fence, over memory laid out as a topic's (here an ordinary buffer)
 * const slotCount = 4;
 * const slotStride = 1024;
 * const memory = new DataView(new ArrayBuffer(slotCount * slotStride + fenceCounterBytes(slotCount)));
 * const counterOf = (slot: number) => memory.getBigUint64(fenceCounterOffset(slotCount, slotStride, slot), true);
 * // what the producer stream does once slot 2's writes completed (a 64-bit stream memory write of its generation)
 * memory.setBigUint64(fenceCounterOffset(slotCount, slotStride, 2), 5n, true);
 * const reached = (slot: number, fenceValue: number) => counterOf(slot) >= BigInt(fenceValue);
 * console.log(`slot 2's counter at byte ${fenceCounterOffset(slotCount, slotStride, 2)}: fence 5 reached ${reached(2, 5)}, fence 6 ${reached(2, 6)}`);
 * ```
 */
export function fenceCounterOffset(slotCount: number, slotStride: number, slot: number): number {
  return slotCount * slotStride + 8 * slot;
}

/**
 * One 8-byte range per slot over the counters of `memory` (the boundary's allocation), made once so a
 * fence write or wait allocates nothing.
 */
export function fenceCounterRanges(memory: DeviceMemory, slotCount: number, slotStride: number): readonly MemoryRange[] {
  return Object.freeze(
    Array.from({ length: slotCount }, (_, slot) =>
      Object.freeze({ memory, byteOffset: fenceCounterOffset(slotCount, slotStride, slot), byteLength: 8, label: `${memory.label} fence counter ${slot}` }),
    ),
  );
}

/**
 * True when a host-transport (shared-memory) topic of `memoryKind` carries fence counters: pinnedHost
 * segments of `segmentBytes` that cover the slots and their counters (a CUDA-stream writer may publish
 * there); host segments never do (host memory is written by the host writer only).
 */
export function segmentHasFenceCounters(pinnedHost: boolean, slotCount: number, slotStride: number, segmentBytes: number): boolean {
  return pinnedHost && segmentBytes >= slotCount * slotStride + fenceCounterBytes(slotCount);
}
