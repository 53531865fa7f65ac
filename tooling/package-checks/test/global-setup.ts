import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { packTarballs, type PackOutcome } from '../src/pack-tarballs.js';
import { publicPackages } from '../src/public-packages.js';
import { checkRegistry, type RegistryReachability } from '../src/registry-reachability.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Tarball path (or why packing failed) per public package name, packed once for every suite. */
    packed: Record<string, PackOutcome>;
    /** Scratch folder the suites may use; removed after the run. */
    scratchDir: string;
    registry: RegistryReachability;
  }
}

/** Packs every public package once, checks the registry, and hands both to the suites. */
export default async function setup(project: TestProject): Promise<() => void> {
  const scratchDir = mkdtempSync(join(tmpdir(), 'hs-package-checks-'));
  const tarballDir = join(scratchDir, 'tarballs');
  mkdirSync(tarballDir);
  const registry = checkRegistry(); // in flight while the packages are packed
  const packed = packTarballs(publicPackages(), tarballDir);
  const reachability = await registry;
  if (!reachability.reachable) {
    console.log(`package-checks: package registry unreachable (${reachability.reason}); the fresh-install README examples are skipped`);
  }
  project.provide('packed', Object.fromEntries(packed));
  project.provide('scratchDir', scratchDir);
  project.provide('registry', reachability);
  return () => rmSync(scratchDir, { recursive: true, force: true });
}
