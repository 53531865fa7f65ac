import { defineConfig } from 'vitest/config';

// Several tests spawn the built bin, load Graphviz/Vega or run pipelines and benchmarks end to end: give
// them room on a loaded 2-core CI machine (these are bounds against hangs, not timing assertions).
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
