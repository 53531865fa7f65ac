#!/usr/bin/env node
// prepack: copies the repository's native/ sources (CMakeLists.txt, src, include, test-addon) into this
// package's native/ folder so the packed tarball builds on its own; postpack (`--remove`) deletes the
// copy again, so the monorepo build keeps using ../../native. The copying is @hs/native-addon's, shared with @hs/ipc.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyNativeSourcesForPack } from '@hs/native-addon/build';

copyNativeSourcesForPack({
  packageDir: resolve(dirname(fileURLToPath(import.meta.url)), '..'),
  label: '@hs/cuda-native',
  sources: '../../native',
  sourcesName: 'native/',
  entries: ['CMakeLists.txt', 'README.md', 'include', 'src', 'test-addon'],
});
