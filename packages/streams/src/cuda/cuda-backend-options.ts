import { ErrorCode, OK_VOID, err, type HsError, type Result } from '../errors.js';
import type { Stream } from '../backend.js';
import { checkOptionFields } from '../option-fields.js';

/** Options for `CudaBackend.create`. */
export interface CudaBackendOptions {
  /**
   * Bytes each device's default memory pool keeps cached after frees instead of returning them to the
   * driver (`cudaMemPoolAttrReleaseThreshold`); default: keep everything (fast `allocateAsync` reuse).
   */
  readonly poolReleaseThreshold?: number;
  /** Called when a host function throws; the error (DeviceError) is also returned by later synchronizations of its stream. */
  readonly onFault?: (error: HsError, stream: Stream) => void;
  /**
   * `blocking` (default): later work on a stream waits until a host function returned (the Backend
   * contract). `queued`: host functions still run in stream order after earlier work, but later work does
   * not wait for them; only for tools that serialize the CUDA API (compute-sanitizer), where a waiting
   * callback thread deadlocks. Default from `HS_CUDA_HOST_FUNCTIONS`.
   */
  readonly hostFunctions?: 'blocking' | 'queued';
  /**
   * Whether the backend uses the devices' stream-ordered memory pools; default true where a device
   * supports them. `false` forces the pool-less path on every device, as on a device without
   * `cudaDevAttrMemoryPoolsSupported`: `supportsMemoryPools` is false and `allocateAsync` returns
   * NotSupported, so device memory must come from a synchronous resource lifted with `AsyncFromSync`
   * (`new AsyncFromSync(backend, new MallocResource(backend, device))` of `@hs/nanovdb-mr`).
   */
  readonly memoryPools?: boolean;
  /**
   * Page-locking of the JS arrays device-to-host copies (`copyToHostAsync`, `memcpyAsync` into host memory,
   * `Tensor.copyToHost`) write into: an array whose buffer is at least `minBytes` long (default 4 MiB) is
   * registered whole with `cudaHostRegister` at its `copies`-th copy (default 2: the first repeat copy into the
   * same array), and that copy and every later one go straight from the device into it, with no pinned staging
   * and no copy on the JS thread. The registration ends at `CudaBackend.releaseHostArray(bytes)`, at `dispose()`,
   * or when the array's buffer is garbage-collected; `CudaBackend.hostArrayRegistrations()` reports them and the
   * time spent registering. `false`: every copy into a JS array is staged. `copies: 1` registers at the first copy.
   */
  readonly hostArrayRegistration?:
    | false
    | {
        /** Smallest ArrayBuffer registered, in bytes (default 4 MiB): below it, registration costs more than staging saves. */
        readonly minBytes?: number;
        /** The copy into the same ArrayBuffer at which it is registered (default 2; 1: at the first). */
        readonly copies?: number;
      };
}

/** InvalidArgument naming the first option of the wrong type or out of range, or a field that is not an option. */
export function checkCudaBackendOptions(options: CudaBackendOptions): Result<void> {
  const fields = checkOptionFields('CudaBackend', options, ['poolReleaseThreshold', 'onFault', 'hostFunctions', 'memoryPools', 'hostArrayRegistration']);
  if (!fields.ok) return fields;
  const { poolReleaseThreshold, onFault } = options;
  if (poolReleaseThreshold !== undefined && (!Number.isSafeInteger(poolReleaseThreshold) || poolReleaseThreshold < 0)) {
    return err(ErrorCode.InvalidArgument, `CudaBackend: poolReleaseThreshold must be a non-negative integer number of bytes, got ${String(poolReleaseThreshold)}`);
  }
  if (onFault !== undefined && typeof onFault !== 'function') return err(ErrorCode.InvalidArgument, 'CudaBackend: onFault must be a function');
  if (options.memoryPools !== undefined && typeof options.memoryPools !== 'boolean') {
    return err(ErrorCode.InvalidArgument, `CudaBackend: memoryPools must be a boolean, got ${String(options.memoryPools)}`);
  }
  const registration = options.hostArrayRegistration;
  if (registration !== undefined && registration !== false) {
    if (typeof registration !== 'object' || registration === null) {
      return err(ErrorCode.InvalidArgument, `CudaBackend: hostArrayRegistration must be false or { minBytes?, copies? }, got ${String(registration)}`);
    }
    const registrationFields = checkOptionFields('CudaBackend: hostArrayRegistration', registration, ['minBytes', 'copies']);
    if (!registrationFields.ok) return registrationFields;
    const { minBytes, copies } = registration;
    if (minBytes !== undefined && (!Number.isSafeInteger(minBytes) || minBytes < 1)) {
      return err(ErrorCode.InvalidArgument, `CudaBackend: hostArrayRegistration.minBytes must be a positive integer number of bytes, got ${String(minBytes)}`);
    }
    if (copies !== undefined && (!Number.isSafeInteger(copies) || copies < 1)) {
      return err(ErrorCode.InvalidArgument, `CudaBackend: hostArrayRegistration.copies must be a positive integer (1 registers at the first copy), got ${String(copies)}`);
    }
  }
  const hostFunctions = options.hostFunctions;
  if (hostFunctions !== undefined && hostFunctions !== 'blocking' && hostFunctions !== 'queued') {
    return err(ErrorCode.InvalidArgument, `CudaBackend: hostFunctions must be 'blocking' or 'queued', got ${String(hostFunctions)}`);
  }
  return OK_VOID;
}
