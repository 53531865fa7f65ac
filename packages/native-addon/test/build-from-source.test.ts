import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BUILD_TOOLS, which } from '../scripts/build-from-source.mjs';

const helper = pathToFileURL(resolve(dirname(fileURLToPath(import.meta.url)), '../scripts/build-from-source.mjs')).href;
const ADDON = { label: '@hs/demo', addon: 'demo addon', fallback: 'demo runs without it' };

/**
 * A throwaway package with a fake cmake-js (it records its arguments, prints one line, then fails, or
 * writes `build/demo.node` and exits 0 when FAKE_CMAKE_JS=succeed) and a PATH holding only `sh`, plus
 * `ninja` when asked: the build helper runs end to end without compiling.
 */
function fakePackage({ ninja = false } = {}): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), 'hs-build-from-source-'));
  writeFileSync(join(dir, 'package.json'), '{"name":"@hs/demo","version":"0.0.0"}');
  mkdirSync(join(dir, 'node_modules', 'cmake-js', 'bin'), { recursive: true });
  writeFileSync(join(dir, 'node_modules', 'cmake-js', 'package.json'), '{"name":"cmake-js","version":"0.0.0"}');
  writeFileSync(
    join(dir, 'node_modules', 'cmake-js', 'bin', 'cmake-js'),
    [
      "const fs = require('node:fs');",
      `fs.writeFileSync(${JSON.stringify(join(dir, 'cmake-js-args.json'))}, JSON.stringify(process.argv.slice(2)));`,
      "console.log('fake cmake-js ran');",
      `if (process.env.FAKE_CMAKE_JS === 'succeed') fs.writeFileSync(${JSON.stringify(join(dir, 'build', 'demo.node'))}, '');`,
      "else process.exit(2);",
    ].join('\n'),
  );
  mkdirSync(join(dir, 'bin'));
  symlinkSync(which('sh')!, join(dir, 'bin', 'sh'));
  if (ninja) {
    writeFileSync(join(dir, 'bin', 'ninja'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(dir, 'bin', 'ninja'), 0o755);
  }
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: join(dir, 'bin') };
  delete env['HS_SKIP_NATIVE'];
  // pnpm's scripts set NODE_PATH to the workspace's hoisted packages, where the real cmake-js is.
  delete env['NODE_PATH'];
  return { dir, env };
}

/** Runs `body` (ES module code with `startAddonBuild`, `copyNativeSourcesForPack` and `dir` in scope) in a fresh Node. */
function runIn(dir: string, env: NodeJS.ProcessEnv, body: string, args: string[] = []): { status: number | null; lines: string[]; stderr: string } {
  const code = `import { startAddonBuild, copyNativeSourcesForPack } from ${JSON.stringify(helper)};\nconst dir = ${JSON.stringify(dir)};\n${body}`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code, '--', ...args], { cwd: dir, env, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, lines: r.stdout.split('\n').filter((l) => l !== ''), stderr: r.stderr };
}

const START = `const build = startAddonBuild({ packageDir: dir, ...${JSON.stringify(ADDON)} });`;

describe('startAddonBuild', () => {
  it('HS_SKIP_NATIVE=1 prints one line and exits 0 before any step', () => {
    const { dir, env } = fakePackage();
    const r = runIn(dir, { ...env, HS_SKIP_NATIVE: '1' }, `${START}\nbuild.say('not reached');\nbuild.compile({ output: 'demo.node' });`);
    expect(r).toMatchObject({ status: 0, lines: ['@hs/demo: HS_SKIP_NATIVE=1, the demo addon was not built; demo runs without it.'] });
    expect(existsSync(join(dir, 'build'))).toBe(false);
    expect(existsSync(join(dir, 'cmake-js-args.json'))).toBe(false);
  });

  it('skip prints the reason, the addon and the fallback in one line and exits 1, or 0 with --optional', () => {
    const { dir, env } = fakePackage();
    const body = `${START}\nbuild.say('checking');\nbuild.skip('cmake not found');\nbuild.say('not reached');`;
    const lines = ['@hs/demo: checking', '@hs/demo: cmake not found, the demo addon was skipped; demo runs without it.'];
    expect(runIn(dir, env, body)).toMatchObject({ status: 1, lines });
    expect(runIn(dir, env, body, ['--optional'])).toMatchObject({ status: 0, lines });
  });

  it('compile skips with the install line of the build tools when cmake-js is not installed', () => {
    const { dir, env } = fakePackage();
    rmSync(join(dir, 'node_modules'), { recursive: true });
    const r = runIn(dir, env, `${START}\nbuild.compile({ output: 'demo.node' });`);
    expect(BUILD_TOOLS).toEqual(['cmake-js@8.0.0', 'node-addon-api@8.9.2']);
    expect(r).toMatchObject({
      status: 1,
      lines: [`@hs/demo: cmake-js is not installed (add the build tools to your project: npm install --save-dev ${BUILD_TOOLS.join(' ')}), the demo addon was skipped; demo runs without it.`],
    });
  });

  it('compile runs cmake-js compile on the package with the definitions, logs its output and reports a failure with exit code 1 (0 with --optional)', () => {
    const { dir, env } = fakePackage();
    const r = runIn(dir, env, `${START}\nbuild.compile({ output: 'demo.node', defines: ['FOO=1', 'BAR=two words'] });`);
    expect(r.status).toBe(1);
    expect(JSON.parse(readFileSync(join(dir, 'cmake-js-args.json'), 'utf8'))).toEqual([
      'compile',
      '--directory', dir,
      '--out', join(dir, 'build', 'cmake'),
      '--parallel', String(availableParallelism()),
      '--CDFOO=1',
      '--CDBAR=two words',
      `--CDHS_ADDON_OUTPUT_DIR=${join(dir, 'build')}`,
      '--log-level', 'warn',
    ]);
    const log = join(dir, 'build', 'addon-build.log');
    expect(r.lines).toEqual([`@hs/demo: the demo addon build failed (see ${log}); demo runs without it.`]);
    expect(readFileSync(log, 'utf8')).toContain('fake cmake-js ran');
    expect(runIn(dir, env, `${START}\nbuild.compile({ output: 'demo.node' });`, ['--optional']).status).toBe(0);
  });

  it('compile uses Ninja when ninja is on the PATH', () => {
    const { dir, env } = fakePackage({ ninja: true });
    runIn(dir, env, `${START}\nbuild.compile({ output: 'demo.node' });`);
    expect(JSON.parse(readFileSync(join(dir, 'cmake-js-args.json'), 'utf8')).slice(-2)).toEqual(['--generator', 'Ninja']);
  });

  it('compile reports the built output with the toolchain and the time taken', () => {
    const { dir, env } = fakePackage();
    const r = runIn(dir, { ...env, FAKE_CMAKE_JS: 'succeed' }, `${START}\nbuild.compile({ output: 'demo.node', toolchain: ' with fake-cc' });`);
    expect(r.status).toBe(0);
    expect(r.lines).toEqual([expect.stringMatching(/^@hs\/demo: built build\/demo\.node with fake-cc in \d+\.\d s\.$/)]);
  });

  it('--verbose streams cmake-js output instead of writing the log', () => {
    const { dir, env } = fakePackage();
    const r = runIn(dir, env, `${START}\nbuild.compile({ output: 'demo.node' });`, ['--verbose']);
    expect(r.lines).toEqual(['fake cmake-js ran', '@hs/demo: the demo addon build failed (see the output above); demo runs without it.']);
    expect(existsSync(join(dir, 'build', 'addon-build.log'))).toBe(false);
  });
});

describe('copyNativeSourcesForPack', () => {
  function repository(): { dir: string; env: NodeJS.ProcessEnv; pack: string } {
    const { dir, env } = fakePackage();
    mkdirSync(join(dir, 'sources', 'src'), { recursive: true });
    writeFileSync(join(dir, 'sources', 'CMakeLists.txt'), 'project(demo)');
    writeFileSync(join(dir, 'sources', 'src', 'demo.cc'), '// demo');
    writeFileSync(join(dir, 'sources', 'notes.txt'), 'not copied');
    const pack = `copyNativeSourcesForPack({ packageDir: dir, label: '@hs/demo', sources: 'sources', sourcesName: 'native/demo', entries: ['CMakeLists.txt', 'src'] });`;
    return { dir, env, pack };
  }

  it('copies the listed entries into native/ for packing and --remove deletes the copy', () => {
    const { dir, env, pack } = repository();
    expect(runIn(dir, env, pack)).toMatchObject({ status: 0, lines: ['@hs/demo: copied native/demo sources into the package for packing'] });
    expect(readFileSync(join(dir, 'native', 'src', 'demo.cc'), 'utf8')).toBe('// demo');
    expect(existsSync(join(dir, 'native', 'CMakeLists.txt'))).toBe(true);
    expect(existsSync(join(dir, 'native', 'notes.txt'))).toBe(false);
    expect(runIn(dir, env, pack, ['--remove'])).toMatchObject({ status: 0, lines: [] });
    expect(existsSync(join(dir, 'native'))).toBe(false);
  });

  it('exits 1 with one line when the sources are missing', () => {
    const { dir, env } = fakePackage();
    const r = runIn(dir, env, `copyNativeSourcesForPack({ packageDir: dir, label: '@hs/demo', sources: 'nowhere', sourcesName: 'native/demo', entries: ['src'] });`);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(`@hs/demo: cannot pack, the native sources are missing (${join(dir, 'nowhere')}/CMakeLists.txt); pack from the hs repository`);
  });
});

describe('which', () => {
  it('finds a tool on the PATH and gives null for one that is not there', () => {
    expect(which('sh')).toMatch(/\/sh$/);
    expect(which('hs-no-such-tool')).toBeNull();
  });
});
