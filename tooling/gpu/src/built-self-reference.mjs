import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * An esbuild plugin for the GPU bundles: a built file of `packages/<dir>/dist` that imports its own
 * package by name (the `./test` conformance entries do) gets that package's built main entry, as Node
 * resolves a self-reference. Without it esbuild applies the package's tsconfig `paths`, which map the
 * name to its source for tsc and vitest, and a bundle would carry the package twice (dist and source),
 * each with its own classes.
 */
export function builtSelfReference() {
  return {
    name: 'built-self-reference',
    setup(build) {
      build.onResolve({ filter: /^@hs\/[^/]+$/ }, (args) => {
        const packageDir = /^(.*[\\/]packages[\\/][^\\/]+)[\\/]dist[\\/]/.exec(args.importer)?.[1];
        if (packageDir === undefined) return undefined;
        const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
        if (manifest.name !== args.path) return undefined;
        return { path: join(packageDir, manifest.exports['.'].default) };
      });
    },
  };
}
