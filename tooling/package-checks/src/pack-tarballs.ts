import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { PublicPackage } from './public-packages.js';

/** File name `pnpm pack` gives a package's tarball: `@hs/streams` 0.0.0 -> `hs-streams-0.0.0.tgz`. */
export function tarballName(name: string, version: string): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

/** A package's tarball path, or why it could not be packed. */
export type PackOutcome = { readonly tarball: string } | { readonly error: string };

/**
 * Packs each package with `pnpm pack` into `destination` (one at a time: a package's prepack/postpack
 * scripts may copy files into its folder) and returns the outcome per package name: the tarball path, or
 * pnpm's output when it failed (one broken package does not hide the results of the others). `pnpm pack`
 * rewrites `workspace:*` ranges to the packed versions, as a publish would.
 */
export function packTarballs(packages: readonly PublicPackage[], destination: string): Map<string, PackOutcome> {
  const outcomes = new Map<string, PackOutcome>();
  for (const pkg of packages) {
    try {
      execFileSync('pnpm', ['pack', '--pack-destination', destination], { cwd: pkg.dir, stdio: 'pipe', encoding: 'utf8' });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      outcomes.set(pkg.name, { error: `pnpm pack failed for ${pkg.name}:\n${stdout ?? ''}${stderr ?? ''}` });
      continue;
    }
    const expected = tarballName(pkg.name, pkg.manifest.version);
    outcomes.set(
      pkg.name,
      readdirSync(destination).includes(expected) ? { tarball: join(destination, expected) } : { error: `pnpm pack for ${pkg.name} wrote no ${expected}` },
    );
  }
  return outcomes;
}
