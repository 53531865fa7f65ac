#!/usr/bin/env node
// Builds the @hs/ipc addon (C++ only, no CUDA) from source with cmake-js into build/: `npx hs-build-addon ipc`
// in a user's project (no install script runs it), the repository's `pnpm build` with `--optional`. Without
// cmake or a C++ compiler, or when the build fails, it prints one line (and exits 1 unless `--optional`);
// IPC calls then return NotSupported at use. `--verbose` streams the build output.
// The build itself is @hs/native-addon's build helper, which @hs/cuda-native's uses too.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAddonBuild, which } from '@hs/native-addon/build';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const build = startAddonBuild({ packageDir, label: '@hs/ipc', addon: 'IPC addon', fallback: 'IPC calls return NotSupported' });
if (!existsSync(join(packageDir, 'native/CMakeLists.txt')) && !existsSync(join(packageDir, '../../native/ipc/CMakeLists.txt'))) {
  build.skip('the native sources (native/ipc) are missing');
}
if (which('cmake') === null) build.skip('cmake not found');
if ((process.env.CXX ?? which('c++') ?? which('g++') ?? which('clang++')) === null) build.skip('no C++ compiler found');
build.compile({ output: 'hs_ipc.node' });
