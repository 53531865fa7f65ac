import { ErrorCode, HsError, OK_VOID, err, type Err, type Result } from '@hs/streams';
import { DType, type DTypeCode } from '@hs/tensor';
import { readFrameHeader, writeFrameHeader } from './frame-header.js';
import { DescriptorFlag, FRAME_BYTES, FrameType, MAX_DESCRIPTOR_RANK, Offset } from './frame-layout.js';
import { TensorDescriptor, stridedSpan } from './tensor-descriptor.js';
import { allZero, readSafeU64, writeSafeU64 } from './wire-integers.js';

/** What a decoder checks descriptors against: the geometry the publisher announced in HELLO. */
export interface TopicGeometry {
  /** Topic id every frame must carry. */
  readonly topicId: number;
  /** Slots in the boundary pool, 1..65536. */
  readonly slotCount: number;
  /** Bytes from one slot's start to the next; a descriptor's bytes must lie inside one slot. */
  readonly slotStride: number;
  /** Largest rank the topic admits, 0..8. */
  readonly maxRank: number;
  /**
   * True when the topic's memory holds one generation-fence counter per slot after the slots (device
   * topics, and pinnedHost segments whose size covers them), so descriptors may name a CUDA-stream writer
   * (`DeviceFence`); false or absent: every descriptor must come from the host writer (fence 0).
   */
  readonly fenceCounters?: boolean;
}

/** The fields `encodeDescriptor` writes. */
export interface DescriptorFields {
  /** Topic id announced in HELLO. */
  readonly topicId: number;
  /** Slot index, 0..slotCount-1. */
  readonly slot: number;
  /** Publication count of the slot, positive and increasing per slot. */
  readonly generation: number;
  /** Fence counter value for a CUDA writer; 0 for a host writer. */
  readonly fenceValue: number;
  /** `DescriptorFlag` bits. */
  readonly flags: number;
  /** Element type. */
  readonly dtype: DType;
  /** Elements per dimension, at most 8 entries. */
  readonly shape: readonly number[];
  /** Elements between neighbours per dimension, one per `shape` entry. */
  readonly strides: readonly number[];
  /** Bytes from the start of the slot. */
  readonly byteOffset: number;
  /** Bytes spanned. */
  readonly byteLength: number;
}

const KNOWN_FLAGS = DescriptorFlag.HostWriter | DescriptorFlag.DeviceFence;

/**
 * Writes a DESCRIPTOR frame (`FRAME_BYTES` bytes, reserved bytes zeroed) at `offset` of `view`.
 * @throws HsError `InvalidArgument` when a field cannot be represented (rank above 8, a value that is not a
 * non-negative safe integer): the publisher only encodes tensors of its own pool, so this is a bug.
 *
 * @example
 * ```ts
 * import { DescriptorDecoder, DescriptorFlag, FRAME_BYTES, TensorDescriptor, encodeDescriptor } from '@hs/ipc';
 * import { unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * // one published tensor: slot 2 of a topic of 4 slots of 307 200 bytes, written by the host
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * encodeDescriptor(frame, 0, {
 *   topicId: 0x5eed,
 *   slot: 2,
 *   generation: 1,
 *   fenceValue: 0, // the host writer records no fence
 *   flags: DescriptorFlag.HostWriter,
 *   dtype: DType.uint8,
 *   shape: [480, 640],
 *   strides: [640, 1], // elements
 *   byteOffset: 0,
 *   byteLength: 480 * 640,
 * });
 * const d = new TensorDescriptor();
 * unwrap(new DescriptorDecoder({ topicId: 0x5eed, slotCount: 4, slotStride: 307_200, maxRank: 2 }).decode(frame, 0, d));
 * console.log(`slot ${d.slot} generation ${d.generation}: ${d.dtype.name} [${d.shape.join(', ')}], ${d.byteLength} bytes`);
 * ```
 */
export function encodeDescriptor(view: DataView, offset: number, fields: DescriptorFields): void {
  const rank = fields.shape.length;
  if (rank > MAX_DESCRIPTOR_RANK || fields.strides.length !== rank) {
    throw new HsError(ErrorCode.InvalidArgument, `encodeDescriptor: rank ${rank} with ${fields.strides.length} strides; at most ${MAX_DESCRIPTOR_RANK} dimensions, one stride each`);
  }
  for (let i = offset; i < offset + FRAME_BYTES; i += 4) view.setUint32(i, 0, true);
  writeFrameHeader(view, offset, FrameType.Descriptor, fields.topicId);
  view.setUint32(offset + Offset.slot, fields.slot, true);
  writeU64(view, offset + Offset.generation, fields.generation, 'generation');
  writeU64(view, offset + Offset.fenceValue, fields.fenceValue, 'fenceValue');
  view.setUint32(offset + Offset.flags, fields.flags, true);
  view.setUint8(offset + Offset.dtypeCode, fields.dtype.code);
  view.setUint8(offset + Offset.dtypeBits, fields.dtype.bits);
  view.setUint16(offset + Offset.dtypeLanes, fields.dtype.lanes, true);
  view.setUint32(offset + Offset.rank, rank, true);
  writeU64(view, offset + Offset.byteOffset, fields.byteOffset, 'byteOffset');
  writeU64(view, offset + Offset.byteLength, fields.byteLength, 'byteLength');
  for (let i = 0; i < rank; i++) {
    writeU64(view, offset + Offset.shape + 8 * i, fields.shape[i] as number, 'shape');
    writeU64(view, offset + Offset.strides + 8 * i, fields.strides[i] as number, 'strides');
  }
}

function writeU64(view: DataView, at: number, value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new HsError(ErrorCode.InvalidArgument, `encodeDescriptor: ${what} ${String(value)} is not a non-negative safe integer`);
  }
  writeSafeU64(view, at, value);
}

function reject(field: string, problem: string): Err {
  return err(ErrorCode.ProtocolError, `descriptor rejected: ${field} ${problem}`);
}

/**
 * Decodes and validates DESCRIPTOR frames of one topic, trusting nothing in them: header (magic, version,
 * type, topic id), slot in range, generation strictly above the slot's last accepted one, known flags, a
 * fence value of 0 for a host writer, a device fence only on a topic with fence counters and with a fence
 * value in 1..generation (the producer writes the slot's generation), a known dtype, rank within the topic's bound, shape and strides
 * non-negative safe integers, byte length equal to the strided span, bytes inside the slot, reserved bytes
 * zero. Each failure is `ProtocolError` naming the field; a rejected frame changes no state.
 *
 * Spec: "Crossing process boundaries: the generation fence" (descriptor validation before use).
 *
 * @example
 * ```ts
 * import { DescriptorDecoder, DescriptorFlag, FRAME_BYTES, TensorDescriptor, encodeDescriptor } from '@hs/ipc';
 * import { DType } from '@hs/tensor';
 *
 * // checks descriptors against the geometry the HELLO announced
 * const decoder = new DescriptorDecoder({ topicId: 9, slotCount: 4, slotStride: 1024, maxRank: 1 });
 * const frame = new DataView(new ArrayBuffer(FRAME_BYTES));
 * const out = new TensorDescriptor();
 * const fields = { topicId: 9, slot: 1, generation: 1, fenceValue: 0, flags: DescriptorFlag.HostWriter, dtype: DType.float32, shape: [256], strides: [1], byteOffset: 0, byteLength: 1024 };
 * encodeDescriptor(frame, 0, fields);
 * const first = decoder.decode(frame, 0, out);
 * console.log(`accepted: ${first.ok}, slot 1 at generation ${decoder.lastGeneration(1)}`);
 * const replayed = decoder.decode(frame, 0, out); // the same frame again
 * if (!replayed.ok) console.log(replayed.error.message);
 * encodeDescriptor(frame, 0, { ...fields, generation: 2, shape: [512], byteLength: 2048 }); // more than one slot holds
 * const oversized = decoder.decode(frame, 0, out);
 * if (!oversized.ok) console.log(oversized.error.message);
 * ```
 */
export class DescriptorDecoder {
  readonly #geometry: TopicGeometry;
  /** Last accepted generation per slot (0: none yet). */
  readonly #generations: Float64Array;
  /** DTypes seen so far, by `code << 24 | bits << 16 | lanes`, so steady decoding allocates nothing. */
  readonly #dtypes = new Map<number, DType>();

  constructor(geometry: TopicGeometry) {
    this.#geometry = geometry;
    this.#generations = new Float64Array(geometry.slotCount);
  }

  /** The last generation accepted for `slot` (0 before the first). */
  lastGeneration(slot: number): number {
    return this.#generations[slot] ?? 0;
  }

  /**
   * Validates the DESCRIPTOR frame at `offset` of `view` and fills `out`. On success the slot's generation
   * advances to the frame's. On failure `out` may be partly filled and nothing else changed.
   */
  decode(view: DataView, offset: number, out: TensorDescriptor): Result<void> {
    const g = this.#geometry;
    const header = readFrameHeader(view, offset, g.topicId);
    if (typeof header !== 'number') return header;
    if (header !== FrameType.Descriptor) return reject('frame type', `is ${FrameType[header]}, expected Descriptor`);

    const slot = view.getUint32(offset + Offset.slot, true);
    if (slot >= g.slotCount) return reject('slot', `${slot} is out of range (the topic has ${g.slotCount} slots)`);
    const generation = readSafeU64(view, offset + Offset.generation);
    if (generation < 0) return reject('generation', 'exceeds 2^53 - 1');
    const last = this.#generations[slot] as number;
    if (generation <= last) return reject('generation', `${generation} of slot ${slot} is not above its last generation ${last} (replayed or reordered)`);
    const fenceValue = readSafeU64(view, offset + Offset.fenceValue);
    if (fenceValue < 0) return reject('fence value', 'exceeds 2^53 - 1');
    const flags = view.getUint32(offset + Offset.flags, true);
    if ((flags & ~KNOWN_FLAGS) !== 0) return reject('flags', `0x${flags.toString(16)} has unknown bits`);
    const hostWriter = (flags & DescriptorFlag.HostWriter) !== 0;
    const deviceFence = (flags & DescriptorFlag.DeviceFence) !== 0;
    if (hostWriter === deviceFence) return reject('flags', 'must name exactly one writer: HostWriter or DeviceFence');
    if (hostWriter && fenceValue !== 0) return reject('fence value', `is ${fenceValue}, but a host writer records no fence (0)`);
    if (deviceFence && g.fenceCounters !== true) {
      return reject('flags', 'name a CUDA-stream writer (DeviceFence), but this topic has no fence counters (a host topic, or a pinnedHost segment without them): only the host writer may publish here');
    }
    if (deviceFence && (fenceValue === 0 || fenceValue > generation)) {
      return reject('fence value', `is ${fenceValue}, but a CUDA-stream writer's fence is the slot's generation (1..${generation})`);
    }

    const dtype = this.#dtype(view.getUint8(offset + Offset.dtypeCode), view.getUint8(offset + Offset.dtypeBits), view.getUint16(offset + Offset.dtypeLanes, true));
    if (dtype === null) {
      return reject(
        'dtype',
        `(code ${view.getUint8(offset + Offset.dtypeCode)}, ${view.getUint8(offset + Offset.dtypeBits)} bits, ${view.getUint16(offset + Offset.dtypeLanes, true)} lanes) is not a DLPack dtype`,
      );
    }
    const rank = view.getUint32(offset + Offset.rank, true);
    const rankBound = Math.min(g.maxRank, MAX_DESCRIPTOR_RANK);
    if (rank > rankBound) return reject('rank', `${rank} exceeds the topic's bound ${rankBound}`);
    if (view.getUint32(offset + Offset.descriptorReserved, true) !== 0) return reject('reserved bytes 44..47', 'are not zero');

    const shape = out.shape;
    const strides = out.strides;
    shape.length = rank;
    strides.length = rank;
    for (let i = 0; i < rank; i++) {
      const extent = readSafeU64(view, offset + Offset.shape + 8 * i);
      const stride = readSafeU64(view, offset + Offset.strides + 8 * i);
      if (extent < 0) return reject(`shape[${i}]`, 'exceeds 2^53 - 1');
      if (stride < 0) return reject(`strides[${i}]`, 'exceeds 2^53 - 1');
      shape[i] = extent;
      strides[i] = stride;
    }
    if (!allZero(view, offset + Offset.shape + 8 * rank, offset + Offset.strides)) return reject('shape entries past the rank', 'are not zero');
    if (!allZero(view, offset + Offset.strides + 8 * rank, offset + Offset.tail)) return reject('stride entries past the rank', 'are not zero');
    if (!allZero(view, offset + Offset.tail, offset + FRAME_BYTES)) return reject(`reserved bytes ${Offset.tail}..${FRAME_BYTES - 1}`, 'are not zero');

    const span = stridedSpan(rank, shape, strides, dtype.itemSize);
    if (span < 0) return reject('shape and strides', 'span more than 2^53 - 1 bytes');
    const byteOffset = readSafeU64(view, offset + Offset.byteOffset);
    const byteLength = readSafeU64(view, offset + Offset.byteLength);
    if (byteOffset < 0 || byteLength < 0) return reject('byte offset/length', 'exceed 2^53 - 1');
    if (byteLength !== span) return reject('byte length', `${byteLength} does not match the ${span} bytes that shape and strides of ${dtype.name} span`);
    if (byteOffset + byteLength > g.slotStride) {
      return reject('bytes', `${byteOffset}..${byteOffset + byteLength} lie outside the ${g.slotStride}-byte slot`);
    }

    out.topicId = g.topicId;
    out.slot = slot;
    out.generation = generation;
    out.fenceValue = fenceValue;
    out.flags = flags;
    out.dtype = dtype;
    out.rank = rank;
    out.byteOffset = byteOffset;
    out.byteLength = byteLength;
    this.#generations[slot] = generation;
    return OK_VOID;
  }

  #dtype(code: number, bits: number, lanes: number): DType | null {
    const key = code * 0x1000000 + bits * 0x10000 + lanes;
    const known = this.#dtypes.get(key);
    if (known !== undefined) return known;
    if (lanes === 0) return null;
    let dtype: DType;
    try {
      dtype = DType.of(code as DTypeCode, bits, lanes);
    } catch {
      return null;
    }
    if (!Number.isInteger(dtype.itemSize)) return null;
    this.#dtypes.set(key, dtype);
    return dtype;
  }
}
