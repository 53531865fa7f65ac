import { DType } from '@hs/tensor';
import { MAX_DESCRIPTOR_RANK } from './frame-layout.js';

/**
 * One published tensor as a DESCRIPTOR frame carries it. A decoder fills one record again and again (no
 * allocation per frame); copy what you keep.
 *
 * Units: `shape` and `strides` count elements (`rank` entries each are meaningful), `byteOffset` and
 * `byteLength` count bytes from the start of the slot. `generation` counts publications of the slot
 * (strictly increasing per slot); `fenceValue` is the value the producer stream writes to the topic's
 * fence counter (0 for a host writer).
 * Spec: "Crossing process boundaries: the generation fence", "Pinned-host readiness follows the writer".
 *
 * @example
 * ```ts
 * import { DescriptorDecoder, DescriptorFlag, FRAME_BYTES, TensorDescriptor, encodeDescriptor } from '@hs/ipc';
 * import { unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const decoder = new DescriptorDecoder({ topicId: 3, slotCount: 2, slotStride: 256, maxRank: 2 });
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * const d = new TensorDescriptor(); // one record, refilled by every decode: no allocation per frame
 * const kept: number[][] = [];
 * const published = [{ slot: 0, shape: [4, 8], strides: [8, 1] }, { slot: 1, shape: [16], strides: [1] }];
 * for (const { slot, shape, strides } of published) {
 *   const byteLength = shape.reduce((n, e) => n * e, 1) * DType.float32.itemSize;
 *   encodeDescriptor(frame, 0, { topicId: 3, slot, generation: 1, fenceValue: 0, flags: DescriptorFlag.HostWriter, dtype: DType.float32, shape, strides, byteOffset: 0, byteLength });
 *   unwrap(decoder.decode(frame, 0, d));
 *   kept.push([...d.shape]); // copy what you keep
 * }
 * console.log(`last: slot ${d.slot}, rank ${d.rank}, ${d.byteLength} bytes; shapes kept: ${JSON.stringify(kept)}`);
 * ```
 */
export class TensorDescriptor {
  /** Topic the frame belongs to (assigned by the publisher, sent in HELLO). */
  topicId = 0;
  /** Slot index in the boundary pool, 0..slotCount-1. */
  slot = 0;
  /** Publication count of the slot; strictly increasing per slot. */
  generation = 0;
  /** Fence value to wait for on the device path; 0 for a host writer. */
  fenceValue = 0;
  /** `DescriptorFlag` bits. */
  flags = 0;
  /** Element type. */
  dtype: DType = DType.uint8;
  /** Number of meaningful `shape`/`strides` entries, 0..8. */
  rank = 0;
  /** Elements per dimension; its length is `rank`. */
  readonly shape: number[] = [];
  /** Elements between neighbours per dimension; its length is `rank`. */
  readonly strides: number[] = [];
  /** Bytes from the start of the slot to the first element. */
  byteOffset = 0;
  /** Bytes spanned by the tensor (the strided span times the item size). */
  byteLength = 0;
}

/**
 * Bytes spanned by `rank` dimensions of `shape`/`strides` with `itemSize`-byte elements: 0 when any
 * dimension is 0, else `(1 + sum((shape[i] - 1) * strides[i])) * itemSize`. Returns -1 when the span is not
 * a safe integer. Allocates nothing.
 */
export function stridedSpan(rank: number, shape: readonly number[], strides: readonly number[], itemSize: number): number {
  let last = 0;
  for (let i = 0; i < rank; i++) {
    const extent = shape[i] as number;
    if (extent === 0) return 0;
    last += (extent - 1) * (strides[i] as number);
    if (!Number.isSafeInteger(last)) return -1;
  }
  const span = (last + 1) * itemSize;
  return Number.isSafeInteger(span) ? span : -1;
}

/** True when `strides` are the packed row-major strides of `shape` (the only layout pool slots produce). */
export function isPackedRowMajor(rank: number, shape: readonly number[], strides: readonly number[]): boolean {
  let expected = 1;
  for (let i = rank - 1; i >= 0; i--) {
    const extent = shape[i] as number;
    if (extent !== 1 && (strides[i] as number) !== expected) return false;
    expected *= extent;
  }
  return true;
}
