import fc from 'fast-check';
import { Device, ErrorCode, HsError, HostBackend, MemoryKind, unwrap, type DeviceMemory } from '@hs/streams';
import { DLPACK_VERSION, importDLPack, type DLPackManagedTensor } from '@hs/tensor';
import { FUZZ_SEED, checkProperty, type FuzzOutcome } from '../fuzz-settings.js';

const CODES = new Set<string>(Object.values(ErrorCode));
const KINDS = [MemoryKind.Host, MemoryKind.PinnedHost, MemoryKind.CudaDevice, MemoryKind.CudaManaged] as const;

/** Mostly plausible values, sometimes hostile ones (negative, fractional, NaN, huge). */
const dimension = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 9 }) }, fc.integer({ min: -3, max: -1 }), fc.constantFrom(1.5, Number.NaN, 2 ** 53, Infinity));
const stride = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 64 }) }, fc.integer({ min: -8, max: -1 }), fc.constantFrom(0.5, Number.NaN, 2 ** 52));

const fields = fc.record({
  kind: fc.integer({ min: 0, max: KINDS.length - 1 }),
  memoryBytes: fc.integer({ min: 1, max: 2048 }),
  major: fc.oneof({ weight: 9, arbitrary: fc.constant(DLPACK_VERSION.major) }, fc.integer({ min: 0, max: 3 })),
  flags: fc.integer({ min: 0, max: 7 }),
  deviceType: fc.oneof({ weight: 6, arbitrary: fc.constant(-1) }, fc.constantFrom(0, 1, 2, 3, 13, 99)),
  deviceId: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, fc.integer({ min: -1, max: 3 })),
  dtype: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom([0, 8, 1], [1, 8, 1], [2, 32, 1], [2, 64, 1], [1, 16, 1], [4, 16, 1], [5, 64, 1], [6, 8, 1]) },
    fc.tuple(fc.integer({ min: -1, max: 8 }), fc.integer({ min: 0, max: 130 }), fc.integer({ min: 0, max: 4 })),
  ),
  shape: fc.array(dimension, { maxLength: 5 }),
  strides: fc.option(fc.array(stride, { maxLength: 5 }), { nil: null }),
  stridesMatchRank: fc.boolean(),
  ndimDelta: fc.oneof({ weight: 9, arbitrary: fc.constant(0) }, fc.integer({ min: -2, max: 2 })),
  dataDelta: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, fc.integer({ min: -300, max: 300 })),
  byteOffset: fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 256 }) }, fc.integer({ min: -300, max: 4096 }), fc.constantFrom(0.5, Number.NaN, 2 ** 60)),
});

/** DLPack device type hs writes for each memory kind. */
const DEVICE_TYPE: Record<MemoryKind, number> = { [MemoryKind.Host]: 1, [MemoryKind.PinnedHost]: 3, [MemoryKind.CudaDevice]: 2, [MemoryKind.CudaManaged]: 13 };

/** Highest byte (exclusive, from the allocation start) an accepted tensor can touch; 0 for an empty one. */
function extentEnd(shape: readonly number[], strides: readonly number[], byteOffset: number, itemSize: number): number {
  if (shape.some((d) => d === 0)) return 0;
  let last = 0;
  for (let i = 0; i < shape.length; i++) last += ((shape[i] as number) - 1) * (strides[i] as number);
  return byteOffset + last * itemSize + itemSize;
}

/**
 * Fuzzes `importDLPack` with managed tensors whose shapes, strides, offsets, flags, devices, dtypes and
 * versions are random (plausible and hostile). Every input must either import to a read-only tensor whose
 * every element lies inside the allocation (its deleter run exactly once by dispose), or fail with a typed
 * `HsError` code; nothing may throw.
 */
export function fuzzDLPackImport(runs: number, seed: number = FUZZ_SEED): FuzzOutcome {
  let accepted = 0;
  let refused = 0;
  const backend = new HostBackend();
  const cuda0 = backend.devices[0]!;
  const property = fc.property(fields, (f) => {
    const kind = KINDS[f.kind]!;
    const device = kind === MemoryKind.Host || kind === MemoryKind.PinnedHost ? Device.cpu() : cuda0;
    const memory: DeviceMemory = unwrap(backend.allocate({ kind, device, byteSize: f.memoryBytes }));
    const strides = f.strides === null ? null : f.stridesMatchRank ? f.shape.map((_, i) => f.strides?.[i] ?? 1) : f.strides;
    let deleted = 0;
    const managed: DLPackManagedTensor = {
      version: { major: f.major, minor: 0 },
      flags: f.flags,
      dlTensor: {
        data: memory.address + BigInt(f.dataDelta),
        device: { deviceType: f.deviceType === -1 ? DEVICE_TYPE[kind] : f.deviceType, deviceId: f.deviceId },
        ndim: Math.max(0, f.shape.length + f.ndimDelta),
        dtype: { code: f.dtype[0]!, bits: f.dtype[1]!, lanes: f.dtype[2]! },
        shape: f.shape,
        strides,
        byteOffset: f.byteOffset,
      },
      deleter: () => {
        deleted += 1;
      },
    };
    try {
      let imported;
      try {
        imported = importDLPack(managed, { backend, memory });
      } catch (thrown) {
        throw new Error(`importDLPack threw instead of returning an error: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
      }
      if (!imported.ok) {
        if (!(imported.error instanceof HsError) || !CODES.has(imported.error.code)) throw new Error(`untyped error ${String(imported.error)}`);
        if (deleted !== 0) throw new Error('a failed import ran the deleter');
        refused += 1;
        return;
      }
      const tensor = imported.value;
      if (!tensor.readOnly) throw new Error('an imported tensor is writable');
      const end = extentEnd(tensor.shape, tensor.strides, tensor.byteOffset, tensor.dtype.itemSize);
      if (tensor.byteOffset < 0 || end > memory.byteSize) {
        throw new Error(`accepted a tensor reaching byte ${end} of a ${memory.byteSize}-byte allocation (offset ${tensor.byteOffset})`);
      }
      tensor.dispose();
      tensor.dispose();
      if (deleted !== 1) throw new Error(`the deleter ran ${deleted} times after dispose`);
      accepted += 1;
    } finally {
      backend.free(memory);
    }
  });
  try {
    return checkProperty('DLPack import (shapes, strides, offsets, flags, devices, dtypes)', property, runs, seed, () => `${accepted} imported, ${refused} refused with typed errors`);
  } finally {
    backend.dispose();
  }
}
