import { ErrorCode, HsError, MemoryKind, err, ok, type Backend, type DeviceMemory, type Result, type Stream } from '@hs/streams';
import { DType, type DTypeCode } from './dtype.js';
import { Tensor } from './tensor.js';
import { contiguousStrides } from './tensor-layout.js';

/**
 * DLPack device types hs memory kinds map to (`DLDeviceType`).
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { DLDeviceType, DType, Tensor, exportDLPack } from '@hs/tensor';
 *
 * const backend = new HostBackend();
 * const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 64 }));
 * const tensor = unwrap(Tensor.import({ backend, memory, shape: [16], dtype: DType.float32 }));
 * const managed = unwrap(exportDLPack(tensor, { releaseStream: null }));
 * console.log(`device memory is DLPack kDLCUDA: ${managed.dlTensor.device.deviceType === DLDeviceType.Cuda}`);
 * managed.deleter?.();
 * tensor.dispose();
 * ```
 */
export enum DLDeviceType {
  /** Pageable host memory (`kDLCPU`). */
  Cpu = 1,
  /** Device memory (`kDLCUDA`). */
  Cuda = 2,
  /** Page-locked host memory (`kDLCUDAHost`). */
  CudaHost = 3,
  /** Managed memory (`kDLCUDAManaged`). */
  CudaManaged = 13,
}

/**
 * DLPack version hs writes and the major version it reads.
 * @example
 * ```ts
 * import { DLPACK_VERSION } from '@hs/tensor';
 *
 * // a producer written against another major version is refused by importDLPack (NotSupported)
 * const foreign = { major: 1, minor: 0 };
 * console.log(`hs writes DLPack ${DLPACK_VERSION.major}.${DLPACK_VERSION.minor}; ${foreign.major}.${foreign.minor} imports: ${foreign.major === DLPACK_VERSION.major}`);
 * ```
 */
export const DLPACK_VERSION: {
  /** Major version; a managed tensor with another major version is refused with `NotSupported`. */
  readonly major: 1;
  /** Minor version hs writes. */
  readonly minor: 1;
} = Object.freeze({ major: 1, minor: 1 });
/**
 * `flags` bit: the consumer must not write the data.
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { DLPACK_FLAG_READ_ONLY, DType, Tensor, exportDLPack } from '@hs/tensor';
 *
 * const backend = new HostBackend();
 * const memory = unwrap(backend.allocate({ kind: MemoryKind.Host, device: Device.cpu(), byteSize: 16 }));
 * const tensor = unwrap(Tensor.import({ backend, memory, shape: [4], dtype: DType.int32 }));
 * const managed = unwrap(exportDLPack(tensor, { releaseStream: null }));
 * console.log(`consumer may write: ${(managed.flags & DLPACK_FLAG_READ_ONLY) === 0}`); // false: imports are read-only
 * managed.deleter?.();
 * tensor.dispose();
 * ```
 */
export const DLPACK_FLAG_READ_ONLY = 1;
/**
 * `flags` bit: the producer copied the data for this exchange.
 * @example
 * ```ts
 * import { DLPACK_FLAG_IS_COPIED, DLPACK_FLAG_READ_ONLY } from '@hs/tensor';
 *
 * // a producer that copied its data for the exchange says so; hs exports share memory and never set it
 * const flags = DLPACK_FLAG_READ_ONLY | DLPACK_FLAG_IS_COPIED;
 * console.log(`copied: ${(flags & DLPACK_FLAG_IS_COPIED) !== 0}`);
 * ```
 */
export const DLPACK_FLAG_IS_COPIED = 2;

/** The `DLTensor` part of a DLPack exchange, in JavaScript terms. */
export interface DLPackTensorFields {
  /** Address of the allocation (DLPack `data`). */
  readonly data: bigint;
  /** Where the data lives (DLPack `DLDevice`). */
  readonly device: {
    /** DLPack device type code (see `DLDeviceType`: 1 CPU, 2 CUDA, 3 CUDA host, 13 CUDA managed). */
    readonly deviceType: number;
    /** Device ordinal; 0 for host memory. */
    readonly deviceId: number;
  };
  /** Number of dimensions; equals `shape.length`. */
  readonly ndim: number;
  /** DLPack type code, bits per lane, lanes. */
  readonly dtype: {
    /** DLPack `DLDataTypeCode` (see `DTypeCode`). */
    readonly code: number;
    /** Bits per lane. */
    readonly bits: number;
    /** Lanes per element; 1 for scalars. */
    readonly lanes: number;
  };
  /** Elements per dimension. */
  readonly shape: readonly number[];
  /** Elements between neighbours per dimension; `null` means compact row-major. */
  readonly strides: readonly number[] | null;
  /** Bytes from `data` to the first element. */
  readonly byteOffset: number;
}

/**
 * A DLPack `DLManagedTensorVersioned` in JavaScript terms: what `exportDLPack` produces and
 * `importDLPack` consumes. `deleter` is the producer's release hook; the consumer calls it exactly once
 * when done (an import runs it once its last holder dropped: `dispose()` and every read lease).
 */
export interface DLPackManagedTensor {
  /** DLPack version of the producer; hs writes `DLPACK_VERSION`. */
  readonly version: {
    /** Major version; must equal `DLPACK_VERSION.major` to import. */
    readonly major: number;
    /** Minor version. */
    readonly minor: number;
  };
  /** Bit set of `DLPACK_FLAG_READ_ONLY` and `DLPACK_FLAG_IS_COPIED`. */
  readonly flags: number;
  /** The tensor description (DLPack `dl_tensor`). */
  readonly dlTensor: DLPackTensorFields;
  /** Producer's release hook, called exactly once by the consumer when done; `null` when nothing to release. */
  readonly deleter: (() => void) | null;
}

/** Options for `exportDLPack`. */
export interface DLPackExportOptions {
  /**
   * The stream the consumer reads on (after waiting on the tensor's readiness event). A pool tensor
   * registers it as a release stream and holds a read lease until the deleter runs, so the slot is
   * reused only after the reads enqueued there; `null` for a host reader.
   */
  readonly releaseStream: Stream | null;
}

const DEVICE_TYPE_OF: Record<MemoryKind, DLDeviceType> = {
  [MemoryKind.Host]: DLDeviceType.Cpu,
  [MemoryKind.PinnedHost]: DLDeviceType.CudaHost,
  [MemoryKind.CudaDevice]: DLDeviceType.Cuda,
  [MemoryKind.CudaManaged]: DLDeviceType.CudaManaged,
};

/**
 * Describes `tensor` as a DLPack managed tensor for another framework or addon: `data` is its
 * allocation's address, `byteOffset` its offset, strides always explicit, the read-only flag set unless
 * the tensor is in its write phase. A pool tensor stays leased until the deleter runs (once; later calls
 * do nothing). The consumer orders its reads after `tensor.readinessEvent` itself (DLPack carries no
 * events). Errors: InvalidState for a stale tensor or unpublished storage; ResourceExhausted or
 * NotSupported from the release-stream registration.
 * Spec: "Foreign tensors imported through DLPack".
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { DType, Tensor, exportDLPack } from '@hs/tensor';
 *
 * const backend = new HostBackend();
 * const consumer = unwrap(backend.createStream(Device.cuda(0), { label: 'consumer' }));
 * const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 4 * 480 * 640 }));
 * const image = unwrap(Tensor.import({ backend, memory, shape: [480, 640], dtype: DType.float32 }));
 * const managed = unwrap(exportDLPack(image, { releaseStream: consumer }));
 * const { shape, strides, dtype } = managed.dlTensor;
 * console.log(`shape ${shape.join('x')}, strides ${strides?.join(',')}, ${dtype.bits}-bit lanes`);
 * managed.deleter?.(); // the consumer is done: exactly once
 * image.dispose();
 * ```
 */
export function exportDLPack(tensor: Tensor, options: DLPackExportOptions): Result<DLPackManagedTensor> {
  let range;
  try {
    range = tensor.data();
  } catch (cause) {
    if (cause instanceof HsError) return { ok: false, error: cause };
    throw cause;
  }
  const backing = tensor.backing;
  const releaseStream = options.releaseStream;
  if (backing !== null) {
    if (releaseStream !== null) {
      const registered = backing.registerReleaseStream(releaseStream);
      if (!registered.ok) return registered;
    }
    const leased = backing.acquireLease();
    if (!leased.ok) return leased;
  }
  let released = false;
  const memory = range.memory;
  return ok({
    version: DLPACK_VERSION,
    flags: tensor.readOnly ? DLPACK_FLAG_READ_ONLY : 0,
    dlTensor: {
      data: memory.address,
      device: { deviceType: DEVICE_TYPE_OF[memory.kind], deviceId: memory.device.id },
      ndim: tensor.shape.length,
      dtype: { code: tensor.dtype.code, bits: tensor.dtype.bits, lanes: tensor.dtype.lanes },
      shape: tensor.shape,
      strides: tensor.strides,
      byteOffset: tensor.byteOffset,
    },
    deleter: () => {
      if (released) return;
      released = true;
      backing?.releaseLease(releaseStream);
    },
  });
}

/** Options for `importDLPack`. */
export interface DLPackImportOptions {
  /** Backend that owns `memory`; the imported tensor's readiness and host access go through it. */
  readonly backend: Backend;
  /** The backend allocation that holds the DLPack data (from `data` to the last element). */
  readonly memory: DeviceMemory;
  /** Diagnostics label. */
  readonly name?: string;
}

/**
 * Wraps a DLPack managed tensor that lives in `options.memory` as a `Tensor`: honours `byteOffset`,
 * `null` strides (compact row-major), size-0 dimensions (no bytes) and size-1 dimensions (their strides
 * do not matter). The result is read-only forever, whatever the flags say, has no readiness contract
 * until `setReadinessStream()`, and is reference counted: its `backing` takes read leases, and the
 * DLPack deleter runs once when the last holder dropped (`dispose()` and every lease, after the streams
 * those leases were released on passed). Errors: NotSupported for
 * another DLPack major version; InvalidArgument for a device that does not match the memory, an unknown
 * dtype, a rank mismatch, negative strides, or data outside the memory; as `Tensor.import` otherwise.
 * Spec: "Foreign tensors imported through DLPack".
 * @example
 * ```ts
 * import { Device, HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { DType, Tensor, exportDLPack, importDLPack } from '@hs/tensor';
 *
 * const backend = new HostBackend();
 * const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
 * const memory = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: 256 }));
 * const source = unwrap(Tensor.import({ backend, memory, shape: [64], dtype: DType.float32 }));
 * const managed = unwrap(exportDLPack(source, { releaseStream: null }));
 *
 * const view = unwrap(importDLPack(managed, { backend, memory, name: 'from DLPack' }));
 * unwrap(view.setReadinessStream(producer)); // readers are ordered after the producer's writes
 * console.log(`${view.name}: ${view.shape} ${view.dtype}, read-only ${view.readOnly}`);
 * view.dispose(); // the last holder: the DLPack deleter runs once
 * source.dispose();
 * ```
 */
export function importDLPack(managed: DLPackManagedTensor, options: DLPackImportOptions): Result<Tensor> {
  const { backend, memory } = options;
  const t = managed.dlTensor;
  const name = options.name ?? `DLPack import in ${memory.label}`;
  if (managed.version.major !== DLPACK_VERSION.major) {
    return err(ErrorCode.NotSupported, `importDLPack "${name}": DLPack ${managed.version.major}.${managed.version.minor} is not supported; hs reads major version ${DLPACK_VERSION.major}`);
  }
  const expectedType = DEVICE_TYPE_OF[memory.kind];
  if (t.device.deviceType !== expectedType || (memory.device.isCuda && t.device.deviceId !== memory.device.id)) {
    return err(
      ErrorCode.InvalidArgument,
      `importDLPack "${name}": the DLPack device (type ${t.device.deviceType}, id ${t.device.deviceId}) does not match ${memory.kind} memory on ${memory.device.toString()} (type ${expectedType}); pass the allocation that holds the data`,
    );
  }
  let dtype: DType;
  try {
    dtype = DType.of(t.dtype.code as DTypeCode, t.dtype.bits, t.dtype.lanes);
  } catch (cause) {
    return err(ErrorCode.InvalidArgument, `importDLPack "${name}": ${(cause as Error).message}`, cause);
  }
  if (t.shape.length !== t.ndim || (t.strides !== null && t.strides.length !== t.ndim)) {
    return err(ErrorCode.InvalidArgument, `importDLPack "${name}": ndim is ${t.ndim} but shape has ${t.shape.length} and strides ${t.strides?.length ?? 'null'} entries`);
  }
  if (!Number.isSafeInteger(t.byteOffset)) {
    return err(ErrorCode.InvalidArgument, `importDLPack "${name}": byteOffset must be a safe integer number of bytes, got ${String(t.byteOffset)}`);
  }
  const start = t.data - memory.address + BigInt(t.byteOffset);
  if (start < 0n || start > BigInt(memory.byteSize)) {
    return err(ErrorCode.InvalidArgument, `importDLPack "${name}": the data starts outside memory "${memory.label}"; pass the allocation that holds it`);
  }
  const empty = t.shape.some((d) => d === 0);
  let strides: readonly number[] | undefined;
  if (t.strides !== null && !empty) {
    const compact = contiguousStrides(t.shape);
    // A size-1 dimension is never stepped over, so any stride there (even a negative one) is equivalent.
    strides = t.strides.map((s, i) => (t.shape[i] === 1 ? (compact[i] as number) : s));
  }
  return Tensor.import({
    backend,
    memory,
    shape: t.shape,
    dtype,
    ...(strides === undefined ? {} : { strides }),
    byteOffset: Number(start),
    name,
    ...(managed.deleter === null ? {} : { deleter: managed.deleter }),
  });
}
