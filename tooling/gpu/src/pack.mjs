#!/usr/bin/env node
// Packs what a GPU machine without Node needs into .gpu/ (see docs/.. GPU.md): this machine's node
// binary (xz), each GPU suite and the GPU benchmark bundled into one file (vitest mapped onto
// node:test), and @hs/cuda-native (dist + the built .node file) with @hs/native-addon (dist) where the bundles resolve them.
// Run `pnpm build` first. Then: run tooling/gpu/run-on-device.sh on the device, carrying `.gpu`.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { builtSelfReference } from './built-self-reference.mjs';
import { GPU_PACKED_EXTRAS, GPU_SUITE_FILES } from './gpu-suites.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const out = join(root, '.gpu');

/** The suites that run on the device (src/gpu-suites.mjs, the list test-gpu.mjs and run-on-device.sh read), and what runs next to them. */
export const GPU_ENTRIES = [...GPU_SUITE_FILES, ...GPU_PACKED_EXTRAS];

const missing = GPU_ENTRIES.map((e) => (typeof e === 'string' ? e : e.in)).filter((file) => !existsSync(join(root, file)));
if (missing.length > 0) {
  console.error(`pack: ${missing.join(', ')} listed in tooling/gpu/src/gpu-suites.mjs but missing`);
  process.exit(1);
}

const addon = join(root, 'packages/cuda-native/build/hs_cuda.node');
if (!existsSync(addon)) {
  console.error('pack: packages/cuda-native/build/hs_cuda.node is missing; build it with `pnpm --filter @hs/cuda-native run build:addon`');
  process.exit(1);
}
rmSync(join(out, 'bundles'), { recursive: true, force: true });
mkdirSync(join(out, 'bundles'), { recursive: true });

await build({
  // Two examples have a main.ts: those entries name their bundle.
  entryPoints: GPU_ENTRIES.map((e) => (typeof e === 'string' ? join(root, e) : { in: join(root, e.in), out: e.out })),
  outdir: join(out, 'bundles'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outExtension: { '.js': '.mjs' },
  entryNames: '[name]',
  alias: { vitest: join(here, 'vitest-on-node-test.ts') },
  external: ['@hs/cuda-native'],
  plugins: [builtSelfReference()],
  banner: { js: "import { createRequire as __hsCreateRequire } from 'node:module'; const require = __hsCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});

const nativeDir = join(out, 'bundles/node_modules/@hs/cuda-native');
rmSync(nativeDir, { recursive: true, force: true });
mkdirSync(join(nativeDir, 'build'), { recursive: true });
cpSync(join(root, 'packages/cuda-native/dist'), join(nativeDir, 'dist'), { recursive: true });
copyFileSync(join(root, 'packages/cuda-native/package.json'), join(nativeDir, 'package.json'));
copyFileSync(addon, join(nativeDir, 'build/hs_cuda.node'));
// The test addons (the hs.test.* kernels, the C ABI's downstream addon), which the suites load from there.
for (const testAddon of ['hs_cuda_test.node', 'hs_abi_test.node']) {
  const built = join(root, 'packages/cuda-native/build', testAddon);
  if (existsSync(built)) copyFileSync(built, join(nativeDir, 'build', testAddon));
}
// The external @hs/cuda-native loads its addon through @hs/native-addon, so that package sits beside it.
const loaderDir = join(out, 'bundles/node_modules/@hs/native-addon');
rmSync(loaderDir, { recursive: true, force: true });
cpSync(join(root, 'packages/native-addon/dist'), join(loaderDir, 'dist'), { recursive: true });
copyFileSync(join(root, 'packages/native-addon/package.json'), join(loaderDir, 'package.json'));

// @hs/ipc is bundled into the suites; its addon is found through HS_IPC_NATIVE_PATH (run-on-device.sh).
const ipcAddon = join(root, 'packages/ipc/build/hs_ipc.node');
if (existsSync(ipcAddon)) {
  mkdirSync(join(out, 'bundles/node_modules/@hs/ipc/build'), { recursive: true });
  copyFileSync(ipcAddon, join(out, 'bundles/node_modules/@hs/ipc/build/hs_ipc.node'));
}

const nodeXz = join(out, 'node.xz');
const stamp = join(out, 'node.version');
if (!existsSync(nodeXz) || !existsSync(stamp) || readFileSync(stamp, 'utf8') !== process.version) {
  execFileSync('sh', ['-c', `xz -T2 -6 -c "${process.execPath}" > "${nodeXz}"`]);
  writeFileSync(stamp, process.version);
}
const mib = (p) => (statSync(p).size / 2 ** 20).toFixed(1);
console.log(`pack: .gpu ready (node.xz ${mib(nodeXz)} MiB, addon ${mib(addon)} MiB, ${GPU_ENTRIES.length} bundles)`);
console.log('pack: on the device run `bash tooling/gpu/run-on-device.sh [tests|sanitize|pipeline|bench|all|soak] [--only <suites>] [--sanitize <tools>]` carrying .gpu');
