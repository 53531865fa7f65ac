// The test helpers are their own entry (`@hs/runtime/test`); the main entry never imports them.
import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tooling/build-config/tsup-library.js';

export default defineConfig(libraryBuild({ name: '@hs/runtime', testEntry: true }));
