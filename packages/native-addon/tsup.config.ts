import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tooling/build-config/tsup-library.js';

export default defineConfig(libraryBuild({ name: '@hs/native-addon' }));
