import { defineConfig } from 'vitest/config';

// The manual-clock run steps 5 300 timers; on a loaded 2-core CI machine that can need more than
// vitest's 5 s default per test (a bound against hangs, not a timing assertion).
export default defineConfig({ test: { testTimeout: 60_000 } });
