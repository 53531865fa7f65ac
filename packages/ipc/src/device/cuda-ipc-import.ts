import { ErrorCode, err, ok, type Backend, type Device, type DeviceMemory, type Result, type Stream } from '@hs/streams';
import { cudaIpcAccess, memoryOpResult, nativeStreamOf, type CudaIpcAccess } from './cuda-ipc-access.js';
import { fenceCounterBytes, fenceCounterOffset } from './fence-counters.js';

/** What an importer knows about a device boundary pool (from the publisher's HELLO). */
export interface CudaIpcImportSpec {
  readonly name: string;
  /** Device to map it on: the topic's endpoint device, which must be the exporter's device. */
  readonly device: Device;
  /** The 64-byte `cudaIpcMemHandle_t`. */
  readonly handle: Uint8Array;
  readonly slotCount: number;
  readonly slotStride: number;
}

/**
 * The importing side of a device boundary pool: the exporter's one allocation mapped into this process
 * (`cudaIpcOpenMemHandle`) and adopted by the backend, so slots are plain ranges at `i * slotStride`
 * usable in copies and kernels. `waitFence()` makes a consumer stream wait, on the device, until the
 * slot's counter reached the descriptor's fence value. Spec: "Crossing process boundaries: the generation fence".
 */
export class CudaIpcImport {
  #closed = false;

  private constructor(
    private readonly access: CudaIpcAccess,
    private readonly address: bigint,
    /** The mapped allocation (slots, then counters), adopted by the backend. */
    readonly memory: DeviceMemory,
    readonly slotCount: number,
    readonly slotStride: number,
  ) {}

  /**
   * Maps the exporter's allocation. `ProtocolError` for a handle that is not 64 bytes; `DeviceError` when
   * CUDA refuses to open it (another device, a freed allocation, the exporting process itself);
   * `NotSupported` without the CUDA backend. Nothing stays mapped on failure.
   */
  static open(backend: Backend, spec: CudaIpcImportSpec): Result<CudaIpcImport> {
    const access = cudaIpcAccess(backend, `device boundary ${spec.name}`);
    if (!access.ok) return access;
    if (!(spec.handle instanceof Uint8Array) || spec.handle.byteLength !== 64) {
      return err(ErrorCode.ProtocolError, `device boundary ${spec.name}: the CUDA IPC handle must be 64 bytes`);
    }
    const cuda = access.value.cuda;
    let address: bigint;
    try {
      address = cuda.ipcOpenMemHandle(spec.device.id, Buffer.from(spec.handle.buffer, spec.handle.byteOffset, 64));
    } catch (thrown) {
      return err(ErrorCode.DeviceError, `device boundary ${spec.name}: cudaIpcOpenMemHandle refused the handle on ${spec.device.toString()}: ${(thrown as Error).message}`, thrown);
    }
    const byteSize = spec.slotCount * spec.slotStride + fenceCounterBytes(spec.slotCount);
    const adopted = backend.adoptDeviceMemory?.({ device: spec.device, address, byteSize, label: `${spec.name} (imported)` });
    if (adopted === undefined || !adopted.ok) {
      cuda.ipcCloseMemHandle(address);
      return adopted ?? err(ErrorCode.NotSupported, `device boundary ${spec.name}: the backend cannot adopt device memory`);
    }
    return ok(new CudaIpcImport(access.value, address, adopted.value, spec.slotCount, spec.slotStride));
  }

  /**
   * Enqueues on `stream` a device-side wait until `slot`'s fence counter is at least `fenceValue`; work
   * enqueued after it reads the slot's bytes as the producer left them. Never blocks the host.
   * `InvalidArgument` for a slot out of range or a foreign stream; `DeviceError` when CUDA refuses.
   */
  waitFence(stream: Stream, slot: number, fenceValue: number): Result<void> {
    if (this.#closed) return err(ErrorCode.InvalidState, `${this.memory.label} was closed`);
    if (!Number.isSafeInteger(slot) || slot < 0 || slot >= this.slotCount) return err(ErrorCode.InvalidArgument, `${this.memory.label}: slot ${slot} is outside 0..${this.slotCount - 1}`);
    const native = nativeStreamOf(this.access, stream);
    if (!native.ok) return native;
    const counter = this.address + BigInt(fenceCounterOffset(this.slotCount, this.slotStride, slot));
    return memoryOpResult(this.access.cuda.streamWaitValue64(native.value, counter, BigInt(fenceValue)), `generation fence wait (slot ${slot}, value ${fenceValue})`);
  }

  /**
   * Drops the backend handle and unmaps the allocation. Call once no work enqueued on it is pending
   * (after the consumer's streams were synchronized). Idempotent.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.access.backend.free(this.memory);
    this.access.cuda.ipcCloseMemHandle(this.address);
  }
}
