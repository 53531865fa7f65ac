import type { Stream } from '../backend.js';
import { ErrorCode, HsError, unwrap } from '../errors.js';
import { checkOptionFields } from '../option-fields.js';
import type { OrderingCheckerOptions } from '../ordering/ordering-checker.js';
import type { SchedulingMode } from './stream-scheduler.js';

/** Options for `new HostBackend(...)`. */
export interface HostBackendOptions {
  /** Emulated CUDA devices (`cuda:0` … `cuda:N-1`), an integer 0..64; default 1. */
  readonly deviceCount?: number;
  /**
   * `auto` (default): queued work runs on later macrotasks, one batch per `setImmediate`.
   * `manual`: nothing runs until `step()` or `runUntilIdle()` (deterministic tests).
   */
  readonly scheduling?: SchedulingMode;
  /**
   * Seed of the generator that picks which runnable stream runs next (both modes); the same seed and the
   * same calls reproduce the same interleaving. Without a seed, streams run round-robin.
   */
  readonly seed?: number;
  /** Enables the ordering checker (`true` or its options); off by default. */
  readonly orderingChecker?: boolean | OrderingCheckerOptions;
  /**
   * Called when a kernel or host function throws while running on a stream. The error (DeviceError) is
   * the rejection of later `synchronizeStream`/`synchronizeEvent` calls covering that op.
   */
  readonly onFault?: (error: HsError, stream: Stream) => void;
  /**
   * Whether the emulated devices report stream-ordered memory-pool support (`supportsMemoryPools`);
   * default true. Set false to emulate a pool-less device (for example a vGPU without
   * `cudaDevAttrMemoryPoolsSupported`): `allocateAsync` then returns NotSupported.
   */
  readonly memoryPools?: boolean;
  /**
   * Whether the emulated devices reach each other's memory directly (`peerCopy.canAccessPeer`); default
   * true. Set false to emulate GPUs without peer access: copies between devices are then staged.
   */
  readonly peerAccess?: boolean;
}

/** Every field of `HostBackendOptions`. */
const HOST_BACKEND_OPTION_FIELDS = ['deviceCount', 'scheduling', 'seed', 'orderingChecker', 'onFault', 'memoryPools', 'peerAccess'];

/** Largest accepted `deviceCount`. */
const MAX_DEVICES = 64;

/**
 * Checks `new HostBackend(options)`'s options and returns them.
 * @throws HsError InvalidArgument when an option has the wrong type or is out of range, or is not an option (a misspelt field).
 */
export function checkHostBackendOptions(options: HostBackendOptions): HostBackendOptions {
  unwrap(checkOptionFields('HostBackend', options, HOST_BACKEND_OPTION_FIELDS));
  const { deviceCount = 1, scheduling = 'auto', seed, orderingChecker = false, onFault, memoryPools = true, peerAccess = true } = options;
  if (typeof memoryPools !== 'boolean') {
    throw new HsError(ErrorCode.InvalidArgument, `HostBackend: memoryPools must be a boolean, got ${String(memoryPools)}`);
  }
  if (typeof peerAccess !== 'boolean') {
    throw new HsError(ErrorCode.InvalidArgument, `HostBackend: peerAccess must be a boolean, got ${String(peerAccess)}`);
  }
  if (!Number.isInteger(deviceCount) || deviceCount < 0 || deviceCount > MAX_DEVICES) {
    throw new HsError(ErrorCode.InvalidArgument, `HostBackend: deviceCount must be an integer 0..${MAX_DEVICES}, got ${String(deviceCount)}`);
  }
  if (scheduling !== 'auto' && scheduling !== 'manual') {
    throw new HsError(ErrorCode.InvalidArgument, `HostBackend: scheduling must be 'auto' or 'manual', got ${String(scheduling)}`);
  }
  if (seed !== undefined && !Number.isFinite(seed)) {
    throw new HsError(ErrorCode.InvalidArgument, `HostBackend: seed must be a finite number, got ${String(seed)}`);
  }
  if (onFault !== undefined && typeof onFault !== 'function') {
    throw new HsError(ErrorCode.InvalidArgument, 'HostBackend: onFault must be a function');
  }
  if (typeof orderingChecker !== 'boolean' && (typeof orderingChecker !== 'object' || orderingChecker === null)) {
    throw new HsError(ErrorCode.InvalidArgument, `HostBackend: orderingChecker must be true, false or { onViolation?, maxViolations? }, got ${String(orderingChecker)}`);
  }
  if (typeof orderingChecker === 'object') {
    unwrap(checkOptionFields('HostBackend: orderingChecker', orderingChecker, ['onViolation', 'maxViolations']));
    const max = orderingChecker.maxViolations;
    if (max !== undefined && (!Number.isInteger(max) || max < 0)) {
      throw new HsError(ErrorCode.InvalidArgument, `HostBackend: orderingChecker.maxViolations must be a non-negative integer, got ${String(max)}`);
    }
  }
  return options;
}
