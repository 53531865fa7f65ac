import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasSources, publicPackages, repositoryRoot } from '../src/public-packages.js';

/**
 * ARCHITECTURE: everything above `@hs/streams` speaks to a `Backend`, never to CUDA directly; what only
 * CUDA has is an optional capability of the Backend. So `@hs/streams` is the only package whose sources
 * load `@hs/cuda-native` (the addon package itself aside), and the only one that depends on it.
 */
const SEAM = '@hs/streams';
const ADDON = '@hs/cuda-native';
/** An import, export-from, dynamic import or require of the addon package (or a subpath of it). */
const LOADS_ADDON = new RegExp(String.raw`(?:from\s*|import\s*\(\s*|require\s*\(\s*|import\s+)['"]${ADDON}(?:/[^'"]*)?['"]`);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(?:[cm]?ts|[cm]?js)$/.test(entry.name) ? [path] : [];
  });
}

describe(`only ${SEAM} speaks to ${ADDON}`, () => {
  const packages = publicPackages().filter((p) => p.name !== ADDON);

  it('recognizes every form of loading the addon package (the check itself can fail)', () => {
    for (const line of [
      `import { loadCudaNative } from '${ADDON}';`,
      `import type { CudaNativeBinding } from "${ADDON}";`,
      `export { x } from '${ADDON}/sub';`,
      `const m = require('${ADDON}');`,
      `const m = await import('${ADDON}');`,
      `import '${ADDON}';`,
    ]) {
      expect(LOADS_ADDON.test(line), line).toBe(true);
    }
    expect(LOADS_ADDON.test(`// builds with ${ADDON}'s helper`)).toBe(false);
  });

  it(`no src file of a package other than ${SEAM} loads ${ADDON}`, () => {
    const offenders = packages
      .filter((p) => p.name !== SEAM && hasSources(p))
      .flatMap((p) => sourceFiles(join(p.dir, 'src')))
      .filter((file) => LOADS_ADDON.test(readFileSync(file, 'utf8')))
      .map((file) => relative(repositoryRoot, file));
    expect(offenders).toEqual([]);
  });

  it(`no package other than ${SEAM} lists ${ADDON} among the dependencies its users install`, () => {
    const dependents = packages
      .filter((p) => p.name !== SEAM)
      .filter((p) => ADDON in { ...p.manifest.dependencies, ...p.manifest.optionalDependencies })
      .map((p) => p.name);
    expect(dependents).toEqual([]);
    const seam = packages.find((p) => p.name === SEAM);
    expect(seam?.manifest.optionalDependencies?.[ADDON], `${SEAM} loads the addon lazily, as an optional dependency`).toBeDefined();
  });
});
