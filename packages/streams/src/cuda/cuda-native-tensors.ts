import type { CudaNativeBinding } from '@hs/cuda-native';
import type { DeviceMemory, Event, Stream } from '../backend.js';
import { ErrorCode, err, ok, type Result } from '../errors.js';
import { eventProblem, memoryProblem, streamProblem } from '../handle-checks.js';
import { MemoryKind } from '../memory-kind.js';
import type { CudaEvent, CudaMemory, CudaStream } from './cuda-handles.js';
import type { CudaStreamTable } from './cuda-stream-table.js';

/**
 * What `CudaBackend.exportNativeTensor` reads from a tensor (a `Tensor` of `@hs/tensor` fits): its
 * allocation, layout in elements and bytes, element type as DLPack code/bits/lanes, read-only state
 * and readiness event.
 */
export interface NativeTensorSource {
  /** The allocation holding the elements; a live allocation of this backend. */
  readonly memory: DeviceMemory;
  /** Bytes from the start of `memory` to the first element. */
  readonly byteOffset: number;
  /** Extent per dimension, in elements (DLPack `shape`). */
  readonly shape: readonly number[];
  /** Elements between neighbours per dimension. */
  readonly strides: readonly number[];
  /** Element type, as DLPack describes it. */
  readonly dtype: {
    /** DLPack `DLDataTypeCode` (0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool). */
    readonly code: number;
    /** Bits per lane (8, 16, 32, 64). */
    readonly bits: number;
    /** Lanes per element; 1 for scalars. */
    readonly lanes: number;
  };
  /** True when consumers must not write (sets `DLPACK_FLAG_BITMASK_READ_ONLY` in the native tensor). */
  readonly readOnly: boolean;
  /** Event to wait on before reading; null when there is nothing to wait for. */
  readonly readinessEvent: Event | null;
}

/** DLPack device type of each memory kind. */
const DLPACK_DEVICE_TYPE: Readonly<Record<MemoryKind, number>> = {
  [MemoryKind.CudaDevice]: 2,
  [MemoryKind.PinnedHost]: 3,
  [MemoryKind.CudaManaged]: 13,
  [MemoryKind.Host]: 1,
};

/**
 * Tensors handed to downstream native addons through the C ABI (`native/include/hs/hs.h`): `hs_tensor_v1`
 * records with their DLPack `DLManagedTensorVersioned`, the readiness stream an addon named, and release.
 */
export class CudaNativeTensors {
  constructor(
    private readonly cuda: CudaNativeBinding,
    /** The backend whose handles are accepted. */
    private readonly owner: object,
    private readonly streams: CudaStreamTable,
  ) {}

  /** See `CudaBackend.exportNativeTensor`. */
  export(tensor: NativeTensorSource, stream: Stream): Result<bigint> {
    const problem =
      streamProblem(this.owner, stream, 'exportNativeTensor') ??
      memoryProblem(this.owner, tensor.memory, 'exportNativeTensor', 'the tensor') ??
      (tensor.readinessEvent === null ? null : eventProblem(this.owner, tensor.readinessEvent, 'exportNativeTensor'));
    if (problem !== null) return problem;
    const m = tensor.memory as CudaMemory;
    try {
      return ok(
        this.cuda.exportTensorV1({
          address: m.address,
          byteOffset: tensor.byteOffset,
          shape: tensor.shape,
          strides: tensor.strides,
          dtypeCode: tensor.dtype.code,
          dtypeBits: tensor.dtype.bits,
          dtypeLanes: tensor.dtype.lanes,
          deviceType: DLPACK_DEVICE_TYPE[m.kind],
          deviceId: m.device.id,
          readOnly: tensor.readOnly,
          readinessEvent: tensor.readinessEvent === null ? 0n : (tensor.readinessEvent as CudaEvent).handle,
          stream: (stream as CudaStream).handle,
        }),
      );
    } catch (cause) {
      return err(ErrorCode.InvalidArgument, `exportNativeTensor: ${(cause as Error).message}`, cause);
    }
  }

  /** The live stream an addon named as the record's readiness stream, or null. */
  readinessStream(record: bigint): Stream | null {
    return this.streams.streamOf(this.cuda.tensorV1ReadinessStream(record));
  }

  release(record: bigint): void {
    this.cuda.releaseTensorV1(record);
  }
}
