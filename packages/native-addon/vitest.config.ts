import { defineConfig } from 'vitest/config';

// The build-step tests spawn Node processes; on a loaded 2-core CI machine vitest's 5 s default per test
// is too tight for them.
export default defineConfig({ test: { testTimeout: 60_000 } });
