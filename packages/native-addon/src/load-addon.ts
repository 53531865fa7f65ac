import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** Where an addon lives and how the reasons of `loadAddon()` tell the user to build it. */
export interface AddonSpec {
  /** How the reasons name the addon, after "the": `'CUDA addon'`, `'@hs/ipc addon'`. */
  readonly name: string;
  /** Absolute path of the package folder the addon is built into. */
  readonly packageRoot: string;
  /** The addon's path relative to `packageRoot`: `'build/hs_cuda.node'`. */
  readonly file: string;
  /** An environment variable whose non-empty value is the addon's path instead: `'HS_CUDA_NATIVE_PATH'`. */
  readonly envOverride?: string;
  /** The command that builds the addon: `'pnpm --filter @hs/cuda-native run build:addon'`. */
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
 * Loads a Node-API addon once per path and thread. The path is `spec.envOverride`'s value when that
 * variable is set and not empty, else `spec.file` under `spec.packageRoot`; the first outcome for a path
 * is kept, so every later call returns the same object (a native addon cannot be reloaded in a process:
 * a rebuilt one takes effect in a new process).
 *
 * Never throws: a missing file gives `ok: false` with a reason that names the path and says what to
 * install and which command builds it; a file that `require` rejects (a build for another Node or
 * platform, a missing shared library, not an addon at all) gives `ok: false` with the loader's message,
 * the command that rebuilds it, and the thrown error as `cause`.
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
 *   envOverride: 'HS_IPC_NATIVE_PATH',
 *   buildCommand: 'pnpm --filter @hs/ipc run build:addon',
 *   buildRequires: 'cmake and a C++ compiler',
 * });
 * if (native.ok) console.log(native.addon.abiVersion);
 * else console.log(native.reason); // the @hs/ipc addon is not built (<path> is missing); install cmake and ...
 * ```
 */
export function loadAddon<Addon>(spec: AddonSpec): AddonLoad<Addon> {
  const overridden = spec.envOverride !== undefined && (process.env[spec.envOverride] ?? '') !== '';
  const path = overridden ? process.env[spec.envOverride!]! : join(spec.packageRoot, spec.file);
  const known = loads.get(path);
  if (known !== undefined) return known as AddonLoad<Addon>;
  const load = loadFrom<Addon>(path, spec, overridden);
  loads.set(path, load);
  return load;
}

function loadFrom<Addon>(path: string, spec: AddonSpec, overridden: boolean): AddonLoad<Addon> {
  if (!existsSync(path)) {
    const missing = overridden ? `${path} is missing; ${spec.envOverride} names it` : `${path} is missing`;
    const meanwhile = spec.meanwhile === undefined ? '' : `; ${spec.meanwhile}`;
    return {
      ok: false,
      reason: `the ${spec.name} is not built (${missing}); install ${spec.buildRequires}, then run \`${spec.buildCommand}\`${meanwhile}`,
    };
  }
  try {
    return { ok: true, addon: requireAddon(path) as Addon, path };
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    return { ok: false, reason: `the ${spec.name} at ${path} failed to load (${message}); rebuild it with \`${spec.buildCommand}\``, cause };
  }
}
