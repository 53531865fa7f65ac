import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The conformance suite in src/test imports this package by name; tsconfig `paths` resolve that to the
  // src/index.ts the tests import, so suite and tests share one copy of every class.
  resolve: { tsconfigPaths: true },
  // CI runs every package's tests at once on a 2-core machine; vitest's 5 s default per test is too tight
  // there for tests that spawn processes or run whole graphs.
  test: { testTimeout: 60_000 },
});
