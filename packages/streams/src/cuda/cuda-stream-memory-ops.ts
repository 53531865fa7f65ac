import type { CudaNativeBinding } from '@hs/cuda-native';
import type { MemoryRange, Stream } from '../backend.js';
import type { StreamMemoryOperations } from '../backend-capabilities.js';
import { ErrorCode, OK_VOID, err, type Err, type Result } from '../errors.js';
import { rangeProblem, streamProblem } from '../handle-checks.js';
import { MemoryKind } from '../memory-kind.js';
import type { CudaStream } from './cuda-handles.js';

const U64_MAX = (1n << 64n) - 1n;

/**
 * `StreamMemoryOperations` of the CUDA backend: `cuStreamWriteValue64`/`cuStreamWaitValue64` reached
 * through the addon (driver entry points found at load; the backend offers this only when they were).
 */
export class CudaStreamMemoryOps implements StreamMemoryOperations {
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
    const problem = streamProblem(this.owner, stream, method) ?? rangeProblem(this.owner, target, method, 'target', -1);
    if (problem !== null) return problem;
    if (target.memory.kind !== MemoryKind.CudaDevice) {
      return err(ErrorCode.InvalidArgument, `${method}: target range "${target.label}" is ${target.memory.kind} memory; stream memory operations need cudaDevice memory`);
    }
    if (target.byteLength !== 8 || target.byteOffset % 8 !== 0 || target.memory.address % 8n !== 0n) {
      return err(ErrorCode.InvalidArgument, `${method}: target range "${target.label}" must be 8 bytes at an 8-byte aligned offset, got byteOffset ${target.byteOffset}, byteLength ${target.byteLength}`);
    }
    if (typeof value !== 'bigint' || value < 0n || value > U64_MAX) {
      return err(ErrorCode.InvalidArgument, `${method}: value must be a bigint in 0..2^64-1, got ${String(value)}`);
    }
    return null;
  }

  private status(method: string, status: number, target: MemoryRange, value: bigint): Result<void> {
    return status === 0 ? OK_VOID : err(ErrorCode.DeviceError, `${method}: the driver refused (CUresult ${status}) at "${target.label}" with value ${value}`);
  }
}
