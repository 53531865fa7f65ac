import { defineConfig } from 'vitest/config';

// The fault scenarios wait for bounded stops and drains, and the fast-check suites run many cases; on a
// loaded 2-core CI machine they need more than vitest's 5 s default per test.
export default defineConfig({ test: { testTimeout: 120_000 } });
