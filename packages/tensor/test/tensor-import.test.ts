import { Device, ErrorCode, HostBackend, HsError, MemoryKind, unwrap, type DeviceMemory } from '@hs/streams';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DType, Tensor } from '../src/index.js';

describe('Tensor.import (foreign tensors)', () => {
  let backend: HostBackend;
  let memory: DeviceMemory;

  beforeEach(() => {
    backend = new HostBackend();
    memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 4096, label: 'foreign' }));
  });
  afterEach(() => backend.dispose());

  it('packs row-major strides by default and reports layout, device and kind', () => {
    const t = unwrap(Tensor.import({ backend, memory, shape: [2, 3, 4], dtype: DType.float32, byteOffset: 64 }));
    expect(t.shape).toEqual([2, 3, 4]);
    expect(t.strides).toEqual([12, 4, 1]);
    expect(t.byteOffset).toBe(64);
    expect(t.byteSize).toBe(2 * 3 * 4 * 4);
    expect(t.device).toBe(Device.cuda(0));
    expect(t.memoryKind).toBe(MemoryKind.CudaDevice);
    expect(t.memory).toBe(memory);
    expect(t.backing).not.toBeNull(); // its reference count
    expect(t.name).toBe('imported foreign');
    expect(Object.isFrozen(t.shape) && Object.isFrozen(t.strides)).toBe(true);
    const range = t.data();
    expect(range).toMatchObject({ memory, byteOffset: 64, byteLength: 96, label: 'imported foreign' });
    expect(t.data()).toBe(range);
  });

  it('computes the span of strided and empty layouts', () => {
    // A column of a 4x8 uint16 matrix: 4 elements, 8 apart.
    const column = unwrap(Tensor.import({ backend, memory, shape: [4], strides: [8], dtype: DType.uint16 }));
    expect(column.byteSize).toBe((3 * 8 + 1) * 2);
    // Transposed 3x5 float64 view of a 5x3 matrix.
    const transposed = unwrap(Tensor.import({ backend, memory, shape: [3, 5], strides: [1, 3], dtype: DType.float64 }));
    expect(transposed.byteSize).toBe((2 * 1 + 4 * 3 + 1) * 8);
    const empty = unwrap(Tensor.import({ backend, memory, shape: [0, 7], dtype: DType.float32, byteOffset: 4096 }));
    expect(empty.byteSize).toBe(0);
    const scalar = unwrap(Tensor.import({ backend, memory, shape: [], dtype: DType.complex128 }));
    expect(scalar.byteSize).toBe(16);
    expect(scalar.strides).toEqual([]);
  });

  it('rejects bad shapes, strides and offsets with InvalidArgument and overflow with ArithmeticOverflow', () => {
    const code = (r: { ok: boolean; error?: HsError }): ErrorCode | undefined => (r.ok ? undefined : r.error?.code);
    const base = { backend, memory, dtype: DType.uint8 };
    expect(code(Tensor.import({ ...base, shape: [2, -1] }))).toBe(ErrorCode.InvalidArgument);
    expect(code(Tensor.import({ ...base, shape: [1.5] }))).toBe(ErrorCode.InvalidArgument);
    expect(code(Tensor.import({ ...base, shape: [Number.NaN] }))).toBe(ErrorCode.InvalidArgument);
    expect(code(Tensor.import({ ...base, shape: [2, 2], strides: [1] }))).toBe(ErrorCode.InvalidArgument);
    expect(code(Tensor.import({ ...base, shape: [2, 2], strides: [2, -1] }))).toBe(ErrorCode.InvalidArgument);
    expect(code(Tensor.import({ ...base, shape: [4], byteOffset: -1 }))).toBe(ErrorCode.InvalidArgument);
    expect(code(Tensor.import({ ...base, shape: [4], byteOffset: 0.5 }))).toBe(ErrorCode.InvalidArgument);
    expect(code(Tensor.import({ ...base, shape: [4097] }))).toBe(ErrorCode.InvalidArgument);
    expect(code(Tensor.import({ ...base, shape: [4], byteOffset: 4093 }))).toBe(ErrorCode.InvalidArgument);
    expect(code(Tensor.import({ ...base, shape: [2 ** 30, 2 ** 30] }))).toBe(ErrorCode.ArithmeticOverflow);
    const message = Tensor.import({ ...base, shape: [4], byteOffset: 4093 });
    expect(message.ok ? '' : message.error.message).toMatch(/outside its 4096-byte allocation/);
  });

  it('throws for wrong argument types and returns InvalidState for freed memory', () => {
    expect(() => Tensor.import({ backend, memory, shape: 'big' as unknown as number[], dtype: DType.uint8 })).toThrow(HsError);
    expect(() => Tensor.import({ backend, memory, shape: [1], dtype: 'uint8' as unknown as DType })).toThrow(/DType/);
    unwrap(backend.free(memory));
    const r = Tensor.import({ backend, memory, shape: [1], dtype: DType.uint8 });
    expect(r.ok ? undefined : r.error.code).toBe(ErrorCode.InvalidState);
  });

  it('is permanently read-only', () => {
    const t = unwrap(Tensor.import({ backend, memory, shape: [16], dtype: DType.uint8 }));
    expect(t.readOnly).toBe(true);
    const denied = t.mutableData();
    expect(denied.ok ? undefined : denied.error.code).toBe(ErrorCode.PermissionDenied);
    const stream = unwrap(backend.createStream(Device.cuda(0)));
    unwrap(t.setReadinessStream(stream));
    const stillDenied = t.mutableData();
    expect(stillDenied.ok ? undefined : stillDenied.error.code).toBe(ErrorCode.PermissionDenied);
  });

  it('has no readiness contract until setReadinessStream, then one event that orders readers', async () => {
    const t = unwrap(Tensor.import({ backend, memory, shape: [16], dtype: DType.uint8 }));
    expect(t.hasReadinessStreamContract()).toBe(false);
    expect(t.readinessEvent).toBeNull();
    await expect(t.synchronizeForHost()).rejects.toMatchObject({ name: 'HsError', code: ErrorCode.InvalidState });
    const reader = unwrap(backend.createStream(Device.cuda(0), { label: 'reader' }));
    const blocked = t.copyToHostAsync(new Uint8Array(16), reader);
    expect(blocked.ok ? undefined : blocked.error.message).toMatch(/setReadinessStream/);

    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'foreign producer' }));
    backend.memsetAsync(producer, t.data(), 0x5a);
    unwrap(t.setReadinessStream(producer));
    expect(t.hasReadinessStreamContract()).toBe(true);
    const event = t.readinessEvent;
    expect(event).not.toBeNull();
    unwrap(t.setReadinessStream(producer));
    expect(t.readinessEvent).toBe(event);

    const dst = new Uint8Array(20);
    await t.copyToHost(dst, reader);
    expect([...dst.subarray(0, 16)]).toEqual(new Array(16).fill(0x5a));
    expect([...dst.subarray(16)]).toEqual([0, 0, 0, 0]);
  });

  it('dispose destroys its readiness event and runs the deleter once; the handle turns stale', () => {
    let deleted = 0;
    const t = unwrap(Tensor.import({ backend, memory, shape: [8], dtype: DType.uint8, deleter: () => deleted++ }));
    unwrap(t.setReadinessStream(unwrap(backend.createStream(Device.cuda(0)))));
    const event = t.readinessEvent;
    t.dispose();
    t[Symbol.dispose]();
    expect(deleted).toBe(1);
    expect(event?.destroyed).toBe(true);
    expect(() => t.data()).toThrow(/stale/);
    const again = t.setReadinessStream(unwrap(backend.createStream(Device.cuda(0))));
    expect(again.ok ? undefined : again.error.code).toBe(ErrorCode.InvalidState);
  });
});
