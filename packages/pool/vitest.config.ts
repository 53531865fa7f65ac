import { defineConfig } from 'vitest/config';

// CI runs every package's tests at once on a 2-core machine; vitest's 5 s default per test is too tight
// there for tests that spawn processes or run whole graphs.
export default defineConfig({ test: { testTimeout: 60_000 } });
