export { ErrorCode, HsError, OK_VOID, ok, err, errWithContext, unwrap } from './errors.js';
export type { Ok, Err, Result } from './errors.js';
export { checkOptionFields } from './option-fields.js';
export { fileSystemError, type FileSystemAction } from './file-system-error.js';
export { leakCounts, leakTracker, type LeakRecord, type LeakTracker } from './leak-report.js';
export { MemoryKind, MEMORY_KINDS, isHostAccessible, isDeviceAccessible, requiresCudaDevice, parseMemoryKind } from './memory-kind.js';
export { Device, DeviceType } from './device.js';
export type {
  Backend,
  Stream,
  Event,
  DeviceMemory,
  MemoryRange,
  AllocationRequest,
  HostMemoryAdoption,
  HostFuncOptions,
  DeviceMemoryAdoption,
  KernelLaunch,
  StreamOptions,
  EventOptions,
} from './backend.js';
export type { StreamMemoryOperations, IpcHandleOperations, IpcMemoryImport, NativeMemoryTable, PeerCopyOperations, PeerCopyPath } from './backend-capabilities.js';
export { HostBackend } from './host/host-backend.js';
export type { HostBackendOptions } from './host/host-backend-options.js';
export type { SchedulingMode } from './host/stream-scheduler.js';
export type { OrderingChecker, OrderingCheckerOptions } from './ordering/ordering-checker.js';
export type { OrderingViolation, OrderingAccess, OrderingHazard } from './ordering/ordering-violation.js';
export { CudaBackend } from './cuda/cuda-backend.js';
export type { CudaBackendOptions } from './cuda/cuda-backend.js';
export type { HostArrayRegistrationStats } from './cuda/host-array-registrations.js';
export type { NativeTensorSource } from './cuda/cuda-native-tensors.js';
export { cudaReport } from './cuda/cuda-report.js';
export type { CudaReport, CudaDeviceProperties, CudaDeviceFault } from './cuda/cuda-report.js';
export { selectBackend } from './select-backend.js';
export type { BackendName, SelectBackendOptions } from './select-backend.js';
export {
  checkOutputFolder,
  createStagingFile,
  writeFileAtomic,
  writeFileAtomicSync,
  openExclusive,
  openRegularFile,
  readRegularFile,
  readRegularFileSync,
  removeStaleStaging,
  STAGING_SUFFIX,
  type SafeWriteOptions,
  type ReadRegularFileOptions,
  type StagingFile,
  type RegularFile,
} from './safe-files.js';
