import { RegionResource } from '@hs/nanovdb-mr';
import { Device, ErrorCode, MemoryKind, err, errWithContext, ok, type Backend, type DeviceMemory, type MemoryRange, type Result, type Stream } from '@hs/streams';
import { deviceBoundaryAccess, type DeviceBoundaryAccess } from './device-boundary-access.js';
import { fenceCounterBytes, fenceCounterRanges } from './fence-counters.js';

/** Geometry of a device boundary pool. */
export interface CudaIpcExportSpec {
  /** Diagnostics label, for example `topic camera.frames`. */
  readonly name: string;
  /** The CUDA device the allocation lives on. */
  readonly device: Device;
  readonly slotCount: number;
  /** Bytes from one slot to the next (a multiple of 256). */
  readonly slotStride: number;
  /** The producer stream: every fence write is issued on it, after the counters were zeroed on it. */
  readonly producerStream: Stream;
}

/**
 * The exporting side of a device boundary pool: ONE `cudaMalloc` allocation holding every slot (slot i
 * at byte `i * slotStride`) followed by one u64 generation-fence counter per slot, exported once as a
 * 64-byte CUDA IPC handle. The producer's commit records the fence with `recordFence()`: a 64-bit stream
 * memory operation on the producer stream that writes the slot's generation into its counter after
 * every write before it, so the descriptor can go out at once and the importer waits on its own stream
 * (`CudaIpcImport.waitFence`). Neither side blocks a host thread.
 * Spec: "Crossing process boundaries: the generation fence".
 */
export class CudaIpcExport {
  #disposed = false;
  /** Per slot, the 8-byte range of its fence counter. */
  readonly #counters: readonly MemoryRange[];
  /** The slot region (bytes 0 to `slotCount * slotStride`) as a resource; the counters after it are not in it. */
  readonly #slots: RegionResource;

  private constructor(
    private readonly access: DeviceBoundaryAccess,
    /** The allocation: slots, then counters. */
    readonly memory: DeviceMemory,
    /** The 64-byte `cudaIpcMemHandle_t` of `memory`. */
    readonly handle: Uint8Array,
    readonly slotCount: number,
    readonly slotStride: number,
    private readonly producer: Stream,
  ) {
    this.#counters = fenceCounterRanges(memory, slotCount, slotStride);
    const slots: MemoryRange = { memory, byteOffset: 0, byteLength: slotCount * slotStride, label: `${memory.label} slots` };
    this.#slots = new RegionResource(slots, { label: `${memory.label} slots` });
  }

  /**
   * Allocates and exports the pool and zeroes its counters on the producer stream. `NotSupported`
   * without the CUDA backend, addon or stream memory operations; `OutOfMemory`/`DeviceError` from CUDA;
   * nothing is left allocated on failure.
   */
  static create(backend: Backend, spec: CudaIpcExportSpec): Result<CudaIpcExport> {
    const access = deviceBoundaryAccess(backend, `device boundary ${spec.name}`);
    if (!access.ok) return access;
    const slotsBytes = spec.slotCount * spec.slotStride;
    const counters = fenceCounterBytes(spec.slotCount);
    const memory = backend.allocate({ kind: MemoryKind.CudaDevice, device: spec.device, byteSize: slotsBytes + counters, alignment: 256, label: `${spec.name} (CUDA IPC)` });
    if (!memory.ok) return memory;
    const handle = access.value.ipc.exportMemory(memory.value);
    if (!handle.ok) {
      backend.free(memory.value);
      return errWithContext(handle.error, `device boundary ${spec.name}`);
    }
    const zeroed = backend.memsetAsync(spec.producerStream, { memory: memory.value, byteOffset: slotsBytes, byteLength: counters, label: `${spec.name} fence counters` }, 0);
    if (!zeroed.ok) {
      backend.free(memory.value);
      return zeroed;
    }
    return ok(new CudaIpcExport(access.value, memory.value, handle.value, spec.slotCount, spec.slotStride, spec.producerStream));
  }

  /** Bytes of the whole allocation (slots and counters). */
  get byteSize(): number {
    return this.memory.byteSize;
  }

  /**
   * The slot region as a resource for `TensorPool.materialize`: the pool's one backing block of
   * `slotCount * slotStride` bytes (alignment 256) is the region itself, at offset 0, so slot i is at byte
   * `i * slotStride` as the wire says. Returning the block frees nothing (`dispose()` frees the allocation).
   * The same resource every call.
   */
  resource(): RegionResource {
    return this.#slots;
  }

  /** Slot index of a range inside the slot region. */
  slotOf(byteOffset: number): number {
    return Math.floor(byteOffset / this.slotStride);
  }

  /**
   * Enqueues the generation fence of `slot` on the producer stream: its counter becomes `generation`
   * once every write enqueued before it completed. `DeviceError` when CUDA refuses; `InvalidState` after dispose.
   */
  recordFence(slot: number, generation: number): Result<void> {
    if (this.#disposed) return err(ErrorCode.InvalidState, `${this.memory.label} was disposed`);
    const counter = this.#counters[slot];
    if (counter === undefined) return err(ErrorCode.InvalidArgument, `${this.memory.label}: slot ${slot} is outside 0..${this.slotCount - 1}`);
    const written = this.access.memoryOps.writeValue64(this.producer, counter, BigInt(generation));
    return written.ok ? written : errWithContext(written.error, `generation fence write (slot ${slot}, generation ${generation})`);
  }

  /** Frees the allocation once the work already enqueued on it completed. Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.access.backend.free(this.memory);
  }
}
