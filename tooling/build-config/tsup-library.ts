import type { Options } from 'tsup';

/** What differs between hs's library packages in their tsup build. */
export interface LibraryBuild {
  /** The package's name: with `testEntry`, the suite imports the package by it (kept external). */
  readonly name: string;
  /** Builds `src/test/index.ts` as the `./test` subpath entry (`dist/test/index.*`). */
  readonly testEntry?: boolean;
  /** Adds tsup's ESM/CJS shims (`import.meta.url`, `__dirname`), for packages that locate files at run time. */
  readonly shims?: boolean;
}

/**
 * The one tsup configuration of hs's published libraries: ESM and CJS for Node 20 with declarations and
 * source maps, one self-contained file per entry (no chunk shared between the main entry and a test
 * suite), and a `./test` suite that reaches the package's API by name, so at run time it shares the
 * main entry's classes.
 */
export function libraryBuild({ name, testEntry = false, shims = false }: LibraryBuild): Options {
  return {
    entry: testEntry ? { index: 'src/index.ts', 'test/index': 'src/test/index.ts' } : { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    splitting: false,
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
    shims,
    external: testEntry ? [name] : [],
  };
}
