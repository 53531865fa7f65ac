#!/usr/bin/env node
// prepack: copies the repository's native/ipc sources (CMakeLists.txt, src) into this package's native/
// folder so the packed tarball builds its addon on its own; postpack (`--remove`) deletes the copy again,
// so the monorepo build keeps using ../../native/ipc. (The same arrangement as @hs/cuda-native's.)
import { cpSync, existsSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const copy = join(packageDir, 'native');
const sources = resolve(packageDir, '../../native/ipc');

rmSync(copy, { recursive: true, force: true });
if (process.argv.includes('--remove')) process.exit(0);
if (!existsSync(join(sources, 'CMakeLists.txt'))) {
  console.error(`@hs/ipc: cannot pack, the native sources are missing (${sources}/CMakeLists.txt); pack from the hs repository`);
  process.exit(1);
}
for (const entry of ['CMakeLists.txt', 'src']) cpSync(join(sources, entry), join(copy, entry), { recursive: true });
console.log('@hs/ipc: copied native/ipc sources into the package for packing');
