import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * The platforms hs publishes prebuilt addons for, as `prebuiltPlatform()` names them. Each has a package
 * `@hs/native-<platform>` (with `os`, `cpu` and `libc` set) among the optional dependencies of the addon
 * packages; other platforms build from source with `npx hs-build-addon`.
 * @example
 * ```ts
 * import { PREBUILT_PLATFORMS, prebuiltPlatform } from '@hs/native-addon';
 *
 * const here = prebuiltPlatform();
 * console.log(PREBUILT_PLATFORMS.includes(here) ? `${here}: a prebuilt addon installs` : `${here}: build from source with npx hs-build-addon`);
 * ```
 */
export const PREBUILT_PLATFORMS: readonly string[] = ['linux-x64-gnu'];

/**
 * What the prebuilt addons need of a machine, read from the binaries by the packaging test
 * (`tooling/package-checks`): the newest symbol versions they import, and the NVIDIA driver the static CUDA
 * runtime they carry needs. They link nothing but glibc (libc, libdl, libpthread, libm, librt) and carry
 * libstdc++ and libgcc statically, so no GLIBCXX version applies.
 * @example
 * ```ts
 * import { PREBUILT_FLOORS } from '@hs/native-addon';
 *
 * // what `hs doctor` compares this machine against
 * console.log(`prebuilt addons need glibc >= ${PREBUILT_FLOORS.glibc} and an NVIDIA driver >= ${PREBUILT_FLOORS.nvidiaDriver} (CUDA ${PREBUILT_FLOORS.cuda})`);
 * ```
 */
export const PREBUILT_FLOORS = {
  /** The newest `GLIBC_` symbol version `hs_cuda.node` and `hs_ipc.node` import. */
  glibc: '2.36',
  /** The oldest NVIDIA driver branch the bundled CUDA 13 runtime runs on. */
  nvidiaDriver: '580',
  /** The CUDA runtime version the prebuilt `hs_cuda.node` carries. */
  cuda: '13.0',
} as const;

/** This process's platform, found once: `process.report.getReport()` writes a whole diagnostic report (~ms to 100 ms). */
let platform: string | null = null;

/**
 * This process's platform as hs's prebuilt packages name it: `linux-x64-gnu`, `linux-arm64-gnu`,
 * `linux-x64-musl`, `darwin-arm64`, ... (the C library is named on Linux only: glibc is `gnu`). Found on
 * the first call and remembered: every native call of an addon package looks its addon up through it.
 * @example
 * ```ts
 * import { prebuiltPlatform } from '@hs/native-addon';
 *
 * console.log(`this process runs on ${prebuiltPlatform()}`); // e.g. linux-x64-gnu
 * ```
 */
export function prebuiltPlatform(): string {
  if (platform !== null) return platform;
  if (process.platform !== 'linux') platform = `${process.platform}-${process.arch}`;
  else {
    const header = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header;
    platform = `linux-${process.arch}-${header?.glibcVersionRuntime === undefined ? 'musl' : 'gnu'}`;
  }
  return platform;
}

/**
 * The prebuilt package for this process's platform: `@hs/native-linux-x64-gnu`.
 * @example
 * ```ts
 * import { prebuiltPackage } from '@hs/native-addon';
 *
 * console.log(`the addons of this platform ship in ${prebuiltPackage()}`); // e.g. @hs/native-linux-x64-gnu
 * ```
 */
export function prebuiltPackage(): string {
  return `@hs/native-${prebuiltPlatform()}`;
}

/**
 * The folder of the installed prebuilt package, found the way Node finds a dependency of the package at
 * `packageRoot` (the one that lists it as an optional dependency: the `node_modules` folders of it and its
 * parents, which covers npm's and pnpm's layouts; `NODE_PATH` is not consulted), or `null` with why there is
 * none.
 */
export function findPrebuilt(packageRoot: string): { readonly dir: string } | { readonly dir: null; readonly why: string } {
  const platform = prebuiltPlatform();
  const name = prebuiltPackage();
  if (!PREBUILT_PLATFORMS.includes(platform)) return { dir: null, why: `hs publishes no prebuilt addon for ${platform} yet` };
  for (let dir = packageRoot; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (basename(dir) !== 'node_modules' && existsSync(join(candidate, 'package.json'))) return { dir: candidate };
    if (dirname(dir) === dir) return { dir: null, why: `${name} is not installed (an install that omitted optional dependencies)` };
  }
}
