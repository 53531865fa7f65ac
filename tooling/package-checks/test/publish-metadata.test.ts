import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { INSTALL_SCRIPTS } from '../src/offline-install.js';
import { tarballOf } from '../src/packed-tarball.js';
import { privateWorkspacePackageNames, publicPackages, repositoryRoot } from '../src/public-packages.js';

const packed = inject('packed');
const license = readFileSync(join(repositoryRoot, 'LICENSE'), 'utf8');

/** The fields of package.json a publish (with provenance) and the registry's page read. */
interface PublishedManifest {
  readonly license?: string;
  readonly repository?: { readonly type?: string; readonly url?: string; readonly directory?: string };
  readonly homepage?: string;
  readonly bugs?: { readonly url?: string };
  readonly engines?: { readonly node?: string };
  readonly type?: string;
  readonly main?: string;
  readonly exports?: unknown;
  readonly files?: readonly string[];
  readonly scripts?: Readonly<Record<string, string>>;
}

describe('every public package is publishable', () => {
  it('the repository has the Apache-2.0 LICENSE', () => {
    expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
  });

  for (const pkg of publicPackages()) {
    const manifest = pkg.manifest as PublishedManifest;
    it(`${pkg.name}: Apache-2.0, repository with url and directory, homepage, bugs, Node >= 20.19, ES modules only, no install script`, () => {
      expect(manifest.license).toBe('Apache-2.0');
      expect(manifest.repository).toEqual({ type: 'git', url: expect.stringMatching(/^git\+https:\/\/.+\.git$/), directory: relative(repositoryRoot, pkg.dir) });
      expect(manifest.homepage).toMatch(/^https:\/\//);
      expect(manifest.bugs?.url).toMatch(/^https:\/\//);
      expect(manifest.engines?.node).toBe('>=20.19');
      expect(manifest.type ?? 'module').toBe('module');
      expect(manifest.main ?? '', 'main').not.toMatch(/\.c[jt]s$/);
      expect(JSON.stringify(manifest.exports ?? {}), 'no require condition and no CommonJS file in exports').not.toMatch(/"require"|\.cjs"|\.d\.cts"/);
      expect(Object.keys(manifest.scripts ?? {}).filter((s) => INSTALL_SCRIPTS.includes(s))).toEqual([]);
      expect(manifest.files).toContain('LICENSE');
    });

    // A private workspace package (@hs/cli-options) is bundled into the package that uses it, never named.
    it(`${pkg.name}: neither its manifest's dependencies nor its packed JavaScript name a private workspace package`, () => {
      const unpublished = privateWorkspacePackageNames();
      const named = Object.keys({ ...pkg.manifest.dependencies, ...pkg.manifest.optionalDependencies, ...pkg.manifest.peerDependencies });
      expect(named.filter((name) => unpublished.includes(name))).toEqual([]);
      const tarball = tarballOf(packed, pkg.name);
      const scripts = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter((file) => /\.[cm]?js$/.test(file));
      const text = scripts.length === 0 ? '' : execFileSync('tar', ['-xzOf', tarball, ...scripts], { encoding: 'utf8', maxBuffer: 512 * 2 ** 20 });
      const imported = unpublished.filter((name) => new RegExp(`(from|import\\()\\s*["']${name}["'/]`).test(text));
      expect(imported, 'bundle it (tsup noExternal) instead of importing it').toEqual([]);
    });

    it(`${pkg.name}: the tarball carries the LICENSE`, () => {
      const text = execFileSync('tar', ['-xzOf', tarballOf(packed, pkg.name), 'package/LICENSE'], { encoding: 'utf8' });
      expect(text).toBe(license);
    });
  }
});
