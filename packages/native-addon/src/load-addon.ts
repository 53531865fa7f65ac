import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { findPrebuilt, prebuiltPackage } from './prebuilt.js';

/** Where an addon lives and how the reasons of `loadAddon()` tell the user to build it. */
export interface AddonSpec {
  /** How the reasons name the addon, after "the": `'CUDA addon'`, `'@hs/ipc addon'`. */
  readonly name: string;
  /** Absolute path of the package folder the addon is built into (it lists the prebuilt package). */
  readonly packageRoot: string;
  /** The local build's path relative to `packageRoot`: `'build/hs_cuda.node'`. */
  readonly file: string;
  /**
   * The addon's file name in this platform's prebuilt package (`@hs/native-linux-x64-gnu`):
   * `'hs_cuda.node'`. Without it only the local build is tried.
   */
  readonly prebuilt?: string;
  /** An environment variable whose non-empty value is the addon's path instead: `'HS_CUDA_NATIVE_PATH'`. */
  readonly envOverride?: string;
  /** The command that builds the addon from source: `'npx hs-build-addon cuda'`. */
  readonly buildCommand: string;
  /** What to install before building, after "install": `'the CUDA toolkit (nvcc) and cmake'`. */
  readonly buildRequires: string;
  /** What to do meanwhile, the last clause of the not-built reason: `'until then use the host backend'`. */
  readonly meanwhile?: string;
}

/** What `loadAddon()` found: the addon's exports, or why there are none and what to do. */
export type AddonLoad<Addon> =
  | {
      /** The addon loaded. */
      readonly ok: true;
      /** The addon's exports, typed by the caller. */
      readonly addon: Addon;
      /** The path it was loaded from. */
      readonly path: string;
    }
  | {
      /** The file is missing or failed to load. */
      readonly ok: false;
      /** One sentence: what is wrong (naming the path) and the command that fixes it. */
      readonly reason: string;
      /** What `require` threw, when the file was there but did not load. */
      readonly cause?: unknown;
    };

const loads = new Map<string, AddonLoad<unknown>>();
const requireAddon = createRequire(import.meta.url);

/**
 * Loads a Node-API addon once per path and thread, from the first of: the path in `spec.envOverride`'s
 * variable when it is set and not empty (that path only); `spec.prebuilt` in this platform's prebuilt
 * package (`@hs/native-linux-x64-gnu`, an optional dependency of the package at `spec.packageRoot`); the
 * local build, `spec.file` under `spec.packageRoot` (made by `npx hs-build-addon`). The first outcome for a
 * path is kept, so every later call returns the same object (a native addon cannot be reloaded in a
 * process: a rebuilt one takes effect in a new process).
 *
 * Never throws: when nothing loads, `ok: false` with one sentence that says why there is no prebuilt
 * (another platform, or the package not installed), names the missing local build and says what to
 * install and which command builds it; a file that `require` rejects (a build for another Node or
 * platform, a missing shared library, not an addon at all) gives `ok: false` with the loader's message,
 * the command that rebuilds it, and the thrown error as `cause`. A prebuilt that fails to load falls back
 * to the local build, and the reason names both.
 *
 * @example
 * ```ts
 * import { fileURLToPath } from 'node:url';
 * import { loadAddon } from '@hs/native-addon';
 *
 * const native = loadAddon<{ abiVersion: number }>({
 *   name: '@hs/ipc addon',
 *   packageRoot: fileURLToPath(new URL('..', import.meta.url)),
 *   file: 'build/hs_ipc.node',
 *   prebuilt: 'hs_ipc.node',
 *   envOverride: 'HS_IPC_NATIVE_PATH',
 *   buildCommand: 'npx hs-build-addon ipc',
 *   buildRequires: 'cmake and a C++ compiler',
 * });
 * if (native.ok) console.log(native.addon.abiVersion);
 * else console.log(native.reason); // the @hs/ipc addon is not installed (...); to build it from source install cmake and ...
 * ```
 */
export function loadAddon<Addon>(spec: AddonSpec): AddonLoad<Addon> {
  const override = spec.envOverride === undefined ? '' : (process.env[spec.envOverride] ?? '');
  if (override !== '') return loadOnce<Addon>(override, spec, `${override} is missing; ${spec.envOverride} names it`);
  const local = join(spec.packageRoot, spec.file);
  if (spec.prebuilt === undefined) return loadOnce<Addon>(local, spec, `${local} is missing`);
  const prebuilt = findPrebuilt(spec.packageRoot);
  if (prebuilt.dir === null) return loadOnce<Addon>(local, spec, `${prebuilt.why}, and ${local} is missing`);
  const fromPackage = loadOnce<Addon>(join(prebuilt.dir, spec.prebuilt), spec, `${prebuiltPackage()} lacks ${spec.prebuilt}, and ${local} is missing`);
  if (fromPackage.ok || !existsSync(local)) return fromPackage;
  const fromBuild = loadOnce<Addon>(local, spec, '');
  return fromBuild.ok ? fromBuild : { ...fromBuild, reason: `${fromPackage.reason}; ${fromBuild.reason}` };
}

/** Loads `path` once; `missing` says why the addon is not there when the file does not exist. */
function loadOnce<Addon>(path: string, spec: AddonSpec, missing: string): AddonLoad<Addon> {
  const known = loads.get(path);
  if (known !== undefined) return known as AddonLoad<Addon>;
  const load = loadFrom<Addon>(path, spec, missing);
  loads.set(path, load);
  return load;
}

function loadFrom<Addon>(path: string, spec: AddonSpec, missing: string): AddonLoad<Addon> {
  if (!existsSync(path)) {
    const meanwhile = spec.meanwhile === undefined ? '' : `; ${spec.meanwhile}`;
    return {
      ok: false,
      reason: `the ${spec.name} is not installed (${missing}); to build it from source install ${spec.buildRequires}, then run \`${spec.buildCommand}\`${meanwhile}`,
    };
  }
  try {
    return { ok: true, addon: requireAddon(path) as Addon, path };
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    return { ok: false, reason: `the ${spec.name} at ${path} failed to load (${message}); rebuild it from source with \`${spec.buildCommand}\``, cause };
  }
}
