import { defineConfig } from 'vitest/config';

// The typedoc build converts every public package (tens of seconds on a 2-core CI machine), and each
// example program runs in its own Node process.
export default defineConfig({ test: { testTimeout: 180_000 } });
