// prepack/postpack for an hs package whose addon's sources live in the repository's native/ tree, held
// once for @hs/cuda-native and @hs/ipc (see cmake-js-addon-build.mjs for how @hs/ipc reaches it). Build
// tooling, not part of any package's API.
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * prepack: copies `entries` of the repository's native sources into the package's native/ folder so the
 * packed tarball builds its addon on its own; with `--remove` on the command line (postpack) it only
 * deletes that copy, so the repository build keeps using the sources in place. Exits 1 with one line when
 * the sources are missing (packing outside the hs repository).
 * @param {object} pack
 * @param {string} pack.packageDir absolute path of the package
 * @param {string} pack.label the package name the lines start with (`@hs/ipc`)
 * @param {string} pack.sources the sources folder relative to the package (`../../native/ipc`); it holds a CMakeLists.txt
 * @param {string} pack.sourcesName how the lines name that folder (`native/ipc`)
 * @param {string[]} pack.entries the files and folders of `sources` to copy
 */
export function copyNativeSourcesForPack({ packageDir, label, sources, sourcesName, entries }) {
  const copy = join(packageDir, 'native');
  const from = resolve(packageDir, sources);
  rmSync(copy, { recursive: true, force: true });
  if (process.argv.includes('--remove')) process.exit(0);
  if (!existsSync(join(from, 'CMakeLists.txt'))) {
    console.error(`${label}: cannot pack, the native sources are missing (${from}/CMakeLists.txt); pack from the hs repository`);
    process.exit(1);
  }
  for (const entry of entries) cpSync(join(from, entry), join(copy, entry), { recursive: true });
  console.log(`${label}: copied ${sourcesName} sources into the package for packing`);
}
