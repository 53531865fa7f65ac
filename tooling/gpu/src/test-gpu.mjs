#!/usr/bin/env node
// `pnpm test:gpu [--only <suites>] [--sanitize <tools>]`: on a machine with a CUDA device and a built
// @hs/cuda-native, runs the GPU suites (src/gpu-suites.mjs: backend and pool conformance on the CUDA backend,
// the kernel, binding and example tests) with vitest. Fails (with the reason) where no device is usable,
// instead of silently skipping. --only picks suites by name; --sanitize runs them under compute-sanitizer
// (`--tool X --error-exitcode 3`), once per tool, with the environment run-on-device.sh gives sanitized runs
// (host functions queued, HS_GPU_SANITIZER=1, HS_GPU_SANITIZER_TOOL=X) instead of plainly.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GPU_SUITES, gpuUsage, parseGpuArgs, UsageError } from './gpu-suites.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
let args;
try {
  args = parseGpuArgs(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(`test:gpu: ${error.message}\n${gpuUsage()}`);
  process.exit(2);
}
if (args.help) {
  console.log(gpuUsage());
  process.exit(0);
}

const { loadCudaNative } = createRequire(import.meta.url)('@hs/cuda-native');
const loaded = loadCudaNative();
if (!loaded.ok || !loaded.hasDevice) {
  console.error(`test:gpu: no usable CUDA device (${loaded.ok ? loaded.deviceProblem : loaded.reason})`);
  process.exit(1);
}

// One vitest run per package folder, in the list's order.
const chosen = args.only.length > 0 ? GPU_SUITES.filter((s) => args.only.includes(s.name)) : GPU_SUITES;
const runs = new Map();
for (const suite of chosen) runs.set(suite.packageDir, [...(runs.get(suite.packageDir) ?? []), suite.testFile]);

/** Each pass: a label, the command prefix and the environment; plain, or one per sanitizer tool. */
const passes =
  args.sanitize.length === 0
    ? [{ label: 'plain', prefix: [], env: {}, vitest: [] }]
    : args.sanitize.map((tool) => ({
        label: `compute-sanitizer --tool ${tool}`,
        prefix: ['compute-sanitizer', '--tool', tool, ...(tool === 'initcheck' ? (process.env.INITCHECK_OPTIONS ?? '').split(/\s+/).filter(Boolean) : []), '--error-exitcode', '3', '--print-limit', '20'],
        // A callback thread waiting for the JS thread deadlocks under the sanitizer's API serialization.
        env: { HS_CUDA_HOST_FUNCTIONS: 'queued', HS_GPU_SANITIZER: '1', HS_GPU_SANITIZER_TOOL: tool },
        // Everything runs several times slower under the sanitizer.
        vitest: ['--testTimeout', '600000', '--hookTimeout', '600000'],
      }));

const failures = [];
for (const pass of passes) {
  for (const [dir, files] of runs) {
    if (passes.length > 1 || pass.prefix.length > 0) console.log(`test:gpu: ${pass.label}: ${dir} (${files.length} suite${files.length > 1 ? 's' : ''})`);
    const command = [...pass.prefix, 'pnpm', 'exec', 'vitest', 'run', ...pass.vitest, ...files];
    const r = spawnSync(command[0], command.slice(1), { cwd: join(root, dir), stdio: 'inherit', env: { ...process.env, ...pass.env } });
    if (r.status !== 0) failures.push(`${pass.label}: ${dir} (${r.error ? r.error.message : `exit ${r.status ?? r.signal}`})`);
  }
}
if (failures.length > 0) console.error(`test:gpu: failed:\n  ${failures.join('\n  ')}`);
process.exit(failures.length > 0 ? 1 : 0);
