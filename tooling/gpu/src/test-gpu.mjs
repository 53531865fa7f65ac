#!/usr/bin/env node
// `pnpm test:gpu`: on a machine with a CUDA device and a built @hs/cuda-native, runs the backend and
// pool conformance suites on the CUDA backend and the other GPU tests with vitest. Fails (with the
// reason) where no device is usable, instead of silently skipping.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const { loadCudaNative } = createRequire(import.meta.url)('@hs/cuda-native');
const loaded = loadCudaNative();
if (!loaded.ok || !loaded.hasDevice) {
  console.error(`test:gpu: no usable CUDA device (${loaded.ok ? loaded.deviceProblem : loaded.reason})`);
  process.exit(1);
}
const runs = [
  ['packages/cuda-native', ['test/load-cuda-native.test.ts', 'test/ipc-two-process.test.ts']],
  ['packages/streams', ['test/cuda-backend-conformance.test.ts', 'test/cuda-backend.test.ts', 'test/select-backend.test.ts']],
  ['tooling/gpu', ['test/pool-conformance-cuda.test.ts', 'test/image-kernels-cuda.test.ts', 'test/c-abi-cuda.test.ts', 'test/dlpack-both-backends.test.ts', 'test/points-to-grid-cuda.test.ts', 'test/native-resource-cuda.test.ts', 'test/scan-to-volume-cuda.test.ts']],
  ['tooling/reliability', ['test/soak.cuda.test.ts']],
];
let failed = false;
for (const [dir, files] of runs) {
  const r = spawnSync('pnpm', ['exec', 'vitest', 'run', ...files], { cwd: join(root, dir), stdio: 'inherit' });
  failed ||= r.status !== 0;
}
process.exit(failed ? 1 : 0);
