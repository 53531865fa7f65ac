import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { compileExamples, installTarballs } from '../src/fresh-project.js';
import { installClosure } from '../src/install-closure.js';
import { tarballOf } from '../src/packed-tarball.js';
import { publicPackages, readManifest, type PackageManifest } from '../src/public-packages.js';

const packed = inject('packed');
const registry = inject('registry');
const projectDir = join(inject('scratchDir'), 'resource-author');
const checksManifest = readManifest(fileURLToPath(new URL('..', import.meta.url)));
const typesNodeVersion = checksManifest.devDependencies!['@types/node']!;
const vitestVersion = checksManifest.devDependencies!['vitest']!;

/** The file a subpath's export names (ES modules only: one file), relative to the package folder. */
function entryFiles(manifest: PackageManifest, subpath: string): string[] {
  const entry = (manifest.exports as Record<string, { default: string }> | undefined)?.[subpath];
  return entry === undefined ? [] : [entry.default];
}

/** Module specifiers a built file loads: static and dynamic imports, re-exports and requires. */
function loadedModules(code: string): string[] {
  return [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s*)["']([^"']+)["']/gm)].map((m) => m[1]!);
}

const withSuite = publicPackages().filter((p) => entryFiles(p.manifest, './test').length > 0);

describe('the ./test conformance entries, built', () => {
  it('recognizes every way a built file loads a module (the check itself can fail)', () => {
    const code = [`import { a } from "vitest";`, `export { b } from './x.js';`, `import "side-effect";`, `var c = require("vitest");`, `await import('lazy');`, `// loads "nothing"`].join('\n');
    expect(loadedModules(code)).toEqual(['vitest', './x.js', 'side-effect', 'vitest', 'lazy']);
  });

  it('exist for the packages that publish a conformance suite', () => {
    expect(withSuite.map((p) => p.name)).toEqual(expect.arrayContaining(['@hs/nanovdb-mr', '@hs/pool', '@hs/streams']));
  });

  for (const pkg of withSuite) {
    it(`${pkg.name}: the main entry loads neither vitest nor the suite; the suite loads vitest and the package by name`, () => {
      const read = (file: string): string => readFileSync(join(pkg.dir, file), 'utf8');
      const forbidden = (m: string): boolean => m === 'vitest' || m.startsWith('vitest/') || m === `${pkg.name}/test` || /^\.\.?\/(?:.*\/)?test\//.test(m);
      for (const file of entryFiles(pkg.manifest, '.')) expect(loadedModules(read(file)).filter(forbidden), file).toEqual([]);
      const suiteFiles = entryFiles(pkg.manifest, './test');
      const mainClasses = [...read(entryFiles(pkg.manifest, '.')[0]!).matchAll(/\bclass (\w+)/g)].map((m) => m[1]!);
      for (const file of suiteFiles) {
        const code = read(file);
        expect(loadedModules(code), file).toEqual(expect.arrayContaining(['vitest', pkg.name]));
        // One copy of each class at run time: the suite gets them from the main entry, never bundles its own.
        expect(mainClasses.filter((name) => new RegExp(`\\bclass ${name}\\b`).test(code)), file).toEqual([]);
      }
    });
  }
});

/** What one vitest run in the fresh project reported (vitest's JSON reporter, the fields read here). */
interface VitestReport {
  readonly testResults: readonly { readonly name: string; readonly assertionResults: readonly { readonly title: string; readonly status: string }[] }[];
}

/** Runs `vitest run` on `filter` in `dir` with the JSON reporter; resolves with the report and vitest's output. */
function runVitest(dir: string, filter: string): Promise<{ report: VitestReport; output: string }> {
  // The suite's own vitest worker variables would make the nested run think it is a worker.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST')));
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(dir, 'node_modules/vitest/vitest.mjs'), 'run', filter, '--reporter=json', '--outputFile=vitest-report.json'],
      { cwd: dir, env, timeout: 120_000, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const reportFile = join(dir, 'vitest-report.json');
        if (!existsSync(reportFile)) reject(new Error(`vitest wrote no report (${error?.message ?? 'no error'}):\n${stdout}${stderr}`));
        else resolve({ report: JSON.parse(readFileSync(reportFile, 'utf8')) as VitestReport, output: `${stdout}${stderr}` });
      },
    );
  });
}

/** Runs `code` as an ES module in `dir`; resolves with its exit code and standard error. */
function runModule(dir: string, code: string): Promise<{ exitCode: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--input-type=module', '--eval', code], { cwd: dir, encoding: 'utf8' }, (error, _stdout, stderr) => {
      resolve({ exitCode: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stderr });
    });
  });
}

const fixture = (file: string): string => readFileSync(fileURLToPath(new URL(`downstream-resource/${file}`, import.meta.url)), 'utf8');

describe.skipIf(!registry.reachable)('a downstream resource, checked with the packed @hs/nanovdb-mr/test in a fresh project', () => {
  beforeAll(() => {
    const closure = installClosure('@hs/nanovdb-mr', publicPackages());
    installTarballs(projectDir, closure.map((p) => ({ name: p.name, tarball: tarballOf(packed, p.name) })), typesNodeVersion);
  });

  // Runs first: the next test installs vitest into the same project.
  it('installs no test runner: vitest is an optional peer; the main entry loads without it, the suite names it', async () => {
    expect(existsSync(join(projectDir, 'node_modules/@hs/nanovdb-mr/dist/test/index.js')), 'the tarball ships the suite').toBe(true);
    expect(existsSync(join(projectDir, 'node_modules/vitest')), 'node_modules/vitest').toBe(false);
    expect(existsSync(join(projectDir, 'node_modules/@vitest')), 'node_modules/@vitest').toBe(false);
    const main = await runModule(projectDir, `import { StatisticsResource } from '@hs/nanovdb-mr'; if (typeof StatisticsResource !== 'function') process.exit(1);`);
    expect(main.stderr).toBe('');
    expect(main.exitCode).toBe(0);
    const suite = await runModule(projectDir, `await import('@hs/nanovdb-mr/test');`);
    expect(suite.exitCode).not.toBe(0);
    expect(suite.stderr).toMatch(/Cannot find package 'vitest'/);
  });

  it('runs describeResourceConformance with vitest over a first-fit resource written there, and fails a resource that frees by the wrong size', async () => {
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--ignore-scripts', '--save-dev', `vitest@${vitestVersion}`], { cwd: projectDir, stdio: 'pipe' });
    const diagnostics = compileExamples(projectDir, [
      { id: 'first-fit-resource', code: fixture('first-fit-resource.ts') },
      { id: 'first-fit-resource.conformance.test', code: fixture('first-fit-resource.conformance.ts') },
      { id: 'lax-size-resource.conformance.test', code: fixture('lax-size-resource.conformance.ts') },
    ]);
    expect([...diagnostics.values()].filter((d) => d !== '').join('\n'), 'TypeScript errors against the published types').toBe('');

    const { report, output } = await runVitest(projectDir, 'examples/');
    const statuses = (file: string): Record<string, string[]> => {
      const result = report.testResults.find((r) => r.name.endsWith(`examples/${file}`));
      expect(result, `${file} in the vitest report:\n${output}`).toBeDefined();
      const byStatus: Record<string, string[]> = {};
      for (const test of result!.assertionResults) (byStatus[test.status] ??= []).push(test.title);
      return byStatus;
    };
    const firstFit = statuses('first-fit-resource.conformance.test.ts');
    expect(Object.keys(firstFit).sort(), output).toEqual(['passed', 'skipped']);
    // A synchronous resource has no stream-ordered methods: that one test skips itself.
    expect(firstFit['skipped']).toEqual(['orders allocations across several streams through events (async resources)']);
    expect(firstFit['passed']).toContain('survives random mixed allocate/free (seeded) with aligned, disjoint live blocks');
    expect(statuses('lax-size-resource.conformance.test.ts')['failed']).toEqual(['returns InvalidArgument for a block returned with the wrong size, leaving it live']);
  });
});
