export { ErrorCode, HsError, OK_VOID, ok, err, unwrap } from './errors.js';
export type { Ok, Err, Result } from './errors.js';
export { MemoryKind, MEMORY_KINDS, isHostAccessible, isDeviceAccessible, requiresCudaDevice, parseMemoryKind } from './memory-kind.js';
export { Device, DeviceType } from './device.js';
export type {
  Backend,
  Stream,
  Event,
  DeviceMemory,
  MemoryRange,
  AllocationRequest,
  KernelLaunch,
  StreamOptions,
  EventOptions,
} from './backend.js';
