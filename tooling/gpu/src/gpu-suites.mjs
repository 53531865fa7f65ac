#!/usr/bin/env node
// The one list of GPU suites and the one parser of the GPU command lines. Read by `pnpm test:gpu`
// (src/test-gpu.mjs: vitest here), `pnpm pack:gpu` (src/pack.mjs: one bundle per suite) and, on the GPU
// machine, run-on-device.sh (through `node src/gpu-suites.mjs device-args ...`), so the names cannot drift.
// Plain Node, no dependencies: it runs on the device with the packed node binary.
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every GPU suite, repository-relative. A suite's name is its file name without `.test.ts`. */
export const GPU_SUITE_FILES = [
  'packages/cuda-native/test/load-cuda-native.test.ts',
  'packages/cuda-native/test/ipc-two-process.test.ts',
  'packages/streams/test/cuda-backend-conformance.test.ts',
  'packages/streams/test/cuda-backend.test.ts',
  'packages/streams/test/select-backend.test.ts',
  'tooling/gpu/test/pool-conformance-cuda.test.ts',
  'tooling/gpu/test/image-kernels-cuda.test.ts',
  'tooling/gpu/test/c-abi-cuda.test.ts',
  'tooling/gpu/test/dlpack-both-backends.test.ts',
  'tooling/gpu/test/scan-to-volume-cuda.test.ts',
  'tooling/gpu/test/points-to-grid-cuda.test.ts',
  'tooling/gpu/test/native-resource-cuda.test.ts',
  'packages/nanovdb-mr/test/resource-conformance.cuda.test.ts',
  'packages/nanovdb-mr/test/nanovdb/grid-channels.cuda.test.ts',
  'packages/nanovdb-mr/test/nanovdb/point-attributes.cuda.test.ts',
  'packages/nanovdb-mr/test/nanovdb/distributed-points-to-grid.cuda.test.ts',
  'packages/runtime/test/runtime.cuda.test.ts',
  'examples/sensor-fusion/test/sensor-fusion.cuda.test.ts',
  'tooling/reliability/test/cross-process-topics.cuda.test.ts',
  'tooling/reliability/test/soak.cuda.test.ts',
];

/** Packed next to the suites (src/pack.mjs), not suites: an object entry names its bundle. */
export const GPU_PACKED_EXTRAS = [
  // The child process the cross-process suite spawns (found next to the suite's bundle).
  'tooling/reliability/src/topic-process.ts',
  // The hostile peer the cross-process soak runs beside its host topic (`pnpm soak`).
  'tooling/reliability/src/hostile-peer.ts',
  // `pnpm soak`'s report, run on the device by `run-on-device.sh soak`.
  'tooling/reliability/src/soak-cli.ts',
  'tooling/gpu/src/bench-gpu.ts',
  // Two examples have a main.ts: these entries name their bundle (run-on-device.sh pipeline).
  { in: 'examples/image-pipeline/src/main.ts', out: 'image-pipeline' },
  { in: 'examples/scan-to-volume/src/main.ts', out: 'scan-to-volume' },
];

/** The compute-sanitizer tools a GPU run can use (`--sanitize`), in the order `sanitize` runs them. */
export const SANITIZER_TOOLS = ['memcheck', 'racecheck', 'synccheck', 'initcheck'];

/** run-on-device.sh's modes; `all` is tests, sanitize, pipeline and bench (not soak). */
export const DEVICE_MODES = ['tests', 'sanitize', 'pipeline', 'bench', 'all', 'soak'];

/** @param {string} file */
export const suiteName = (file) => basename(file).replace(/\.test\.ts$/, '');

/** The suites: name, repository-relative file, the package folder vitest runs in, the file inside it. */
export const GPU_SUITES = GPU_SUITE_FILES.map((file) => {
  const at = file.indexOf('/test/');
  return { name: suiteName(file), file, packageDir: file.slice(0, at), testFile: file.slice(at + 1) };
});

export const GPU_SUITE_NAMES = GPU_SUITES.map((s) => s.name);

export class UsageError extends Error {}

const TEST_GPU_USAGE = `usage: pnpm test:gpu [--only <suite>[,<suite>...]] [--sanitize <tool>[,<tool>...]]
  --only      run only these suites (default: all)
  --sanitize  run the suites under compute-sanitizer, once per tool, instead of plainly
suites: ${GPU_SUITE_NAMES.join(', ')}
tools: ${SANITIZER_TOOLS.join(', ')}`;

const DEVICE_USAGE = `usage: bash tooling/gpu/run-on-device.sh [<mode>] [--only <suite>[,<suite>...]] [--sanitize <tool>[,<tool>...]]
  <mode>      ${DEVICE_MODES.join(', ')} (default: all)
  --only      run only these suites (suite names after the mode work too)
  --sanitize  the compute-sanitizer tools: \`tests\` runs the suites under them instead of plainly;
              \`sanitize\` and \`all\` use them in place of all four (default: $TOOLS, else all four)
suites: ${GPU_SUITE_NAMES.join(', ')}
tools: ${SANITIZER_TOOLS.join(', ')}`;

/** Splits `a,b c` lists; refuses names not in `valid`, listing the valid ones. */
function namesIn(value, valid, what, flag) {
  const names = value.split(/[\s,]+/).filter((n) => n !== '');
  if (names.length === 0) throw new UsageError(`${flag} needs at least one ${what} name (${what}s: ${valid.join(', ')})`);
  const unknown = names.filter((n) => !valid.includes(n));
  if (unknown.length > 0) throw new UsageError(`unknown ${what}${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')} for ${flag}; valid ${what}s: ${valid.join(', ')}`);
  return names;
}

/**
 * Parses a GPU command line. `device: false` (pnpm test:gpu) takes flags only; `device: true`
 * (run-on-device.sh) also takes a mode first and suite names after it. `env` supplies $TOOLS, the older
 * way to pick run-on-device.sh's sanitizer tools. Throws UsageError with a message naming the valid values.
 * @param {readonly string[]} argv
 * @param {{ device?: boolean, env?: Record<string, string | undefined> }} [options]
 * @returns {{ help: boolean, mode: string | null, only: string[], sanitize: string[], sanitizeGiven: boolean }}
 */
export function parseGpuArgs(argv, { device = false, env = {} } = {}) {
  let mode = null;
  const only = [];
  let sanitize = null;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      const next = argv[++i];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`${flag} needs a value`);
      return next;
    };
    if (flag === '--help' || flag === '-h') help = true;
    else if (flag === '--only') only.push(...namesIn(value(), GPU_SUITE_NAMES, 'suite', '--only'));
    else if (flag === '--sanitize') sanitize = [...(sanitize ?? []), ...namesIn(value(), SANITIZER_TOOLS, 'tool', '--sanitize')];
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${flag}`);
    else if (!device) throw new UsageError(`unexpected argument "${arg}" (suites go after --only)`);
    else if (mode === null && DEVICE_MODES.includes(arg)) mode = arg;
    else if (mode === null && !GPU_SUITE_NAMES.includes(arg)) throw new UsageError(`unknown mode "${arg}"; valid modes: ${DEVICE_MODES.join(', ')}; valid suites: ${GPU_SUITE_NAMES.join(', ')}`);
    else only.push(...namesIn(arg, GPU_SUITE_NAMES, 'suite', 'the suite list'));
  }
  const sanitizeGiven = sanitize !== null;
  if (!sanitizeGiven && device && (env.TOOLS ?? '').trim() !== '') sanitize = namesIn(env.TOOLS, SANITIZER_TOOLS, 'tool', 'TOOLS');
  return { help, mode: device ? (mode ?? 'all') : null, only: [...new Set(only)], sanitize: [...new Set(sanitize ?? [])], sanitizeGiven };
}

/** The usage text of pnpm test:gpu (`device: false`) or run-on-device.sh (`device: true`). */
export const gpuUsage = ({ device = false } = {}) => (device ? DEVICE_USAGE : TEST_GPU_USAGE);

// `node gpu-suites.mjs device-args -- <args>`: run-on-device.sh's parser. Prints bash assignments
// (mode, only, tools, sanitize_given) on stdout, or the reason and the usage on stderr with exit 2.
// `node gpu-suites.mjs names`: the suite names, one a line.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'names') {
    console.log(GPU_SUITE_NAMES.join('\n'));
  } else if (command === 'device-args') {
    try {
      const args = parseGpuArgs(rest[0] === '--' ? rest.slice(1) : rest, { device: true, env: process.env });
      if (args.help) {
        console.error(gpuUsage({ device: true }));
        console.log('help=1');
      } else {
        const tools = args.sanitize.length > 0 ? args.sanitize : SANITIZER_TOOLS;
        // Every value is a validated name: plain words, safe to eval.
        console.log(`mode=${args.mode}\nonly=(${args.only.join(' ')})\ntools=(${tools.join(' ')})\nsanitize_given=${args.sanitizeGiven ? 1 : 0}`);
      }
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      console.error(`run-on-device.sh: ${error.message}\n${gpuUsage({ device: true })}`);
      process.exit(2);
    }
  } else {
    console.error(`usage: node ${basename(dirname(fileURLToPath(import.meta.url)))}/gpu-suites.mjs names | device-args -- <run-on-device.sh arguments>`);
    process.exit(2);
  }
}
