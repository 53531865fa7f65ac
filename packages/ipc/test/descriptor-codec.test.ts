import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '@hs/streams';
import { DType } from '@hs/tensor';
import {
  DescriptorDecoder,
  DescriptorFlag,
  FRAME_BYTES,
  TensorDescriptor,
  decodeHello,
  encodeDescriptor,
  encodeHello,
  WireMemoryKind,
  type DescriptorFields,
} from '../src/index.js';
import { attachUsesMailbox, encodeAttach } from '../src/wire/control-frames.js';
import { readFrameHeader } from '../src/wire/frame-header.js';
import { FrameType, HelloFlag, Offset } from '../src/wire/frame-layout.js';

const geometry = { topicId: 77, slotCount: 4, slotStride: 4096, maxRank: 4 };

function frame(fields: Partial<DescriptorFields> = {}): DataView {
  const view = new DataView(new ArrayBuffer(FRAME_BYTES));
  encodeDescriptor(view, 0, {
    topicId: 77,
    slot: 1,
    generation: 1,
    fenceValue: 0,
    flags: DescriptorFlag.HostWriter,
    dtype: DType.float32,
    shape: [4, 8],
    strides: [8, 1],
    byteOffset: 0,
    byteLength: 128,
    ...fields,
  });
  return view;
}

function codeOf(decoder: DescriptorDecoder, view: DataView): ErrorCode | 'ok' {
  const r = decoder.decode(view, 0, new TensorDescriptor());
  return r.ok ? 'ok' : r.error.code;
}

describe('descriptor codec', () => {
  it('round-trips every field', () => {
    const decoder = new DescriptorDecoder(geometry);
    const out = new TensorDescriptor();
    const r = decoder.decode(frame({ slot: 3, generation: 2 ** 40, shape: [2, 3, 5], strides: [15, 5, 1], byteLength: 240, byteOffset: 256, dtype: DType.uint64 }), 0, out);
    expect(r.ok).toBe(true);
    expect(out).toMatchObject({ topicId: 77, slot: 3, generation: 2 ** 40, fenceValue: 0, flags: DescriptorFlag.HostWriter, rank: 3, byteOffset: 256, byteLength: 240 });
    expect(out.dtype).toBe(DType.uint64);
    expect(out.shape).toEqual([2, 3, 5]);
    expect(out.strides).toEqual([15, 5, 1]);
    expect(decoder.lastGeneration(3)).toBe(2 ** 40);
  });

  it('rejects each malformed field with ProtocolError and keeps its state', () => {
    const decoder = new DescriptorDecoder(geometry);
    expect(codeOf(decoder, frame({ slot: 4 }))).toBe(ErrorCode.ProtocolError);
    expect(codeOf(decoder, frame({ topicId: 78 }))).toBe(ErrorCode.ProtocolError);
    expect(codeOf(decoder, frame({ generation: 0 }))).toBe(ErrorCode.ProtocolError);
    expect(codeOf(decoder, frame({ byteLength: 64 }))).toBe(ErrorCode.ProtocolError); // inconsistent with shape
    expect(codeOf(decoder, frame({ byteOffset: 4000 }))).toBe(ErrorCode.ProtocolError); // outside the slot
    expect(codeOf(decoder, frame({ fenceValue: 5 }))).toBe(ErrorCode.ProtocolError); // host writer with a fence
    expect(codeOf(decoder, frame({ flags: 0 }))).toBe(ErrorCode.ProtocolError);
    expect(codeOf(decoder, frame({ flags: 8 | DescriptorFlag.HostWriter }))).toBe(ErrorCode.ProtocolError);
    expect(codeOf(decoder, frame({ shape: [1, 1, 1, 1, 2], strides: [2, 2, 2, 2, 1], byteLength: 8 }))).toBe(ErrorCode.ProtocolError); // rank 5 > 4
    const badDtype = frame();
    badDtype.setUint8(36, 3);
    expect(codeOf(decoder, badDtype)).toBe(ErrorCode.ProtocolError);
    const hugeShape = frame();
    hugeShape.setUint32(64 + 4, 0xffffffff, true);
    expect(codeOf(decoder, hugeShape)).toBe(ErrorCode.ProtocolError);
    const reserved = frame();
    reserved.setUint8(250, 1);
    expect(codeOf(decoder, reserved)).toBe(ErrorCode.ProtocolError);
    const magic = frame();
    magic.setUint8(0, 0);
    expect(codeOf(decoder, magic)).toBe(ErrorCode.ProtocolError);
    expect(decoder.lastGeneration(1)).toBe(0);
    expect(codeOf(decoder, frame())).toBe('ok');
  });

  it('takes a CUDA-stream writer (DeviceFence) only on a topic with fence counters, with a fence value in 1..generation', () => {
    const fenced = (fields: Partial<DescriptorFields>): DataView => frame({ flags: DescriptorFlag.DeviceFence, ...fields });
    const message = (decoder: DescriptorDecoder, view: DataView): string => {
      const r = decoder.decode(view, 0, new TensorDescriptor());
      return r.ok ? 'ok' : r.error.message;
    };
    // A host topic (no counters): only the host writer, fence 0.
    const host = new DescriptorDecoder(geometry);
    expect(message(host, fenced({ generation: 3, fenceValue: 3 }))).toMatch(/flags .*no fence counters/);
    expect(codeOf(host, frame({ generation: 3 }))).toBe('ok');
    // A pinnedHost topic with counters: both writers.
    const pinned = new DescriptorDecoder({ ...geometry, fenceCounters: true });
    expect(message(pinned, fenced({ generation: 3, fenceValue: 0 }))).toMatch(/fence value is 0, .*1\.\.3/);
    expect(message(pinned, fenced({ generation: 3, fenceValue: 4 }))).toMatch(/fence value is 4, .*1\.\.3/);
    expect(message(pinned, frame({ generation: 3, fenceValue: 3 }))).toMatch(/host writer records no fence/);
    expect(pinned.lastGeneration(1)).toBe(0);
    const out = new TensorDescriptor();
    expect(pinned.decode(fenced({ generation: 3, fenceValue: 3 }), 0, out).ok).toBe(true);
    expect(out).toMatchObject({ generation: 3, fenceValue: 3, flags: DescriptorFlag.DeviceFence });
    expect(codeOf(pinned, fenced({ generation: 5, fenceValue: 2 }))).toBe('ok'); // at most the generation
    expect(codeOf(pinned, frame({ generation: 6 }))).toBe('ok'); // the host writer still publishes fence 0
  });

  it('rejects a replayed or older generation of a slot (monotonic per slot)', () => {
    const decoder = new DescriptorDecoder(geometry);
    expect(codeOf(decoder, frame({ generation: 5 }))).toBe('ok');
    expect(codeOf(decoder, frame({ generation: 5 }))).toBe(ErrorCode.ProtocolError);
    expect(codeOf(decoder, frame({ generation: 4 }))).toBe(ErrorCode.ProtocolError);
    expect(codeOf(decoder, frame({ slot: 2, generation: 1 }))).toBe('ok');
    expect(codeOf(decoder, frame({ generation: 6 }))).toBe('ok');
  });

  it('never throws and only accepts descriptors inside a slot, for any 256 bytes (fast-check, fixed seed)', () => {
    const template = new Uint8Array(frame().buffer);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ minLength: FRAME_BYTES, maxLength: FRAME_BYTES }),
          // Mutations of a valid frame reach the deep checks instead of failing on the magic.
          fc.array(fc.tuple(fc.integer({ min: 0, max: FRAME_BYTES - 1 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }).map((edits) => {
            const bytes = template.slice();
            for (const [at, value] of edits) bytes[at] = value;
            return bytes;
          }),
        ),
        (bytes) => {
          const decoder = new DescriptorDecoder(geometry);
          const out = new TensorDescriptor();
          const r = decoder.decode(new DataView(bytes.buffer), 0, out);
          if (!r.ok) {
            expect(r.error.code).toBe(ErrorCode.ProtocolError);
            return;
          }
          expect(out.slot).toBeLessThan(geometry.slotCount);
          expect(out.rank).toBeLessThanOrEqual(geometry.maxRank);
          expect(out.byteOffset + out.byteLength).toBeLessThanOrEqual(geometry.slotStride);
        },
      ),
      { seed: 20261130, numRuns: 3000 },
    );
  });
});

describe('hello frame', () => {
  const hello = {
    topicId: 9,
    slotCount: 8,
    slotStride: 1024,
    segmentBytes: 8192,
    memoryKind: WireMemoryKind.Host,
    maxRank: 3,
    producerPid: 1234,
    mailboxToken: null,
  };

  it('round-trips', () => {
    const view = new DataView(new ArrayBuffer(FRAME_BYTES));
    encodeHello(view, 0, hello);
    const r = decodeHello(view, 0);
    expect(r.ok && r.value).toEqual(hello);
  });

  it('rejects a segment too small for its slots, a segment name (wire version 2 names none) and a device boundary', () => {
    const view = new DataView(new ArrayBuffer(FRAME_BYTES));
    encodeHello(view, 0, { ...hello, segmentBytes: 1024 });
    expect(decodeHello(view, 0).ok).toBe(false);
    encodeHello(view, 0, hello);
    view.setUint8(Offset.segmentName, 0x2f);
    const named = decodeHello(view, 0);
    expect(named.ok ? null : named.error.detail).toMatch(/bytes 56\.\.119 are not zero/);
    encodeHello(view, 0, { ...hello, memoryKind: WireMemoryKind.CudaDevice });
    const device = decodeHello(view, 0);
    expect(device.ok ? null : device.error.code).toBe(ErrorCode.NotSupported);
  });

  it('carries a mailbox token only with the MailboxOffered flag, and rejects unknown flags and a zero token', () => {
    const view = new DataView(new ArrayBuffer(FRAME_BYTES));
    const offered = { ...hello, mailboxToken: '0123456789abcdef' };
    encodeHello(view, 0, offered);
    const r = decodeHello(view, 0);
    expect(r.ok && r.value).toEqual(offered);
    view.setUint32(Offset.helloFlags, 0, true); // token bytes without the flag
    expect(decodeHello(view, 0).ok).toBe(false);
    view.setUint32(Offset.helloFlags, HelloFlag.MailboxOffered | 4, true);
    const unknown = decodeHello(view, 0);
    expect(unknown.ok ? '' : unknown.error.detail).toMatch(/flags/);
    encodeHello(view, 0, { ...hello, mailboxToken: '0000000000000000' });
    const zero = decodeHello(view, 0);
    expect(zero.ok ? '' : zero.error.detail).toMatch(/mailbox token/);
  });
});

describe('attach frame', () => {
  it('round-trips both choices and rejects unknown flags or reserved bytes', () => {
    const view = new DataView(new ArrayBuffer(FRAME_BYTES));
    encodeAttach(view, 0, 9, true);
    expect(readFrameHeader(view, 0, 9)).toBe(FrameType.Attach);
    expect(attachUsesMailbox(view, 0)).toBe(true);
    encodeAttach(view, 0, 9, false);
    expect(attachUsesMailbox(view, 0)).toBe(false);
    view.setUint32(Offset.attachFlags, 2, true);
    expect(typeof attachUsesMailbox(view, 0)).not.toBe('boolean');
    encodeAttach(view, 0, 9, true);
    view.setUint8(200, 1);
    expect(typeof attachUsesMailbox(view, 0)).not.toBe('boolean');
  });
});
