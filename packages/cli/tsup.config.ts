import { defineConfig } from 'tsup';

// @hs/cli-options (private, never published) is bundled in, so the published manifest does not name it.
export default defineConfig({
  entry: ['src/index.ts', 'src/bin.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  noExternal: ['@hs/cli-options'],
});
