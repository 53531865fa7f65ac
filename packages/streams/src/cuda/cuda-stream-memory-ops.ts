import type { CudaNativeBinding } from '@hs/cuda-native';
import type { MemoryRange, Stream } from '../backend.js';
import type { StreamMemoryOperations } from '../backend-capabilities.js';
import { ErrorCode, OK_VOID, err, type Err, type Result } from '../errors.js';
import { MemoryKind } from '../memory-kind.js';
import { streamMemoryOpProblem } from '../stream-memory-op-checks.js';
import type { CudaStream } from './cuda-handles.js';

/** `cudaDevAttrCanUseHostPointerForRegisteredMem`: registered host memory has the same address on the device. */
const CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91;

/**
 * `StreamMemoryOperations` of the CUDA backend: `cuStreamWriteValue64`/`cuStreamWaitValue64` reached
 * through the addon (driver entry points found at load; the backend offers this only when they were).
 *
 * Targets are cudaDevice memory or pinnedHost memory of this backend. PinnedHost memory is page-locked
 * portable and mapped (`cudaHostAlloc`, or `cudaHostRegister` for adopted mappings such as an @hs/ipc
 * shared-memory segment), so on a unified-addressing system its host address is its device address and
 * the driver takes it as it is; a device that reports `cudaDevAttrCanUseHostPointerForRegisteredMem` 0
 * refuses pinnedHost targets with NotSupported.
 */
export class CudaStreamMemoryOps implements StreamMemoryOperations {
  /** Per device ordinal: 1 when host pointers of registered memory work on the device, 0 when not, -1 not asked yet. */
  private readonly hostPointers: number[] = [];

  constructor(
    private readonly cuda: CudaNativeBinding,
    /** The backend whose streams and memory are accepted. */
    private readonly owner: object,
  ) {}

  writeValue64(stream: Stream, target: MemoryRange, value: bigint): Result<void> {
    const problem = this.problem('writeValue64', stream, target, value);
    if (problem !== null) return problem;
    return this.status('writeValue64', this.cuda.streamWriteValue64((stream as CudaStream).handle, target.memory.address + BigInt(target.byteOffset), value), target, value);
  }

  waitValue64(stream: Stream, target: MemoryRange, value: bigint): Result<void> {
    const problem = this.problem('waitValue64', stream, target, value);
    if (problem !== null) return problem;
    return this.status('waitValue64', this.cuda.streamWaitValue64((stream as CudaStream).handle, target.memory.address + BigInt(target.byteOffset), value), target, value);
  }

  private problem(method: string, stream: Stream, target: MemoryRange, value: bigint): Err | null {
    const problem = streamMemoryOpProblem(this.owner, method, stream, target, value);
    if (problem !== null) return problem;
    if (target.memory.kind === MemoryKind.PinnedHost && !this.hostPointerUsable(stream.device.id)) {
      return err(
        ErrorCode.NotSupported,
        `${method}: device ${stream.device.id} cannot use host pointers of registered memory (cudaDevAttrCanUseHostPointerForRegisteredMem is 0), so the pinnedHost target "${target.label}" has no device address here; use a cudaDevice counter`,
      );
    }
    return null;
  }

  private hostPointerUsable(ordinal: number): boolean {
    let known = this.hostPointers[ordinal];
    if (known === undefined || known < 0) {
      let attribute = 0;
      try {
        attribute = this.cuda.deviceAttribute(ordinal, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM);
      } catch {
        attribute = 0;
      }
      known = attribute !== 0 ? 1 : 0;
      while (this.hostPointers.length <= ordinal) this.hostPointers.push(-1);
      this.hostPointers[ordinal] = known;
    }
    return known === 1;
  }

  private status(method: string, status: number, target: MemoryRange, value: bigint): Result<void> {
    return status === 0 ? OK_VOID : err(ErrorCode.DeviceError, `${method}: the driver refused (CUresult ${status}) at "${target.label}" with value ${value}`);
  }
}
