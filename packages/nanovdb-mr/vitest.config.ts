import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The conformance suite in src/test imports this package by name; tsconfig `paths` resolve that to the
  // src/index.ts the tests import, so suite and tests share one copy of every class.
  resolve: { tsconfigPaths: true },
  // Property-based (fast-check) suites run thousands of cases; on a loaded 2-core CI machine they need more
  // than vitest's 5 s default per test.
  test: { testTimeout: 120_000 },
});
