// The install-time build of an hs package's native addon with cmake-js, held once for every hs package
// that builds one: @hs/cuda-native (its own scripts/build-addon.mjs) and @hs/ipc (whose install script
// reaches this file through its dependency on @hs/cuda-native; this package publishes scripts/). Build
// tooling, not part of any package's API.
// It never fails the install: HS_SKIP_NATIVE=1, a missing tool and a failed build each print one line,
// prefixed with the package name, that names the addon and what the package does without it, and exit 0.
// `--verbose` on the command line streams cmake-js's output instead of writing build/addon-build.log.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

/** The absolute path of `tool` on PATH, or null when there is none. */
export function which(tool) {
  const r = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/**
 * Starts the install-time build of one package's addon. With HS_SKIP_NATIVE=1 it prints that the addon
 * was not built and exits 0 before anything else happens.
 * @param {object} addon
 * @param {string} addon.packageDir absolute path of the package (its CMakeLists.txt is the cmake-js entry;
 *   cmake-js is resolved from its node_modules; the addon and the log go to its build/ folder)
 * @param {string} addon.label the package name every line starts with (`@hs/ipc`)
 * @param {string} addon.addon what is built, for the lines (`IPC addon`)
 * @param {string} addon.fallback what the package does without the addon (`IPC calls return NotSupported`)
 * @returns {{ say: (text: string) => void, skip: (reason: string) => never, compile: (build: { output: string, defines?: string[], toolchain?: string }) => void }}
 *   `say` prints one line; `skip` prints `<reason>, the <addon> was skipped; <fallback>.` and exits 0;
 *   `compile` runs `cmake-js compile` (Ninja when present, every core; `defines` are extra `NAME=value`
 *   CMake definitions) and prints whether build/`output` was built, naming `toolchain` (` with <nvcc>`)
 *   and the seconds taken, or where the failure's output is.
 */
export function addonInstallBuild({ packageDir, label, addon, fallback }) {
  const say = (text) => console.log(`${label}: ${text}`);
  if (process.env.HS_SKIP_NATIVE === '1') {
    say(`HS_SKIP_NATIVE=1, the ${addon} was not built; ${fallback}.`);
    process.exit(0);
  }
  const skip = (reason) => {
    say(`${reason}, the ${addon} was skipped; ${fallback}.`);
    process.exit(0);
  };
  const compile = ({ output, defines = [], toolchain = '' }) => {
    const buildDir = join(packageDir, 'build');
    const logFile = join(buildDir, 'addon-build.log');
    const verbose = process.argv.includes('--verbose');
    mkdirSync(buildDir, { recursive: true });
    const cmakeJs = createRequire(join(packageDir, 'package.json')).resolve('cmake-js/bin/cmake-js');
    const args = [
      cmakeJs,
      'compile',
      '--directory', packageDir,
      '--out', join(buildDir, 'cmake'),
      '--parallel', String(availableParallelism()),
      ...defines.map((definition) => `--CD${definition}`),
      `--CDHS_ADDON_OUTPUT_DIR=${buildDir}`,
      '--log-level', 'warn',
    ];
    if (which('ninja') !== null) args.push('--generator', 'Ninja');
    const started = Date.now();
    const run = spawnSync(process.execPath, args, { cwd: packageDir, encoding: 'utf8', stdio: verbose ? 'inherit' : 'pipe', maxBuffer: 64 * 1024 * 1024 });
    if (!verbose) writeFileSync(logFile, `${run.stdout ?? ''}\n${run.stderr ?? ''}`);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (run.status === 0 && existsSync(join(buildDir, output))) {
      say(`built build/${output}${toolchain} in ${seconds} s.`);
    } else {
      say(`the ${addon} build failed (see ${verbose ? 'the output above' : logFile}); ${fallback}.`);
    }
  };
  return { say, skip, compile };
}
