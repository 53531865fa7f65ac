import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { compileExamples, installTarballs, runExample, type ProjectExample } from '../src/fresh-project.js';
import { tarballOf } from '../src/packed-tarball.js';
import { publicPackages, readManifest } from '../src/public-packages.js';
import { extractReadmeExamples, type ReadmeExample } from '../src/readme-examples.js';

const packed = inject('packed');
const registry = inject('registry');
const projectDir = join(inject('scratchDir'), 'fresh-project');
const typesNodeVersion = readManifest(fileURLToPath(new URL('..', import.meta.url))).devDependencies!['@types/node']!;

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

describe.skipIf(!registry.reachable)('README examples, from the packed tarballs installed into a fresh project', () => {
  let diagnostics = new Map<string, string>();

  beforeAll(() => {
    installTarballs(projectDir, packages.map((p) => ({ name: p.name, tarball: tarballOf(packed, p.name) })), typesNodeVersion);
    diagnostics = compileExamples(projectDir, packages.flatMap((p) => p.examples));
  });

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
