import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tooling/build-config/tsup-library.js';

// shims: the loader's createRequire(import.meta.url) in the CommonJS build.
export default defineConfig(libraryBuild({ name: '@hs/native-addon', shims: true }));
