// Types and contract of build-from-source.mjs (`@hs/native-addon/build`): build tooling for the
// build:addon, prepack and postpack scripts of a package that ships a cmake-js addon.

/** What `startAddonBuild()` needs to know about the package whose addon it builds. */
export interface AddonPackage {
  /**
   * Absolute path of the package. Its `CMakeLists.txt` is the cmake-js entry, `cmake-js` is resolved from
   * it, else from the current folder (a user's project that added `BUILD_TOOLS`; the package has `"binary":
   * { "napi_versions": [8] }` so that cmake-js needs no download), and the addon and the log go to its
   * `build/` folder.
   */
  readonly packageDir: string;
  /** The package name every printed line starts with: `'@hs/ipc'`. */
  readonly label: string;
  /** What is built, as the lines name it: `'IPC addon'`. */
  readonly addon: string;
  /** What the package does without the addon: `'IPC calls return NotSupported'`. */
  readonly fallback: string;
}

/** One `cmake-js compile` run of `AddonBuild.compile`. */
export interface AddonCompile {
  /** The file the build must leave in `build/`: `'hs_ipc.node'`. */
  readonly output: string;
  /** Extra CMake definitions, `NAME=value` each (passed as `--CDNAME=value`). */
  readonly defines?: readonly string[];
  /** Appended to the success line after the output's name: `' with /usr/local/cuda/bin/nvcc'`. */
  readonly toolchain?: string;
}

/** The steps of one package's addon build; every line printed starts with `<label>: `. */
export interface AddonBuild {
  /** Prints one line. */
  say(text: string): void;
  /**
   * Prints `<reason>, the <addon> was skipped; <fallback>.` and exits the process: with 1, or with 0 when
   * `--optional` is on the command line (the repository's build, which must pass on a machine without the
   * toolchain).
   */
  skip(reason: string): never;
  /**
   * Runs `cmake-js compile` on the package: out of source in `build/cmake`, on every core, Ninja when
   * `ninja` is on the PATH, `HS_ADDON_OUTPUT_DIR` set to `build/`. Prints `built build/<output><toolchain>
   * in <seconds> s.` when cmake-js exits 0 and the output exists, else `the <addon> build failed (see
   * <log>); <fallback>.`. cmake-js's output goes to `build/addon-build.log`, or to this process's output
   * when `--verbose` is on the command line. When cmake-js cannot be resolved it skips with the install line
   * of `BUILD_TOOLS`. A failed build sets exit code 1 (0 with `--optional`); it never throws.
   */
  compile(build: AddonCompile): void;
}

/**
 * Starts the build of one package's addon. With `HS_SKIP_NATIVE=1` it prints `HS_SKIP_NATIVE=1, the
 * <addon> was not built; <fallback>.` and exits with 0 before anything else happens. The caller then
 * checks its own prerequisites (sources, cmake, a compiler), calling `skip` for each that is missing,
 * and calls `compile`.
 * @example
 * ```js
 * import { startAddonBuild, which } from '@hs/native-addon/build';
 * const build = startAddonBuild({ packageDir, label: '@hs/ipc', addon: 'IPC addon', fallback: 'IPC calls return NotSupported' });
 * if (which('cmake') === null) build.skip('cmake not found');
 * build.compile({ output: 'hs_ipc.node' });
 * ```
 */
export function startAddonBuild(addonPackage: AddonPackage): AddonBuild;

/**
 * The build tools a project adds before building from source, pinned: `['cmake-js@8.0.0', ...]` (this
 * package's optional peer dependencies).
 */
export const BUILD_TOOLS: readonly string[];

/** The absolute path of `tool` on the PATH, or null when there is none. */
export function which(tool: string): string | null;

/** What `copyNativeSourcesForPack()` copies, and where from. */
export interface NativeSourcesPack {
  /** Absolute path of the package; the copy goes to its `native/` folder. */
  readonly packageDir: string;
  /** The package name the lines start with: `'@hs/ipc'`. */
  readonly label: string;
  /** The sources folder relative to the package (`'../../native/ipc'`); it holds a CMakeLists.txt. */
  readonly sources: string;
  /** How the lines name that folder: `'native/ipc'`. */
  readonly sourcesName: string;
  /** The files and folders of `sources` to copy. */
  readonly entries: readonly string[];
}

/**
 * prepack: replaces the package's `native/` folder with a copy of `entries` of the repository's native
 * sources, so the packed tarball builds its addon on its own, and prints one line. postpack (`--remove` on
 * the command line): only deletes that copy and exits with 0, so the repository build keeps using the
 * sources in place. When `sources` holds no CMakeLists.txt (packing outside the hs repository) it prints
 * `<label>: cannot pack, the native sources are missing (...)` to stderr and exits with 1.
 */
export function copyNativeSourcesForPack(pack: NativeSourcesPack): void;
