#!/usr/bin/env node
// Builds hs_cuda.node from source with cmake-js into build/: `npx hs-build-addon cuda` in a user's project
// (no install script runs it), the repository's `pnpm build` with `--optional` (then a machine without nvcc
// or cmake skips it and still passes). Without nvcc or cmake it skips, and a failed build leaves the log
// behind; each case prints one line, and exits 1 unless `--optional`. A build announces itself in one line
// first (it takes minutes); HS_SKIP_NATIVE=1 skips it. `--verbose` streams the build output.
// The build itself is @hs/native-addon's build helper, which @hs/ipc's uses too.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAddonBuild, which } from '@hs/native-addon/build';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function findNvcc() {
  const candidates = [process.env.CUDACXX, which('nvcc'), process.env.CUDA_HOME && join(process.env.CUDA_HOME, 'bin/nvcc'), '/usr/local/cuda/bin/nvcc'];
  return candidates.find((p) => p && existsSync(p)) ?? null;
}

const build = startAddonBuild({ packageDir, label: '@hs/cuda-native', addon: 'CUDA addon', fallback: 'hs runs on the host backend' });
const inRepository = existsSync(join(packageDir, '../../pnpm-workspace.yaml')) && existsSync(join(packageDir, '../../native/CMakeLists.txt'));
if (!inRepository && !existsSync(join(packageDir, 'native/CMakeLists.txt'))) {
  build.skip('the native sources are missing (no native/CMakeLists.txt in the package)');
}
const nvcc = findNvcc();
if (nvcc === null) build.skip('no CUDA toolkit (nvcc not found)');
if (which('cmake') === null) build.skip('cmake not found');

const cores = availableParallelism();
build.say(`building the CUDA addon with nvcc (a few minutes on ${cores} core${cores === 1 ? '' : 's'}; set HS_SKIP_NATIVE=1 to skip — hs then runs on the host backend)`);
build.compile({ output: 'hs_cuda.node', defines: [`CMAKE_CUDA_COMPILER=${nvcc}`], toolchain: ` with ${nvcc}` });
