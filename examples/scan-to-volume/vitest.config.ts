import { defineConfig } from 'vitest/config';

// Each end-to-end test runs the whole example (36 grid builds, files written); on a loaded 2-core CI
// machine that takes far more than vitest's 5 s default per test.
export default defineConfig({ test: { testTimeout: 120_000 } });
