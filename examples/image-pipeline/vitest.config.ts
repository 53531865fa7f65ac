import { defineConfig } from 'vitest/config';

// The end-to-end runs decode, run and re-encode real images; on a loaded 2-core CI machine they can need
// more than vitest's 5 s default per test (a bound against hangs, not a timing assertion).
export default defineConfig({ test: { testTimeout: 60_000 } });
