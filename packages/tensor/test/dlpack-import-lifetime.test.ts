import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Device, ErrorCode, HostBackend, MemoryKind, leakCounts, unwrap, type DeviceMemory } from '@hs/streams';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DLDeviceType, importDLPack, type DLPackManagedTensor } from '../src/index.js';

/** Spec: "Foreign tensors imported through DLPack": the deleter runs when the last reference drops. */
describe('DLPack imports are reference counted', () => {
  let backend: HostBackend;
  let memory: DeviceMemory;
  let deleted: number;

  beforeEach(() => {
    backend = new HostBackend({ scheduling: 'manual', orderingChecker: true });
    memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 256, label: 'foreign' }));
    deleted = 0;
  });
  afterEach(() => backend.dispose());

  const managed = (): DLPackManagedTensor => ({
    version: { major: 1, minor: 0 },
    flags: 0,
    deleter: () => deleted++,
    dlTensor: { data: memory.address, device: { deviceType: DLDeviceType.Cuda, deviceId: 0 }, ndim: 1, dtype: { code: 1, bits: 8, lanes: 1 }, shape: [64], strides: null, byteOffset: 0 },
  });

  it('a consumer lease keeps the import alive past dispose(); the deleter runs once the last lease is released', () => {
    const t = unwrap(importDLPack(managed(), { backend, memory }));
    unwrap(t.backing!.acquireLease());
    t.dispose();
    expect(deleted).toBe(0);
    expect(t.data().byteLength).toBe(64); // still valid for the lease holder
    t.backing!.releaseLease(null);
    expect(deleted).toBe(1);
    expect(() => t.data()).toThrow(/stale/);
    expect(t.backing!.acquireLease().ok).toBe(false);
    t.dispose();
    expect(deleted).toBe(1);
  });

  it('waits for the streams leases were released on, then runs the deleter (never a host wait)', () => {
    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'foreign producer' }));
    const t = unwrap(importDLPack(managed(), { backend, memory }));
    backend.memsetAsync(producer, t.data(), 9);
    unwrap(t.setReadinessStream(producer));
    const consumers = [0, 1, 2].map((i) => unwrap(backend.createStream(Device.cuda(0), { label: `consumer ${i}` })));
    const hosts = consumers.map(() => new Uint8Array(64));
    for (const [i, stream] of consumers.entries()) {
      unwrap(t.backing!.registerReleaseStream(stream));
      unwrap(t.backing!.acquireLease());
      unwrap(t.copyToHostAsync(hosts[i] as Uint8Array, stream));
    }
    t.dispose();
    for (const stream of consumers) t.backing!.releaseLease(stream);
    expect(deleted).toBe(0); // the copies (and the release points after them) have not run
    backend.runUntilIdle();
    expect(deleted).toBe(1);
    for (const host of hosts) expect([...host]).toEqual(new Array(64).fill(9));
    expect(backend.orderingChecker!.violations).toEqual([]);
  });

  it('releaseLease without a lease throws InvalidState; the importer reference is not a lease', () => {
    const t = unwrap(importDLPack(managed(), { backend, memory }));
    expect(() => t.backing!.releaseLease(null)).toThrow(expect.objectContaining({ code: ErrorCode.InvalidState }));
    expect(deleted).toBe(0);
    t.dispose();
    expect(deleted).toBe(1);
  });
});

describe('a DLPack import dropped without dispose()', () => {
  it('runs its deleter once after collection and is counted; a disposed one is not', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const warned = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const backend = new HostBackend();
    const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 64, label: 'foreign' }));
    let deleted = 0;
    const managed = (): DLPackManagedTensor => ({
      version: { major: 1, minor: 0 },
      flags: 0,
      deleter: () => deleted++,
      dlTensor: { data: memory.address, device: { deviceType: DLDeviceType.Cuda, deviceId: 0 }, ndim: 1, dtype: { code: 1, bits: 8, lanes: 1 }, shape: [64], strides: null, byteOffset: 0 },
    });
    unwrap(importDLPack(managed(), { backend, memory })).dispose();
    expect(deleted).toBe(1);
    const before = leakCounts()['Tensor (DLPack import)'] ?? 0;
    (() => void unwrap(importDLPack(managed(), { backend, memory })))();
    for (let round = 0; round < 50 && deleted < 2; round++) {
      gc();
      await new Promise((r) => setImmediate(r));
    }
    expect(deleted).toBe(2);
    expect(leakCounts()['Tensor (DLPack import)']).toBe(before + 1);
    await vi.waitFor(() => expect(warned).toHaveBeenCalledWith(expect.stringContaining('Tensor (DLPack import) object(s) were garbage-collected without dispose()'), { code: 'HS_LEAK' }));
    backend.dispose();
    warned.mockRestore();
  });
});
