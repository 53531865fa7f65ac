import { loadCudaNative, type CudaNativeBinding } from '@hs/cuda-native';
import { CudaBackend, ErrorCode, HsError, OK_VOID, err, ok, type Backend, type Result, type Stream } from '@hs/streams';

/** What the device boundary needs from the CUDA layer: the addon and a CUDA backend whose stream handles it can use. */
export interface CudaIpcAccess {
  readonly cuda: CudaNativeBinding;
  readonly backend: CudaBackend;
}

/**
 * Checks that `backend` can carry a device boundary: a `CudaBackend`, the addon loaded with a device,
 * and 64-bit stream memory operations available (the generation fence). `NotSupported` otherwise,
 * saying which part is missing.
 */
export function cudaIpcAccess(backend: Backend, what: string): Result<CudaIpcAccess> {
  if (!(backend instanceof CudaBackend)) {
    return err(ErrorCode.NotSupported, `${what}: a cudaDevice boundary needs the CUDA backend (CUDA IPC and stream memory operations); this session runs on the ${backend.name} backend`);
  }
  const loaded = loadCudaNative();
  if (!loaded.ok) return err(ErrorCode.NotSupported, `${what}: ${loaded.reason}`);
  if (!loaded.hasDevice) return err(ErrorCode.NotSupported, `${what}: ${loaded.deviceProblem}`);
  if (!loaded.binding.streamMemoryOpsSupported()) {
    return err(ErrorCode.NotSupported, `${what}: the driver has no 64-bit stream memory operations, which the generation fence needs`);
  }
  return ok({ cuda: loaded.binding, backend });
}

/**
 * Turns a CUresult of a stream memory operation into a Result: 0 is success, anything else
 * `DeviceError` naming the operation, the slot and the value.
 */
export function memoryOpResult(status: number, what: string): Result<void> {
  return status === 0 ? OK_VOID : err(ErrorCode.DeviceError, `${what} failed with CUresult ${status}`);
}

/** The native `cudaStream_t` of `stream`, or the backend's error for a foreign or destroyed stream. */
export function nativeStreamOf(access: CudaIpcAccess, stream: Stream): Result<bigint> {
  try {
    return ok(access.backend.nativeStream(stream));
  } catch (thrown) {
    if (thrown instanceof HsError) return { ok: false, error: thrown };
    return err(ErrorCode.InvalidArgument, `stream ${stream.label} is not a live stream of this CUDA backend: ${(thrown as Error).message}`, thrown);
  }
}
