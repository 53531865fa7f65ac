#!/usr/bin/env node
// prepack: copies the repository's native/ipc sources (CMakeLists.txt, src) into this package's native/
// folder so the packed tarball builds its addon on its own; postpack (`--remove`) deletes the copy again,
// so the monorepo build keeps using ../../native/ipc. The copying is @hs/native-addon's, shared with
// @hs/cuda-native, which packs its sources the same way.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyNativeSourcesForPack } from '@hs/native-addon/build';

copyNativeSourcesForPack({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  label: '@hs/ipc',
  sources: '../../native/ipc',
  sourcesName: 'native/ipc',
  entries: ['CMakeLists.txt', 'src'],
});
