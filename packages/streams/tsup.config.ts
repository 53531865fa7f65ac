import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tooling/build-config/tsup-library.js';

// The conformance suite is its own entry (`@hs/streams/test`); the main entry never imports it.
export default defineConfig(libraryBuild({ name: '@hs/streams', testEntry: true }));
