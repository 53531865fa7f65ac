import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tooling/build-config/tsup-library.js';

// The conformance suite is its own entry (`@hs/nanovdb-mr/test`); the main entry never imports it.
export default defineConfig(libraryBuild({ name: '@hs/nanovdb-mr', testEntry: true }));
