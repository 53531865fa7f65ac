import fc from 'fast-check';
import { ErrorCode, HsError } from '@hs/streams';
import { DType } from '@hs/tensor';
import { DescriptorDecoder, DescriptorFlag, FRAME_BYTES, TensorDescriptor, encodeDescriptor } from '@hs/ipc';
import { FUZZ_SEED, checkProperty, type FuzzOutcome } from '../fuzz-settings.js';

const GEOMETRY = { topicId: 0x1234, slotCount: 8, slotStride: 4096, maxRank: 4 };
const DTYPES = [DType.uint8, DType.int16, DType.float32, DType.float64, DType.complex64, DType.bool];

/** A valid descriptor's fields, before mutation. */
const validFields = fc.record({
  slot: fc.integer({ min: 0, max: GEOMETRY.slotCount - 1 }),
  generation: fc.integer({ min: 1, max: 2 ** 40 }),
  dtype: fc.integer({ min: 0, max: DTYPES.length - 1 }),
  shape: fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: GEOMETRY.maxRank }),
  byteOffset: fc.integer({ min: 0, max: 256 }),
});

/** One frame: a valid descriptor with 0..6 byte edits, or 256 random bytes. */
const frame = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(validFields, fc.array(fc.tuple(fc.integer({ min: 0, max: FRAME_BYTES - 1 }), fc.integer({ min: 0, max: 255 })), { maxLength: 6 })) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: FRAME_BYTES, maxLength: FRAME_BYTES }) },
);

function encodeFrame(input: Uint8Array | [{ slot: number; generation: number; dtype: number; shape: number[]; byteOffset: number }, [number, number][]]): Uint8Array {
  if (input instanceof Uint8Array) return input;
  const [f, edits] = input;
  const dtype = DTYPES[f.dtype]!;
  const strides: number[] = [];
  let step = 1;
  for (let i = f.shape.length - 1; i >= 0; i--) {
    strides[i] = step;
    step *= f.shape[i]!;
  }
  const bytes = new Uint8Array(FRAME_BYTES);
  encodeDescriptor(new DataView(bytes.buffer), 0, {
    topicId: GEOMETRY.topicId,
    slot: f.slot,
    generation: f.generation,
    fenceValue: 0,
    flags: DescriptorFlag.HostWriter,
    dtype,
    shape: f.shape,
    strides,
    byteOffset: f.byteOffset,
    byteLength: step === 0 ? 0 : step * dtype.itemSize,
  });
  for (const [at, value] of edits) bytes[at] = value;
  return bytes;
}

/** Independent span oracle in BigInt: bytes the decoded layout spans. */
function spanOracle(d: TensorDescriptor): bigint {
  if (d.shape.some((x) => x === 0)) return 0n;
  let last = 0n;
  for (let i = 0; i < d.rank; i++) last += BigInt(d.shape[i]! - 1) * BigInt(d.strides[i]!);
  return (last + 1n) * BigInt(d.dtype.itemSize);
}

/**
 * Fuzzes the @hs/ipc descriptor decoder with sequences of frames (valid descriptors with byte edits, and
 * random bytes) through one decoder, as a live subscriber sees them. Each frame must either be refused with
 * a `ProtocolError` (nothing thrown, the slot's generation unchanged) or decode to a descriptor whose slot,
 * rank and bytes lie inside the topic's geometry, whose byte length equals an independent BigInt span, and
 * whose generation is above every earlier one of its slot.
 */
export function fuzzIpcDescriptors(runs: number, seed: number = FUZZ_SEED): FuzzOutcome {
  let accepted = 0;
  let refused = 0;
  const property = fc.property(fc.array(frame, { minLength: 1, maxLength: 8 }), (frames) => {
    const decoder = new DescriptorDecoder(GEOMETRY);
    const out = new TensorDescriptor();
    const last = new Array<number>(GEOMETRY.slotCount).fill(0);
    for (const input of frames) {
      const bytes = encodeFrame(input);
      let r;
      try {
        r = decoder.decode(new DataView(bytes.buffer, bytes.byteOffset, FRAME_BYTES), 0, out);
      } catch (thrown) {
        throw new Error(`decode threw instead of returning an error: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
      }
      if (!r.ok) {
        if (!(r.error instanceof HsError) || r.error.code !== ErrorCode.ProtocolError) throw new Error(`untyped or wrong error ${String(r.error)}`);
        for (let s = 0; s < GEOMETRY.slotCount; s++) if (decoder.lastGeneration(s) !== last[s]) throw new Error('a refused frame changed a slot generation');
        refused += 1;
        continue;
      }
      if (out.slot >= GEOMETRY.slotCount || out.rank > GEOMETRY.maxRank) throw new Error(`accepted slot ${out.slot} rank ${out.rank}`);
      if (out.generation <= last[out.slot]!) throw new Error(`accepted generation ${out.generation} after ${last[out.slot]} on slot ${out.slot}`);
      if (BigInt(out.byteLength) !== spanOracle(out)) throw new Error(`byte length ${out.byteLength} is not the span ${spanOracle(out)}`);
      if (out.byteOffset + out.byteLength > GEOMETRY.slotStride) throw new Error(`accepted bytes ${out.byteOffset}+${out.byteLength} outside the slot`);
      last[out.slot] = out.generation;
      accepted += 1;
    }
  });
  return checkProperty('IPC descriptors (frame sequences: edited and random bytes)', property, runs, seed, () => `${accepted} frames accepted, ${refused} refused with ProtocolError`);
}
