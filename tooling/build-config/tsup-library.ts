import type { Options } from 'tsup';

/** What differs between hs's library packages in their tsup build. */
export interface LibraryBuild {
  /** The package's name: with `testEntry`, the suite imports the package by it (kept external). */
  readonly name: string;
  /** Builds `src/test/index.ts` as the `./test` subpath entry (`dist/test/index.*`). */
  readonly testEntry?: boolean;
}

/**
 * The one tsup configuration of hs's published libraries: ES modules only (Node >= 20.19 loads them from
 * `require()` too, so CommonJS users share the same classes and module state) for Node 20 with
 * declarations and source maps, one self-contained file per entry (no chunk shared between the main entry and a test
 * suite), and a `./test` suite that reaches the package's API by name, so at run time it shares the
 * main entry's classes.
 */
export function libraryBuild({ name, testEntry = false }: LibraryBuild): Options {
  return {
    entry: testEntry ? { index: 'src/index.ts', 'test/index': 'src/test/index.ts' } : { index: 'src/index.ts' },
    format: ['esm'],
    splitting: false,
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
    external: testEntry ? [name] : [],
  };
}
