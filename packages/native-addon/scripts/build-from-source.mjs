// `@hs/native-addon/build`: building an hs package's addon from source with cmake-js (its build:addon
// script, which `npx hs-build-addon` runs in a user's project and the repository's build runs with
// `--optional`) and copying the repository's native sources into it for packing (its prepack and postpack
// scripts). A plain ES module with no build step, because the repository's build runs it before any package
// is built. The contract, with every line it prints, is in build-from-source.d.mts.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';

/** The build tools a user adds to build from source: this package's optional peer dependencies, pinned. */
const ownManifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
export const BUILD_TOOLS = Object.entries(ownManifest.peerDependencies ?? {}).map(([name, version]) => `${name}@${version}`);

export function which(tool) {
  const found = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', tool], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
}

/** cmake-js's bin, resolved from the package being built, then from the current folder (the user's project). */
function resolveCmakeJs(packageDir) {
  for (const from of [join(packageDir, 'package.json'), join(process.cwd(), 'package.json')]) {
    try {
      return createRequire(from).resolve('cmake-js/bin/cmake-js');
    } catch {
      // not installed there
    }
  }
  return null;
}

export function startAddonBuild({ packageDir, label, addon, fallback }) {
  const optional = process.argv.includes('--optional');
  const say = (text) => console.log(`${label}: ${text}`);
  if (process.env.HS_SKIP_NATIVE === '1') {
    say(`HS_SKIP_NATIVE=1, the ${addon} was not built; ${fallback}.`);
    process.exit(0);
  }
  const skip = (reason) => {
    say(`${reason}, the ${addon} was skipped; ${fallback}.`);
    process.exit(optional ? 0 : 1);
  };
  const compile = ({ output, defines = [], toolchain = '' }) => {
    const cmakeJs = resolveCmakeJs(packageDir);
    if (cmakeJs === null) skip(`cmake-js is not installed (add the build tools to your project: npm install --save-dev ${BUILD_TOOLS.join(' ')})`);
    const buildDir = join(packageDir, 'build');
    const logFile = join(buildDir, 'addon-build.log');
    const verbose = process.argv.includes('--verbose');
    mkdirSync(buildDir, { recursive: true });
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
      if (!optional) process.exitCode = 1;
    }
  };
  return { say, skip, compile };
}

export function copyNativeSourcesForPack({ packageDir, label, sources, sourcesName, entries }) {
  const copy = join(packageDir, 'native');
  const from = resolve(packageDir, sources);
  rmSync(copy, { recursive: true, force: true });
  if (process.argv.includes('--remove')) process.exit(0);
  if (!existsSync(join(from, 'CMakeLists.txt'))) {
    console.error(`${label}: cannot pack, the native sources are missing (${from}/CMakeLists.txt); pack from the hs repository`);
    process.exit(1);
  }
  for (const entry of entries) cpSync(join(from, entry), join(copy, entry), { recursive: true });
  console.log(`${label}: copied ${sourcesName} sources into the package for packing`);
}
