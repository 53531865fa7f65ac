import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PREBUILT_FLOORS } from '@hs/native-addon';
import { BUILD_TOOLS } from '@hs/native-addon/build';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { compileExamples, installTarballs, runExample, type ProjectExample } from '../src/fresh-project.js';
import { tarballOf } from '../src/packed-tarball.js';
import { publicPackages, readManifest } from '../src/public-packages.js';
import { extractReadmeExamples, type ReadmeExample } from '../src/readme-examples.js';

const packed = inject('packed');
const registry = inject('registry');
const projectDir = join(inject('scratchDir'), 'fresh-project');
const checksManifest = readManifest(fileURLToPath(new URL('..', import.meta.url)));
const typesNodeVersion = checksManifest.devDependencies!['@types/node']!;
const vitestVersion = checksManifest.devDependencies!['vitest']!;

interface PackageExamples {
  readonly name: string;
  readonly examples: readonly (ReadmeExample & ProjectExample)[];
}

const packages: PackageExamples[] = publicPackages().map((pkg) => ({
  name: pkg.name,
  examples: extractReadmeExamples(existsSync(join(pkg.dir, 'README.md')) ? readFileSync(join(pkg.dir, 'README.md'), 'utf8') : '').map((example, i) => ({
    ...example,
    id: `${pkg.name.replace(/^@/, '').replace('/', '-')}-${i + 1}`,
  })),
}));

describe('every public package README marks an example', () => {
  for (const pkg of packages) {
    it(`${pkg.name}`, () => {
      expect(pkg.examples.length, `${pkg.name}/README.md has no <!-- readme-example --> block (see tooling/package-checks/README.md)`).toBeGreaterThan(0);
    });
  }
});

/** Every module entry of every public package (`exports` subpaths but `./package.json`), as specifiers. */
const moduleEntries = publicPackages().flatMap((pkg) =>
  Object.keys((pkg.manifest.exports ?? {}) as object)
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => (subpath === '.' ? pkg.name : `${pkg.name}${subpath.slice(1)}`)),
);

/**
 * A CommonJS program that loads every entry with both require() and import() and fails unless each gives
 * one module instance, then adds an operator built from the ESM side to a Graph from the CommonJS side.
 */
const MIXED_PROGRAM = `'use strict';
const { Readable } = require('node:stream');
const entries = ${JSON.stringify(moduleEntries)};
(async () => {
  for (const entry of entries) {
    if (require(entry) !== (await import(entry))) throw new Error(entry + ': require() and import() gave two module instances');
  }
  const { Graph } = require('@hs/compiler');
  const { ReadableSource } = await import('@hs/runtime');
  new Graph('mixed').add(new ReadableSource('in', Readable.from([]), { maxFrameBytes: 16 }));
  console.log('one instance of each of ' + entries.length + ' entries; Graph.add took an operator from import()');
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

describe.skipIf(!registry.reachable)('README examples, from the packed tarballs installed into a fresh project', () => {
  let diagnostics = new Map<string, string>();

  beforeAll(() => {
    // vitest (an optional peer) too, so the ./test entries load in the mixed-module program.
    installTarballs(projectDir, packages.map((p) => ({ name: p.name, tarball: tarballOf(packed, p.name) })), typesNodeVersion, [`vitest@${vitestVersion}`]);
    diagnostics = compileExamples(projectDir, packages.flatMap((p) => p.examples));
  });

  it('every entry of every package loads from require() and import() in one CommonJS program as one module (ES modules only, no top-level await)', () => {
    writeFileSync(join(projectDir, 'mixed.cjs'), MIXED_PROGRAM);
    const run = spawnSync(process.execPath, ['mixed.cjs'], { cwd: projectDir, encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr.split('\n').filter((line) => line !== '' && !/ExperimentalWarning|--trace-warnings/.test(line)), 'standard error').toEqual([]);
    expect(run.status, run.stdout).toBe(0);
    expect(run.stdout).toContain(`one instance of each of ${moduleEntries.length} entries; Graph.add took an operator from import()`);
    expect(moduleEntries).toEqual(expect.arrayContaining(['@hs/streams/test', '@hs/native-addon/build', '@hs/cli']));
  });

  it('hs doctor there finds both addons in the prebuilt package and states its floors', () => {
    const run = spawnSync('npx', ['--no-install', 'hs', 'doctor'], { cwd: projectDir, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const prebuilt = join(projectDir, 'node_modules', '@hs', 'native-linux-x64-gnu');
    expect(run.stdout).toContain(`prebuilt addons: @hs/native-linux-x64-gnu for linux-x64-gnu: needs glibc ${PREBUILT_FLOORS.glibc} or newer and, for CUDA, an NVIDIA driver ${PREBUILT_FLOORS.nvidiaDriver} or newer`);
    expect(run.stdout).toContain(`CUDA addon: loaded from ${join(prebuilt, 'hs_cuda.node')}`);
    expect(run.stdout).toContain(`@hs/ipc: native addon loaded from ${join(prebuilt, 'hs_ipc.node')}`);
  });

  it('npx hs-build-addon ipc builds the IPC addon from the packed sources there, once the build tools are added (the documented path without a prebuilt)', () => {
    const tools = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--save-dev', ...BUILD_TOOLS], { cwd: projectDir, encoding: 'utf8' });
    expect(tools.status, tools.stderr).toBe(0);
    // the caller's HS_SKIP_NATIVE (a host-only checkout) would make the build it asks for a no-op
    const { HS_SKIP_NATIVE: _skip, ...env } = process.env;
    const run = spawnSync('npx', ['--no-install', 'hs-build-addon', 'ipc'], { cwd: projectDir, encoding: 'utf8', timeout: 240_000, env });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/@hs\/ipc: built build\/hs_ipc\.node in [\d.]+ s\./);
    expect(existsSync(join(projectDir, 'node_modules', '@hs', 'ipc', 'build', 'hs_ipc.node'))).toBe(true);
  }, 300_000);

  for (const pkg of packages) {
    for (const example of pkg.examples) {
      it(`${pkg.name} README line ${example.line}: typechecks against the published types and runs`, async () => {
        expect(diagnostics.get(example.id), 'TypeScript errors').toBe('');
        const run = await runExample(projectDir, example.id);
        expect(run.stderr, 'standard error').toBe('');
        expect(run.exitCode, `exit code; stdout:\n${run.stdout}`).toBe(0);
        if (example.prints !== null) expect(run.stdout).toContain(example.prints);
      });
    }
  }
});
