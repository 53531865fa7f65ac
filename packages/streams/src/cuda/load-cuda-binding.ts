import type { CudaNativeBinding, CudaNativeLoad, ResourceStatus } from '@hs/cuda-native';
import { createRequire } from 'node:module';
import { ErrorCode, err, ok, type Result } from '../errors.js';

/** `loadCudaNative()`'s answer when the addon loaded, with the package's status codes of native resource tables. */
export type LoadedCudaAddon = CudaNativeLoad & { readonly ok: true; readonly resourceStatus: typeof ResourceStatus };

let addon: LoadedCudaAddon | (CudaNativeLoad & { ok: false }) | undefined;
let backend: Result<LoadedCudaAddon> | undefined;

/**
 * Loads `@hs/cuda-native` lazily (a `require` at first use, so `@hs/streams` works without the optional
 * package) and returns its load answer: the addon, or why it is unavailable and what to do. Never throws.
 * This is the only place hs loads the CUDA package.
 */
export function loadCudaAddon(): LoadedCudaAddon | (CudaNativeLoad & { ok: false }) {
  if (addon !== undefined) return addon;
  try {
    const native = createRequire(import.meta.url)('@hs/cuda-native') as { loadCudaNative: () => CudaNativeLoad; ResourceStatus: typeof ResourceStatus };
    const load = native.loadCudaNative();
    addon = load.ok ? { ...load, resourceStatus: native.ResourceStatus } : load;
  } catch (cause) {
    addon = { ok: false, reason: `the optional package @hs/cuda-native could not be loaded (${(cause as Error).message}); install it or use the host backend` };
  }
  return addon;
}

/**
 * The addon, checked to see a usable CUDA device (what the CUDA backend needs). NotSupported, with what
 * to do, when the package is missing, the addon is not built, or there is no device.
 */
export function loadCudaBinding(): Result<LoadedCudaAddon> {
  if (backend !== undefined) return backend;
  const load = loadCudaAddon();
  if (!load.ok) backend = err(ErrorCode.NotSupported, `the CUDA backend is unavailable: ${load.reason}`);
  else if (!load.hasDevice) backend = err(ErrorCode.NotSupported, `the CUDA backend is unavailable: ${load.deviceProblem}; use the host backend`);
  else backend = ok(load);
  return backend;
}

/** The loaded binding; only valid after `loadCudaAddon()` succeeded. */
export type { CudaNativeBinding };
