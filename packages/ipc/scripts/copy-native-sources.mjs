#!/usr/bin/env node
// prepack: copies the repository's native/ipc sources (CMakeLists.txt, src) into this package's native/
// folder so the packed tarball builds its addon on its own; postpack (`--remove`) deletes the copy again,
// so the monorepo build keeps using ../../native/ipc. The copying is @hs/cuda-native's
// scripts/native-sources-for-pack.mjs (a dependency of this package), which packs its sources the same way.
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const cudaNativeDir = dirname(createRequire(import.meta.url).resolve('@hs/cuda-native/package.json'));
const { copyNativeSourcesForPack } = await import(pathToFileURL(join(cudaNativeDir, 'scripts/native-sources-for-pack.mjs')).href);

copyNativeSourcesForPack({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  label: '@hs/ipc',
  sources: '../../native/ipc',
  sourcesName: 'native/ipc',
  entries: ['CMakeLists.txt', 'src'],
});
