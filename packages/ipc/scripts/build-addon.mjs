#!/usr/bin/env node
// Builds the @hs/ipc addon (C++ only, no CUDA) with cmake-js at install time. It never fails the install:
// without cmake or a C++ compiler, or when the build fails, it prints one line and IPC calls return
// NotSupported at use. `--verbose` streams the build output (pnpm --filter @hs/ipc run build:addon).
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
const say = (text) => console.log(`@hs/ipc: ${text}`);

function which(tool) {
  const r = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

if (process.env.HS_SKIP_NATIVE === '1') {
  say('HS_SKIP_NATIVE=1, the IPC addon was not built; IPC calls return NotSupported.');
  process.exit(0);
}
if (!existsSync(join(packageDir, 'native/CMakeLists.txt')) && !existsSync(join(packageDir, '../../native/ipc/CMakeLists.txt'))) {
  say('the native sources (native/ipc) are missing, the IPC addon was skipped; IPC calls return NotSupported.');
  process.exit(0);
}
if (which('cmake') === null) {
  say('cmake not found, the IPC addon was skipped; IPC calls return NotSupported.');
  process.exit(0);
}
const cxx = process.env.CXX ?? which('c++') ?? which('g++') ?? which('clang++');
if (cxx === null) {
  say('no C++ compiler found, the IPC addon was skipped; IPC calls return NotSupported.');
  process.exit(0);
}

mkdirSync(buildDir, { recursive: true });
const cmakeJs = createRequire(import.meta.url).resolve('cmake-js/bin/cmake-js');
const args = [
  cmakeJs,
  'compile',
  '--directory', packageDir,
  '--out', join(buildDir, 'cmake'),
  '--parallel', String(availableParallelism()),
  `--CDHS_ADDON_OUTPUT_DIR=${buildDir}`,
  '--log-level', 'warn',
];
if (which('ninja') !== null) args.push('--generator', 'Ninja');
const started = Date.now();
const run = spawnSync(process.execPath, args, { cwd: packageDir, encoding: 'utf8', stdio: verbose ? 'inherit' : 'pipe', maxBuffer: 64 * 1024 * 1024 });
if (!verbose) writeFileSync(logFile, `${run.stdout ?? ''}\n${run.stderr ?? ''}`);
const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (run.status === 0 && existsSync(join(buildDir, 'hs_ipc.node'))) {
  say(`built build/hs_ipc.node in ${seconds} s.`);
} else {
  say(`the IPC addon build failed (see ${verbose ? 'the output above' : logFile}); IPC calls return NotSupported.`);
}
