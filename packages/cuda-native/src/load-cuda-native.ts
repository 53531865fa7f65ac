import { fileURLToPath } from 'node:url';
import { loadAddon, type AddonLoad } from '@hs/native-addon';
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

/** One `CudaNativeLoad` per loaded addon, so every call for the same path returns the same object. */
const withRuntime = new WeakMap<AddonLoad<CudaNativeBinding>, CudaNativeLoad>();

/**
 * Loads `hs_cuda.node` once per thread, from the prebuilt platform package (`@hs/native-linux-x64-gnu`), else
 * from a local build (`build/hs_cuda.node`, made by `npx hs-build-addon cuda`), and reports whether a
 * device is usable. Never throws: a missing or broken addon, or a machine without a driver or GPU, comes
 * back as a value whose text says what to do. `HS_CUDA_NATIVE_PATH` overrides the addon's path.
 *
 * @example
 * ```ts
 * import { loadCudaNative } from '@hs/cuda-native';
 *
 * const cuda = loadCudaNative();
 * if (!cuda.ok) console.log(`no CUDA addon: ${cuda.reason}`);
 * else if (!cuda.hasDevice) console.log(`addon ${cuda.path} loaded, ${cuda.deviceProblem}`);
 * else console.log(`CUDA ${cuda.runtime.runtimeVersion}: ${cuda.binding.deviceProperties(0).name}`);
 * ```
 */
export function loadCudaNative(): CudaNativeLoad {
  const native = loadAddon<CudaNativeBinding>({
    name: 'CUDA addon',
    // dist/index.js or src/load-cuda-native.ts: the package root is one folder up.
    packageRoot: fileURLToPath(new URL('..', import.meta.url)),
    file: 'build/hs_cuda.node',
    prebuilt: 'hs_cuda.node',
    envOverride: 'HS_CUDA_NATIVE_PATH',
    buildCommand: 'npx hs-build-addon cuda',
    buildRequires: 'the CUDA toolkit (nvcc), cmake and a C++ compiler',
    meanwhile: 'until then use the host backend',
  });
  if (!native.ok) return native;
  let load = withRuntime.get(native);
  if (load === undefined) {
    const runtime = native.addon.runtimeInfo();
    const hasDevice = runtime.deviceCount > 0;
    load = { ok: true, binding: native.addon, path: native.path, runtime, hasDevice, deviceProblem: hasDevice ? '' : `no device: ${runtime.statusText}` };
    withRuntime.set(native, load);
  }
  return load;
}
