import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CudaNativeBinding, RuntimeInfo } from './binding.js';

/** Result of `loadCudaNative()`. */
export type CudaNativeLoad =
  | {
      /** The addon loaded. */
      readonly ok: true;
      /** The typed addon surface. */
      readonly binding: CudaNativeBinding;
      /** Where the addon was loaded from. */
      readonly path: string;
      /** CUDA runtime and driver versions and the device count, from `binding.runtimeInfo()`. */
      readonly runtime: RuntimeInfo;
      /** True when at least one CUDA device is usable. */
      readonly hasDevice: boolean;
      /** `"no device"` with the reason when `hasDevice` is false, else an empty string. */
      readonly deviceProblem: string;
    }
  | {
      /** The addon is not available (not built, or it failed to load). */
      readonly ok: false;
      /** Why the addon is unavailable and what to do about it. */
      readonly reason: string;
    };

let cached: CudaNativeLoad | undefined;

function packageRoot(): string {
  // dist/index.js or src/load-cuda-native.ts: the package root is one folder up.
  return join(dirname(fileURLToPath(import.meta.url)), '..');
}

/**
 * Loads `build/hs_cuda.node` once per thread and reports whether a device is usable. Never throws: a
 * missing or broken addon, or a machine without a driver or GPU, comes back as a value whose text says
 * what to do. `HS_CUDA_NATIVE_PATH` overrides the addon's path.
 *
 * @example
 * ```ts
 * const cuda = loadCudaNative();
 * if (cuda.ok && cuda.hasDevice) console.log(cuda.binding.deviceProperties(0).name);
 * ```
 */
export function loadCudaNative(): CudaNativeLoad {
  if (cached !== undefined) return cached;
  const path = process.env['HS_CUDA_NATIVE_PATH'] || join(packageRoot(), 'build', 'hs_cuda.node');
  if (!existsSync(path)) {
    cached = {
      ok: false,
      reason:
        `the CUDA addon is not built (${path} is missing): install the CUDA toolkit (nvcc) and cmake, then run ` +
        '`pnpm --filter @hs/cuda-native run build:addon`; until then use the host backend',
    };
    return cached;
  }
  let binding: CudaNativeBinding;
  try {
    binding = createRequire(import.meta.url)(path) as CudaNativeBinding;
  } catch (cause) {
    cached = {
      ok: false,
      reason: `the CUDA addon at ${path} failed to load (${(cause as Error).message}); rebuild it with \`pnpm --filter @hs/cuda-native run build:addon\``,
    };
    return cached;
  }
  const runtime = binding.runtimeInfo();
  const hasDevice = runtime.deviceCount > 0;
  cached = {
    ok: true,
    binding,
    path,
    runtime,
    hasDevice,
    deviceProblem: hasDevice ? '' : `no device: ${runtime.statusText}`,
  };
  return cached;
}
