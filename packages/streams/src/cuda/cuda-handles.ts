import type { DeviceMemory, Event, Stream } from '../backend.js';
import type { Device } from '../device.js';
import type { HsError } from '../errors.js';
import type { MemoryKind } from '../memory-kind.js';

/** A CUDA stream (non-blocking, with priority) as the CUDA backend hands it out. */
export class CudaStream implements Stream {
  destroyed = false;
  /** First host function that threw on this stream; reported by later synchronizations. */
  fault: HsError | null = null;
  /** Internal event recorded at the stream's end when a free must be ordered after its work. */
  tailEvent = 0n;

  constructor(
    readonly owner: object,
    readonly id: number,
    readonly device: Device,
    readonly label: string,
    /** Priority as CUDA clamped it (lower runs first). */
    readonly priority: number,
    /** The `cudaStream_t`. */
    readonly handle: bigint,
  ) {}
}

/** A CUDA event (timing disabled). */
export class CudaEvent implements Event {
  destroyed = false;
  /** Stream of the last record; null when never recorded. */
  recordedOn: CudaStream | null = null;

  constructor(
    readonly owner: object,
    readonly id: number,
    readonly device: Device,
    readonly label: string,
    /** The `cudaEvent_t`. */
    readonly handle: bigint,
    /** True when created with `cudaEventInterprocess` (its IPC handle can be exported). */
    readonly interprocess: boolean = false,
  ) {}
}

/** How the memory behind a `CudaMemory` was obtained, which decides how it is released. */
export enum CudaAllocationOrigin {
  /** `cudaMalloc` (synchronous tier). */
  Malloc,
  /** `cudaMallocAsync` from the device's default pool. */
  PoolAsync,
  /** `cudaHostAlloc` (pinned, mapped). */
  PinnedHost,
  /** `cudaMallocManaged`. */
  Managed,
  /** A JS ArrayBuffer (pageable host memory). */
  JsHeap,
  /** Memory another allocator owns (`adoptDeviceMemory`, `adoptHostMemory` of host kind): the backend never releases it. */
  Adopted,
  /**
   * Host memory another allocator owns, page-locked by `adoptHostMemory` (pinnedHost) with
   * `cudaHostRegister`: released by `cudaHostUnregister` after the work enqueued before the free, never freed.
   */
  Registered,
  /**
   * Another process's cudaMalloc allocation mapped with `cudaIpcOpenMemHandle` (`Backend.ipc.importMemory`):
   * unmapped with `cudaIpcCloseMemHandle` after the work enqueued before the free, never freed.
   */
  IpcImported,
}

/** One allocation of the CUDA backend. `address` is aligned; `base` is what CUDA returned. */
export class CudaMemory implements DeviceMemory {
  freed = false;

  constructor(
    readonly owner: object,
    readonly id: number,
    readonly device: Device,
    readonly kind: MemoryKind,
    readonly address: bigint,
    readonly byteSize: number,
    readonly label: string,
    readonly origin: CudaAllocationOrigin,
    /** Pointer to release (before alignment). */
    readonly base: bigint,
    /** ArrayBuffer over the memory for host-accessible kinds (detached when freed), else null. */
    readonly buffer: ArrayBuffer | null,
    /** Host view of exactly `byteSize` bytes at `address`, else null. */
    public view: Uint8Array | null,
  ) {}
}
