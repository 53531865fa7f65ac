import { defineConfig } from 'tsup';

export default defineConfig({
  // The conformance suite is its own entry (`@hs/nanovdb-mr/test`); the main entry never imports it.
  entry: { index: 'src/index.ts', 'test/index': 'src/test/index.ts' },
  format: ['esm', 'cjs'],
  // One self-contained file per entry: no chunk shared between the main entry and the suite.
  splitting: false,
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // The suite reaches the package's API by name, so at run time it shares the main entry's classes.
  external: ['@hs/nanovdb-mr'],
});
