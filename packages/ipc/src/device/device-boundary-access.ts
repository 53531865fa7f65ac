import { ErrorCode, err, ok, type Backend, type IpcHandleOperations, type Result, type StreamMemoryOperations } from '@hs/streams';

/** What a device boundary needs of its backend: CUDA IPC handles and 64-bit stream memory operations. */
export interface DeviceBoundaryAccess {
  readonly backend: Backend;
  readonly ipc: IpcHandleOperations;
  readonly memoryOps: StreamMemoryOperations;
}

/**
 * Checks that `backend` can carry a device boundary: it has the `ipc` capability (CUDA IPC of the pool
 * allocation) and `streamMemoryOps` (the generation fence). `NotSupported` otherwise, saying which part
 * is missing and on which backend.
 */
export function deviceBoundaryAccess(backend: Backend, what: string): Result<DeviceBoundaryAccess> {
  const { ipc, streamMemoryOps } = backend;
  if (ipc === undefined) {
    return err(ErrorCode.NotSupported, `${what}: a cudaDevice boundary needs the CUDA backend (CUDA IPC and stream memory operations); this session runs on the ${backend.name} backend`);
  }
  if (streamMemoryOps === undefined) {
    return err(ErrorCode.NotSupported, `${what}: the driver has no 64-bit stream memory operations, which the generation fence needs`);
  }
  return ok({ backend, ipc, memoryOps: streamMemoryOps });
}
