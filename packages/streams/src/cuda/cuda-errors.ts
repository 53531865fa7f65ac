import type { CudaNativeBinding } from '@hs/cuda-native';
import { ErrorCode, err, type Err } from '../errors.js';

/** `cudaErrorNotReady`: the queried stream or event still has pending work. */
export const NOT_READY = 600;
/** `cudaErrorInvalidValue`: an argument CUDA (or a native kernel) refused. */
export const INVALID_VALUE = 1;
/** `cudaErrorMemoryAllocation`: out of device or host memory. */
const MEMORY_ALLOCATION = 2;

/**
 * The CUDA backend's status mapping: a CUDA status or a throw of a creating binding call (an Error with
 * a numeric `cudaError`) becomes OutOfMemory (`cudaErrorMemoryAllocation`) or DeviceError, naming the
 * method and CUDA's words.
 */
export class CudaErrors {
  constructor(private readonly cuda: CudaNativeBinding) {}

  /** Maps a non-zero CUDA status returned by `method`. */
  status(method: string, status: number): Err {
    const code = status === MEMORY_ALLOCATION ? ErrorCode.OutOfMemory : ErrorCode.DeviceError;
    return err(code, `${method}: CUDA failed with ${this.cuda.errorName(status)} (${status})`);
  }

  /** Maps what a creating binding call threw. */
  thrown(method: string, cause: unknown): Err {
    const status = (cause as { cudaError?: unknown })?.cudaError;
    const code = status === MEMORY_ALLOCATION ? ErrorCode.OutOfMemory : ErrorCode.DeviceError;
    return err(code, `${method}: ${(cause as Error)?.message ?? String(cause)}`, cause);
  }
}
