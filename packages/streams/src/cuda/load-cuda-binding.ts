import type { CudaNativeBinding, CudaNativeLoad } from '@hs/cuda-native';
import { createRequire } from 'node:module';
import { ErrorCode, err, ok, type Result } from '../errors.js';

let cached: Result<CudaNativeLoad & { ok: true }> | undefined;

/**
 * Loads `@hs/cuda-native` lazily (a `require` at first use, so `@hs/streams` works without it) and
 * checks that a CUDA device is usable. NotSupported, with what to do, when the package is missing, the
 * addon is not built, or there is no device.
 */
export function loadCudaBinding(): Result<CudaNativeLoad & { ok: true }> {
  if (cached !== undefined) return cached;
  let load: CudaNativeLoad;
  try {
    const native = createRequire(import.meta.url)('@hs/cuda-native') as { loadCudaNative: () => CudaNativeLoad };
    load = native.loadCudaNative();
  } catch (cause) {
    cached = err(
      ErrorCode.NotSupported,
      `the CUDA backend needs the optional package @hs/cuda-native, which could not be loaded (${(cause as Error).message}); install it or use the host backend`,
    );
    return cached;
  }
  if (!load.ok) cached = err(ErrorCode.NotSupported, `the CUDA backend is unavailable: ${load.reason}`);
  else if (!load.hasDevice) cached = err(ErrorCode.NotSupported, `the CUDA backend is unavailable: ${load.deviceProblem}; use the host backend`);
  else cached = ok(load);
  return cached;
}

/** The loaded binding; only valid after `loadCudaBinding()` succeeded. */
export type { CudaNativeBinding };
