#!/usr/bin/env node
// prepack: copies the addons the repository's build made (`pnpm build`: packages/cuda-native/build/hs_cuda.node
// and packages/ipc/build/hs_ipc.node) into this package, which publishes them; postpack (`--remove`) deletes
// the copies, so no binary is ever left in the source tree. Packing without both built fails: a platform
// package without its addons would install nothing.
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const addons = [
  { file: 'hs_cuda.node', from: resolve(packageDir, '../cuda-native/build/hs_cuda.node') },
  { file: 'hs_ipc.node', from: resolve(packageDir, '../ipc/build/hs_ipc.node') },
];

for (const { file } of addons) rmSync(join(packageDir, file), { force: true });
if (process.argv.includes('--remove')) process.exit(0);
const missing = addons.filter(({ from }) => !existsSync(from)).map(({ from }) => from);
if (missing.length > 0) {
  console.error(`@hs/native-linux-x64-gnu: cannot pack, ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not built; run \`pnpm build\` with the CUDA toolkit, cmake and a C++ compiler installed`);
  process.exit(1);
}
for (const { file, from } of addons) copyFileSync(from, join(packageDir, file));
console.log(`@hs/native-linux-x64-gnu: copied ${addons.map(({ file }) => file).join(' and ')} into the package for packing`);
