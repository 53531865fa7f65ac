import { defineConfig } from 'vitest/config';

// The typedoc build converts every public package (tens of seconds on a 2-core CI machine), and each
// example program runs in its own Node process; CI runs every package at once on 2 cores, so the bound
// is generous (a bound, not a target: 59 s under a load average of 19).
export default defineConfig({ test: { testTimeout: 300_000 } });
