import { fileURLToPath } from 'node:url';
import { loadAddon, type AddonLoad } from '@hs/native-addon';
import { loadCudaNative } from './load-cuda-native.js';

/**
 * Loads one of the test addons that the build makes beside the CUDA addon and never publishes
 * (`build/hs_cuda_test.node`: the `hs.test.*` kernels; `build/hs_abi_test.node`: a downstream addon of the C
 * ABI and resource tables) from this package's `build/` folder, whichever `hs_cuda.node` is in use (the
 * prebuilt package's or the local build). Never throws.
 * @example
 * ```ts
 * import { loadCudaTestAddon } from '@hs/cuda-native';
 *
 * const abi = loadCudaTestAddon<{ abiVersion(): number }>('hs_abi_test.node'); // a downstream addon of the C ABI
 * console.log(abi.ok ? `loaded ${abi.path}` : `skipped: ${abi.reason}`);
 * ```
 */
export function loadCudaTestAddon<Addon>(file: 'hs_cuda_test.node' | 'hs_abi_test.node'): AddonLoad<Addon> {
  return loadAddon<Addon>({
    name: `test addon ${file}`,
    // dist/index.js or src/cuda-test-addons.ts: the package root is one folder up.
    packageRoot: fileURLToPath(new URL('..', import.meta.url)),
    file: `build/${file}`,
    buildCommand: 'pnpm --filter @hs/cuda-native run build:addon',
    buildRequires: 'the CUDA toolkit (nvcc), cmake and a C++ compiler (the test addons exist in the hs repository only)',
  });
}

/** What `addCudaTestKernels()` did. */
export type CudaTestKernels =
  | {
      /** The test kernels are in the registry. */
      readonly ok: true;
      /** How many this call added (0 when an earlier call already had). */
      readonly added: number;
    }
  | {
      /** The CUDA addon or the test addon is unavailable. */
      readonly ok: false;
      /** Which one, why, and what builds it. */
      readonly reason: string;
    };

/**
 * Adds the `hs.test.*` kernels of the test addon to the CUDA addon's registry (once per thread; a second
 * call adds nothing), for the GPU test suites and the backend conformance suite on CUDA: the published
 * `hs_cuda.node` carries no test kernel. Call it before creating the `CudaBackend` that launches them.
 * Never throws: `{ ok: false, reason }` when either addon is unavailable.
 *
 * @example
 * ```ts
 * import { addCudaTestKernels } from '@hs/cuda-native';
 *
 * const kernels = addCudaTestKernels(); // before creating the CudaBackend that launches them
 * console.log(kernels.ok ? `${kernels.added} hs.test.* kernels registered` : `CUDA kernel tests skipped: ${kernels.reason}`);
 * ```
 */
export function addCudaTestKernels(): CudaTestKernels {
  const cuda = loadCudaNative();
  if (!cuda.ok) return cuda;
  const test = loadCudaTestAddon<{ kernelTable(): object }>('hs_cuda_test.node');
  if (!test.ok) return test;
  return { ok: true, added: cuda.binding.addKernels(test.addon.kernelTable()) };
}
