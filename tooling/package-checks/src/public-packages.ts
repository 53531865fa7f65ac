import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this package lives in `tooling/package-checks`). */
export const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The fields of a package.json these checks read. */
export interface PackageManifest {
  readonly name: string;
  readonly version: string;
  readonly private?: boolean;
  readonly exports?: unknown;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
}

/** A workspace package that is published: its name, folder and manifest. */
export interface PublicPackage {
  readonly name: string;
  /** Absolute path of the package folder. */
  readonly dir: string;
  readonly manifest: PackageManifest;
}

/** Reads a package.json. */
export function readManifest(dir: string): PackageManifest {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageManifest;
}

/**
 * Every package under `packages/` that is not `private`, sorted by name: the packages that get
 * published, so the packages every check here covers. A package that appears later is covered at once.
 */
export function publicPackages(root: string = repositoryRoot): PublicPackage[] {
  const packagesDir = join(root, 'packages');
  return readdirSync(packagesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(packagesDir, entry.name, 'package.json')))
    .map((entry) => {
      const dir = join(packagesDir, entry.name);
      return { name: '', dir, manifest: readManifest(dir) };
    })
    .filter((p) => p.manifest.private !== true)
    .map((p) => ({ ...p, name: p.manifest.name }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The names of the workspace's private packages (`"private": true` in `packages/`, `examples/`, `tooling/`):
 * the ones no published package may depend on or import at run time.
 */
export function privateWorkspacePackageNames(root: string = repositoryRoot): string[] {
  return ['packages', 'examples', 'tooling']
    .flatMap((folder) =>
      readdirSync(join(root, folder), { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && existsSync(join(root, folder, entry.name, 'package.json')))
        .map((entry) => readManifest(join(root, folder, entry.name))),
    )
    .filter((manifest) => manifest.private === true)
    .map((manifest) => manifest.name)
    .sort();
}

/**
 * True when the package has TypeScript sources (`src/`): every public package but the prebuilt platform
 * packages, which carry only binaries.
 */
export function hasSources(pkg: PublicPackage): boolean {
  return existsSync(join(pkg.dir, 'src'));
}
