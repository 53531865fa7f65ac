// `@hs/native-addon/build`: building an hs package's addon from source with cmake-js (its install and
// build:addon scripts) and copying the repository's native sources into it for packing (its prepack and
// postpack scripts). Plain CommonJS with no build step, because it runs at `pnpm install`, before any
// package is built, and from both `import` and `require`. The contract, with every line it prints, is in
// build-from-source.d.cts.
'use strict';
const { spawnSync } = require('node:child_process');
const { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { availableParallelism } = require('node:os');
const { join, resolve } = require('node:path');

function which(tool) {
  const found = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', tool], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
}

function startAddonBuild({ packageDir, label, addon, fallback }) {
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

function copyNativeSourcesForPack({ packageDir, label, sources, sourcesName, entries }) {
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

module.exports = { which, startAddonBuild, copyNativeSourcesForPack };
