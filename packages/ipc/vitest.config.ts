import { defineConfig } from 'vitest/config';

// Property-based (fast-check) suites run thousands of cases; on a loaded 2-core CI machine they need more
// than vitest's 5 s default per test.
export default defineConfig({ test: { testTimeout: 120_000 } });
