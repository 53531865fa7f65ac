#!/usr/bin/env node
// The native tests (this folder's CMakeLists.txt: resource-table, deferred-release, the IPC core) built with
// ASan + UBSan (HS_SANITIZE=ON, LeakSanitizer on at exit) in their own build folder and run with ctest.
// Part of `pnpm test` (through @hs/cuda-native's test script). Without cmake or a C++ compiler it prints
// one line and exits 0; any sanitizer finding or failed assert fails it.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const buildDir = process.env.HS_NATIVE_TESTS_BUILD_DIR ?? resolve(here, '../../packages/cuda-native/build/native-tests-sanitize');
const say = (text) => console.log(`native tests: ${text}`);
const has = (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

if (!has('cmake') || !has('ctest')) {
  say('cmake not found, the ASan/UBSan native tests were skipped.');
  process.exit(0);
}
const compiler = process.env.CXX ?? ['c++', 'g++', 'clang++'].find(has);
if (compiler === undefined) {
  say('no C++ compiler (c++, g++ or clang++) found, the ASan/UBSan native tests were skipped.');
  process.exit(0);
}

const started = Date.now();
const run = (args, env = process.env) => spawnSync(args[0], args.slice(1), { encoding: 'utf8', env, maxBuffer: 64 * 1024 * 1024 });
const generator = has('ninja') ? ['-G', 'Ninja'] : [];
const configure = run(['cmake', '-S', here, '-B', buildDir, ...generator, '-DHS_SANITIZE=ON', '-DCMAKE_BUILD_TYPE=Debug', `-DCMAKE_CXX_COMPILER=${compiler}`]);
const build = configure.status === 0 ? run(['cmake', '--build', buildDir, '--parallel', String(availableParallelism())]) : configure;
if (build.status !== 0) {
  process.stdout.write(`${build.stdout}\n${build.stderr}\n`);
  say('the sanitizer build failed (output above).');
  process.exit(1);
}
const env = {
  ...process.env,
  ASAN_OPTIONS: 'detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1',
  UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1',
  LSAN_OPTIONS: 'exitcode=23',
};
const tests = run(['ctest', '--test-dir', buildDir, '--output-on-failure', '--timeout', '120'], env);
const summary = /(\d+)% tests passed, (\d+) tests failed out of (\d+)/.exec(tests.stdout);
const names = [...tests.stdout.matchAll(/Test\s+#\d+: (\S+) \.+\s+(Passed|\*\*\*Failed|Failed|\S+)/g)].map((m) => `${m[1]} ${m[2] === 'Passed' ? 'ok' : 'FAILED'}`);
const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (tests.status !== 0 || summary === null) {
  process.stdout.write(tests.stdout + tests.stderr);
  say(`FAILED under ASan+UBSan+LSan (${names.join(', ')}) in ${seconds} s.`);
  process.exit(1);
}
say(`${Number(summary[3]) - Number(summary[2])}/${summary[3]} passed under ASan+UBSan, LeakSanitizer clean (${names.join(', ')}) in ${seconds} s.`);
