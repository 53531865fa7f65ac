import { ErrorCode, err, errWithContext, ok, type Backend, type Device, type DeviceMemory, type MemoryRange, type Result, type Stream } from '@hs/streams';
import { deviceBoundaryAccess, type DeviceBoundaryAccess } from './device-boundary-access.js';
import { fenceCounterBytes, fenceCounterRanges } from './fence-counters.js';

/** What an importer knows about a device boundary pool (from the publisher's HELLO). */
export interface CudaIpcImportSpec {
  readonly name: string;
  /** Device to map it on: the topic's endpoint device, which must be the exporter's device. */
  readonly device: Device;
  /** The 64-byte `cudaIpcMemHandle_t`. */
  readonly handle: Uint8Array;
  readonly slotCount: number;
  readonly slotStride: number;
  /** Bytes HELLO announced for the allocation (slots, then fence counters); the mapped allocation must hold them. */
  readonly allocationBytes: number;
}

/**
 * The importing side of a device boundary pool: the exporter's one allocation mapped into this process
 * (`cudaIpcOpenMemHandle`) and adopted by the backend, so slots are plain ranges at `i * slotStride`
 * usable in copies and kernels. `waitFence()` makes a consumer stream wait, on the device, until the
 * slot's counter reached the descriptor's fence value. Spec: "Crossing process boundaries: the generation fence".
 */
export class CudaIpcImport {
  #closed = false;
  /** Per slot, the 8-byte range of its fence counter. */
  readonly #counters: readonly MemoryRange[];

  private constructor(
    private readonly access: DeviceBoundaryAccess,
    /** The mapped allocation (slots, then counters), cudaDevice memory of the backend. */
    readonly memory: DeviceMemory,
    readonly slotCount: number,
    readonly slotStride: number,
  ) {
    this.#counters = fenceCounterRanges(memory, slotCount, slotStride);
  }

  /**
   * Maps the exporter's allocation. `ProtocolError` for a handle that is not 64 bytes, for announced
   * bytes that are not the slots plus their counters, and (naming `allocation bytes`) when the allocation
   * the handle maps holds fewer bytes than announced (the backend measures it: `cuMemGetAddressRange` on
   * CUDA), so no slot or counter lies past its end; `DeviceError` when CUDA refuses to open it (another
   * device, a freed allocation, the exporting process itself); `NotSupported` without the CUDA backend.
   * Nothing stays mapped on failure.
   */
  static open(backend: Backend, spec: CudaIpcImportSpec): Result<CudaIpcImport> {
    const access = deviceBoundaryAccess(backend, `device boundary ${spec.name}`);
    if (!access.ok) return access;
    if (!(spec.handle instanceof Uint8Array) || spec.handle.byteLength !== 64) {
      return err(ErrorCode.ProtocolError, `device boundary ${spec.name}: the CUDA IPC handle must be 64 bytes`);
    }
    const byteSize = spec.allocationBytes;
    if (byteSize !== spec.slotCount * spec.slotStride + fenceCounterBytes(spec.slotCount)) {
      return err(ErrorCode.ProtocolError, `device boundary ${spec.name}: allocation bytes ${byteSize} are not ${spec.slotCount} slots of ${spec.slotStride} bytes plus their fence counters`);
    }
    const mapped = access.value.ipc.importMemory({ device: spec.device, handle: spec.handle, byteSize, label: `${spec.name} (imported)` });
    if (!mapped.ok) {
      // The backend refuses a size above what the handle maps: the peer announced memory it did not export.
      if (mapped.error.code === ErrorCode.InvalidArgument) {
        return err(ErrorCode.ProtocolError, `device boundary ${spec.name}: device hello rejected: allocation bytes ${byteSize} exceed the allocation its handle maps (${mapped.error.detail})`, mapped.error);
      }
      return errWithContext(mapped.error, `device boundary ${spec.name}`);
    }
    return ok(new CudaIpcImport(access.value, mapped.value, spec.slotCount, spec.slotStride));
  }

  /**
   * Enqueues on `stream` a device-side wait until `slot`'s fence counter is at least `fenceValue`; work
   * enqueued after it reads the slot's bytes as the producer left them. Never blocks the host.
   * `InvalidArgument` for a slot out of range or a foreign stream; `DeviceError` when CUDA refuses.
   */
  waitFence(stream: Stream, slot: number, fenceValue: number): Result<void> {
    if (this.#closed) return err(ErrorCode.InvalidState, `${this.memory.label} was closed`);
    const counter = Number.isSafeInteger(slot) ? this.#counters[slot] : undefined;
    if (counter === undefined) return err(ErrorCode.InvalidArgument, `${this.memory.label}: slot ${slot} is outside 0..${this.slotCount - 1}`);
    const waited = this.access.memoryOps.waitValue64(stream, counter, BigInt(fenceValue));
    return waited.ok ? waited : errWithContext(waited.error, `generation fence wait (slot ${slot}, value ${fenceValue})`);
  }

  /**
   * Drops the backend handle; the backend unmaps the allocation once the work already enqueued on its
   * streams completed. Idempotent.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.access.backend.free(this.memory);
  }
}
