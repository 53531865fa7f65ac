import { loadCudaAddon } from './load-cuda-binding.js';

/** One CUDA device as `cudaReport()` describes it (`cudaGetDeviceProperties` and capability attributes). */
export interface CudaDeviceProperties {
  /** Device ordinal (`cuda:N`). */
  readonly ordinal: number;
  /** Marketing name, for example `NVIDIA H200`. */
  readonly name: string;
  /** Device memory, bytes. */
  readonly totalGlobalMem: number;
  /** `major.minor`, for example `9.0`. */
  readonly computeCapability: string;
  /** Streaming multiprocessors. */
  readonly multiProcessorCount: number;
  /** PCI bus number. */
  readonly pciBusId: number;
  /** True when stream-ordered allocation (`cudaMallocAsync`, memory pools) works on the device. */
  readonly memoryPoolsSupported: boolean;
  /** Bit mask of `cudaMemAllocationHandleType` the default pool can export (1 POSIX fd, 2 Win32, 4 Win32 KMT, 8 fabric). */
  readonly memoryPoolSupportedHandleTypes: number;
  /** True when interprocess events (`cudaIpcGetEventHandle`) work on the device. */
  readonly ipcEventSupported: boolean;
  /** True when host and device share one virtual address space. */
  readonly unifiedAddressing: boolean;
  /** True when `cudaMallocManaged` works on the device. */
  readonly managedMemory: boolean;
  /** True when host and device may access managed memory at the same time. */
  readonly concurrentManagedAccess: boolean;
  /** True when `cudaHostRegister` works on the device. */
  readonly hostRegisterSupported: boolean;
  /** Numerically largest (lowest) stream priority, usually 0. */
  readonly leastStreamPriority: number;
  /** Numerically smallest (highest) stream priority, for example -5. */
  readonly greatestStreamPriority: number;
}

/** A device whose properties could not be read, with CUDA's words. */
export interface CudaDeviceFault {
  /** Device ordinal (`cuda:N`). */
  readonly ordinal: number;
  /** Why the properties were unreadable. */
  readonly error: string;
}

/**
 * What `cudaReport()` finds: the CUDA addon (where it came from and why not), the CUDA runtime it was built
 * with, the driver, and each visible device. Versions are CUDA's encoding (`13000` is 13.0).
 */
export type CudaReport =
  | {
      /** The addon is not available (the optional package is missing, not built, or failed to load). */
      readonly addon: 'unavailable';
      /** Why, and what to do about it. */
      readonly reason: string;
    }
  | {
      /** The addon loaded. */
      readonly addon: 'loaded';
      /** The `.node` file it was loaded from. */
      readonly path: string;
      /** The addon's binding surface version. */
      readonly abiVersion: number;
      /** `cudaRuntimeGetVersion` of the runtime linked into the addon. */
      readonly runtimeVersion: number;
      /** `cudaDriverGetVersion`; 0 without a driver. */
      readonly driverVersion: number;
      /** CUDA's words for the device query (`cudaSuccess: no error`, or why there is no device). */
      readonly statusText: string;
      /** True when the driver exposes 64-bit stream memory operations (`Backend.streamMemoryOps`). */
      readonly streamMemoryOps: boolean;
      /** One entry per visible device, in ordinal order; empty without a driver or GPU. */
      readonly devices: readonly (CudaDeviceProperties | CudaDeviceFault)[];
    };

/**
 * Describes the CUDA side of this machine without opening a backend (so it also answers where no device
 * is usable): the addon's origin, runtime and driver versions and each device's properties. Never throws;
 * what is missing comes back as a value that says what to do. Used by `hs doctor`.
 *
 * @example
 * ```ts
 * import { cudaReport } from '@hs/streams';
 *
 * const report = cudaReport(); // never throws, needs no GPU
 * if (report.addon === 'loaded') {
 *   console.log(`CUDA runtime ${report.runtimeVersion}, driver ${report.driverVersion}: ${report.statusText}`);
 *   for (const d of report.devices) console.log('error' in d ? `cuda:${d.ordinal}: ${d.error}` : `cuda:${d.ordinal}: ${d.name}, CC ${d.computeCapability}`);
 * } else {
 *   console.log(`no CUDA: ${report.reason}`);
 * }
 * ```
 */
export function cudaReport(): CudaReport {
  const load = loadCudaAddon();
  if (!load.ok) return { addon: 'unavailable', reason: load.reason };
  const { binding, runtime } = load;
  const devices: (CudaDeviceProperties | CudaDeviceFault)[] = [];
  for (let ordinal = 0; ordinal < runtime.deviceCount; ordinal += 1) {
    try {
      devices.push(binding.deviceProperties(ordinal));
    } catch (thrown) {
      devices.push({ ordinal, error: thrown instanceof Error ? thrown.message : String(thrown) });
    }
  }
  return {
    addon: 'loaded',
    path: load.path,
    abiVersion: binding.abiVersion,
    runtimeVersion: runtime.runtimeVersion,
    driverVersion: runtime.driverVersion,
    statusText: runtime.statusText,
    streamMemoryOps: runtime.deviceCount > 0 && binding.streamMemoryOpsSupported(),
    devices,
  };
}
