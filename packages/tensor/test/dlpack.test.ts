import { Device, ErrorCode, HostBackend, MemoryKind, unwrap, type DeviceMemory } from '@hs/streams';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DLDeviceType, DLPACK_FLAG_READ_ONLY, DType, Tensor, exportDLPack, importDLPack, type DLPackManagedTensor } from '../src/index.js';

describe('DLPack export and import (host backend)', () => {
  let backend: HostBackend;
  let memory: DeviceMemory;

  beforeEach(() => {
    backend = new HostBackend();
    memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 4096, label: 'frames' }));
  });
  afterEach(() => backend.dispose());

  const managed = (overrides: Partial<DLPackManagedTensor['dlTensor']>, extra: Partial<DLPackManagedTensor> = {}): DLPackManagedTensor => ({
    version: { major: 1, minor: 0 },
    flags: 0,
    deleter: null,
    ...extra,
    dlTensor: {
      data: memory.address,
      device: { deviceType: DLDeviceType.Cuda, deviceId: 0 },
      ndim: 2,
      dtype: { code: 2, bits: 32, lanes: 1 },
      shape: [4, 8],
      strides: null,
      byteOffset: 0,
      ...overrides,
    },
  });

  it('exports layout, device, dtype and the read-only flag of a tensor', () => {
    const t = unwrap(Tensor.import({ backend, memory, shape: [3, 5], dtype: DType.uint16, byteOffset: 128, strides: [8, 1] }));
    const d = unwrap(exportDLPack(t, { releaseStream: null }));
    expect(d.version).toEqual({ major: 1, minor: 1 });
    expect(d.flags & DLPACK_FLAG_READ_ONLY).toBe(DLPACK_FLAG_READ_ONLY);
    expect(d.dlTensor).toMatchObject({
      data: memory.address,
      device: { deviceType: DLDeviceType.Cuda, deviceId: 0 },
      ndim: 2,
      dtype: { code: 1, bits: 16, lanes: 1 },
      shape: [3, 5],
      strides: [8, 1],
      byteOffset: 128,
    });
  });

  it('round-trips through import: same bytes, offset honoured, read-only, no readiness contract yet', () => {
    const source = unwrap(Tensor.import({ backend, memory, shape: [2, 4], dtype: DType.float32, byteOffset: 64 }));
    const again = unwrap(importDLPack(unwrap(exportDLPack(source, { releaseStream: null })), { backend, memory }));
    expect(again.data()).toMatchObject({ memory, byteOffset: 64, byteLength: 32 });
    expect(again.strides).toEqual([4, 1]);
    expect(again.readOnly).toBe(true);
    expect(again.hasReadinessStreamContract()).toBe(false);
    expect(again.mutableData().ok).toBe(false);
  });

  it('treats null strides as row-major and folds data - address into the byte offset', () => {
    const t = unwrap(importDLPack(managed({ data: memory.address + 256n, byteOffset: 16, strides: null }), { backend, memory }));
    expect(t.strides).toEqual([8, 1]);
    expect(t.byteOffset).toBe(272);
    expect(t.byteSize).toBe(4 * 8 * 4);
  });

  it('accepts size-0 dimensions (no bytes) and any stride on size-1 dimensions', () => {
    const empty = unwrap(importDLPack(managed({ shape: [0, 8], strides: [-5, 1] }), { backend, memory }));
    expect(empty.byteSize).toBe(0);
    const column = unwrap(importDLPack(managed({ shape: [4, 1], strides: [1, -77] }), { backend, memory }));
    expect(column.strides).toEqual([1, 1]);
    expect(column.byteSize).toBe(16);
  });

  it('stays read-only even when the producer did not set the flag', () => {
    const t = unwrap(importDLPack(managed({}), { backend, memory }));
    expect(t.readOnly).toBe(true);
    expect(t.mutableData().ok).toBe(false);
  });

  it('runs the deleter once, when the imported tensor is disposed', () => {
    let calls = 0;
    const t = unwrap(importDLPack(managed({}, { deleter: () => calls++ }), { backend, memory }));
    expect(calls).toBe(0);
    t.dispose();
    t.dispose();
    expect(calls).toBe(1);
  });

  it('refuses other major versions, mismatched devices, unknown dtypes, rank mismatches and data outside the memory', () => {
    const code = (r: ReturnType<typeof importDLPack>): ErrorCode | undefined => (r.ok ? undefined : r.error.code);
    expect(code(importDLPack(managed({}, { version: { major: 2, minor: 0 } }), { backend, memory }))).toBe(ErrorCode.NotSupported);
    expect(code(importDLPack(managed({ device: { deviceType: DLDeviceType.Cpu, deviceId: 0 } }), { backend, memory }))).toBe(ErrorCode.InvalidArgument);
    expect(code(importDLPack(managed({ device: { deviceType: DLDeviceType.Cuda, deviceId: 3 } }), { backend, memory }))).toBe(ErrorCode.InvalidArgument);
    expect(code(importDLPack(managed({ dtype: { code: 9, bits: 3, lanes: 1 } }), { backend, memory }))).toBe(ErrorCode.InvalidArgument);
    expect(code(importDLPack(managed({ ndim: 3 }), { backend, memory }))).toBe(ErrorCode.InvalidArgument);
    expect(code(importDLPack(managed({ data: memory.address - 8n }), { backend, memory }))).toBe(ErrorCode.InvalidArgument);
    expect(code(importDLPack(managed({ shape: [64, 64] }), { backend, memory }))).toBe(ErrorCode.InvalidArgument);
  });

  it('refuses a fractional or non-finite byteOffset with InvalidArgument instead of throwing (found by the DLPack fuzzer)', () => {
    for (const byteOffset of [0.5, Number.NaN, Infinity, 2 ** 60]) {
      const imported = importDLPack(managed({ byteOffset }), { backend, memory });
      expect(!imported.ok && imported.error.code).toBe(ErrorCode.InvalidArgument);
    }
  });
});
