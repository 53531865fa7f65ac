#!/usr/bin/env node
// Builds the native addon with cmake-js at install time. It never fails the install: without nvcc or
// cmake it skips the addon, and a failed build leaves the log behind; each case prints one line. A build
// announces itself in one line first (it takes minutes); HS_SKIP_NATIVE=1 skips it.
// `--verbose` streams the build output (pnpm --filter @hs/cuda-native run build:addon).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const buildDir = join(packageDir, 'build');
const logFile = join(buildDir, 'addon-build.log');
const verbose = process.argv.includes('--verbose');
const say = (text) => console.log(`@hs/cuda-native: ${text}`);

function which(tool) {
  const r = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function findNvcc() {
  const candidates = [process.env.CUDACXX, which('nvcc'), process.env.CUDA_HOME && join(process.env.CUDA_HOME, 'bin/nvcc'), '/usr/local/cuda/bin/nvcc'];
  return candidates.find((p) => p && existsSync(p)) ?? null;
}

if (process.env.HS_SKIP_NATIVE === '1') {
  say('HS_SKIP_NATIVE=1, the CUDA addon was not built; hs runs on the host backend.');
  process.exit(0);
}
const inRepository = existsSync(join(packageDir, '../../pnpm-workspace.yaml')) && existsSync(join(packageDir, '../../native/CMakeLists.txt'));
if (!inRepository && !existsSync(join(packageDir, 'native/CMakeLists.txt'))) {
  say('the native sources are missing (no native/CMakeLists.txt in the package), the CUDA addon was skipped; hs runs on the host backend.');
  process.exit(0);
}
const nvcc = findNvcc();
if (nvcc === null) {
  say('no CUDA toolkit (nvcc not found), the CUDA addon was skipped; hs runs on the host backend.');
  process.exit(0);
}
const cmake = which('cmake');
if (cmake === null) {
  say('cmake not found, the CUDA addon was skipped; hs runs on the host backend.');
  process.exit(0);
}

mkdirSync(buildDir, { recursive: true });
const cores = availableParallelism();
const cmakeJs = createRequire(import.meta.url).resolve('cmake-js/bin/cmake-js');
const args = [
  cmakeJs,
  'compile',
  '--directory', packageDir,
  '--out', join(buildDir, 'cmake'),
  '--parallel', String(cores),
  `--CDCMAKE_CUDA_COMPILER=${nvcc}`,
  `--CDHS_ADDON_OUTPUT_DIR=${buildDir}`,
  '--log-level', 'warn',
];
if (which('ninja') !== null) args.push('--generator', 'Ninja');
say(`building the CUDA addon with nvcc (a few minutes on ${cores} core${cores === 1 ? '' : 's'}; set HS_SKIP_NATIVE=1 to skip — hs then runs on the host backend)`);
const started = Date.now();
const run = spawnSync(process.execPath, args, { cwd: packageDir, encoding: 'utf8', stdio: verbose ? 'inherit' : 'pipe', maxBuffer: 64 * 1024 * 1024 });
if (!verbose) writeFileSync(logFile, `${run.stdout ?? ''}\n${run.stderr ?? ''}`);
const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (run.status === 0 && existsSync(join(buildDir, 'hs_cuda.node'))) {
  say(`built build/hs_cuda.node with ${nvcc} in ${seconds} s.`);
} else {
  say(`the CUDA addon build failed (see ${verbose ? 'the output above' : logFile}); hs runs on the host backend.`);
}
