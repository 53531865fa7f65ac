import { defineConfig } from 'vitest/config';

// The global setup packs every public package once (tarballs shared by all suites); installing them
// into a fresh project and compiling the README examples takes tens of seconds on a 2-core CI machine,
// more while every other package tests at the same time (the bounds are generous, not targets).
export default defineConfig({
  test: {
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
