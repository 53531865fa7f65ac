import type { PublicPackage } from './public-packages.js';

/**
 * `name` and every public package it reaches through `dependencies` and `optionalDependencies`, sorted
 * by name: the tarballs an `npm install` of `name`'s tarball needs beside it, since none of them is on
 * the registry. @throws Error when `name` is not among `packages`.
 */
export function installClosure(name: string, packages: readonly PublicPackage[]): PublicPackage[] {
  const byName = new Map(packages.map((p) => [p.name, p]));
  const reached = new Map<string, PublicPackage>();
  const visit = (next: string): void => {
    const pkg = byName.get(next);
    if (pkg === undefined || reached.has(next)) return;
    reached.set(next, pkg);
    for (const dependency of Object.keys({ ...pkg.manifest.dependencies, ...pkg.manifest.optionalDependencies })) visit(dependency);
  };
  if (!byName.has(name)) throw new Error(`${name} is not a public package`);
  visit(name);
  return [...reached.values()].sort((a, b) => a.name.localeCompare(b.name));
}
