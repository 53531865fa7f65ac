import { ErrorCode } from '@hs/streams';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fenceCounterBytes } from '../src/device/fence-counters.js';
import { decodeDeviceHello, encodeDeviceHello, type DeviceHello } from '../src/device/device-hello.js';
import { FRAME_BYTES, Offset, WireMemoryKind } from '../src/wire/frame-layout.js';

function hello(overrides: Partial<DeviceHello> = {}): DeviceHello {
  const slotCount = overrides.slotCount ?? 6;
  const slotStride = overrides.slotStride ?? 4096;
  return {
    topicId: 0x1234,
    slotCount,
    slotStride,
    allocationBytes: slotCount * slotStride + fenceCounterBytes(slotCount),
    maxRank: 3,
    producerPid: 4242,
    deviceOrdinal: 1,
    handle: Uint8Array.from({ length: 64 }, (_, i) => (i * 37 + 5) & 0xff),
    ...overrides,
  };
}

function encoded(h: DeviceHello): DataView {
  const view = new DataView(new ArrayBuffer(FRAME_BYTES));
  encodeDeviceHello(view, 0, h);
  return view;
}

describe('device HELLO (CUDA IPC handle, ordinal, fence-counter geometry)', () => {
  it('round-trips every field, the handle at bytes 120..183 and memory kind 2', () => {
    const h = hello();
    const view = encoded(h);
    expect(view.getUint32(Offset.memoryKind, true)).toBe(WireMemoryKind.CudaDevice);
    expect(new Uint8Array(view.buffer, Offset.deviceHandle, 64)).toEqual(h.handle);
    const decoded = decodeDeviceHello(view, 0);
    expect(decoded).toEqual({ ok: true, value: h });
  });

  it('sizes the fence counters as one u64 per slot rounded up to 256 bytes', () => {
    expect(fenceCounterBytes(1)).toBe(256);
    expect(fenceCounterBytes(32)).toBe(256);
    expect(fenceCounterBytes(33)).toBe(512);
  });

  it('rejects each bad field with a ProtocolError naming it, and a host HELLO as NotSupported', () => {
    const cases: [string, (v: DataView) => void][] = [
      ['slot count', (v) => v.setUint32(Offset.slotCount, 0, true)],
      ['slot stride', (v) => v.setUint32(Offset.slotStride, 100, true)],
      ['allocation bytes', (v) => v.setUint32(Offset.segmentBytes, 256, true)],
      ['max rank', (v) => v.setUint32(Offset.maxRank, 9, true)],
      ['producer pid', (v) => v.setUint32(Offset.producerPid, 0, true)],
      ['flags', (v) => v.setUint32(Offset.helloFlags, 1, true)],
      ['reserved and segment-name bytes', (v) => v.setUint8(Offset.segmentName + 3, 0x41)],
      ['tail bytes', (v) => v.setUint8(FRAME_BYTES - 1, 1)],
      ['device ordinal', (v) => v.setUint32(Offset.deviceOrdinal, 5000, true)],
    ];
    for (const [field, corrupt] of cases) {
      const view = encoded(hello());
      corrupt(view);
      const decoded = decodeDeviceHello(view, 0);
      expect(decoded.ok).toBe(false);
      if (!decoded.ok) {
        expect(decoded.error.code).toBe(ErrorCode.ProtocolError);
        expect(decoded.error.message).toContain(field);
      }
    }
    const host = encoded(hello());
    host.setUint32(Offset.memoryKind, WireMemoryKind.Host, true);
    const decoded = decodeDeviceHello(host, 0);
    expect(decoded.ok ? null : decoded.error.code).toBe(ErrorCode.NotSupported);
  });

  it('never throws on arbitrary frames (fast-check, fixed seed)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: FRAME_BYTES, maxLength: FRAME_BYTES }), fc.boolean(), (bytes, validHeader) => {
        const view = new DataView(bytes.buffer, bytes.byteOffset, FRAME_BYTES);
        if (validHeader) {
          const valid = encoded(hello());
          for (let i = 0; i < 12; i++) view.setUint8(i, valid.getUint8(i));
        }
        const decoded = decodeDeviceHello(view, 0);
        if (decoded.ok) expect(decoded.value.allocationBytes).toBe(decoded.value.slotCount * decoded.value.slotStride + fenceCounterBytes(decoded.value.slotCount));
      }),
      { seed: 20261130, numRuns: 5000 },
    );
  });
});
