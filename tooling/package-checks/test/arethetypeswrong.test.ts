import { readFileSync } from 'node:fs';
import { checkPackage, createPackageFromTarballData } from '@arethetypeswrong/core';
import { problemKindInfo } from '@arethetypeswrong/core/problems';
import type { ResolutionKind } from '@arethetypeswrong/core/types';
import { describe, expect, inject, it } from 'vitest';
import { tarballOf } from '../src/packed-tarball.js';
import { publicPackages } from '../src/public-packages.js';

const packed = inject('packed');

describe('arethetypeswrong on each packed tarball', () => {
  for (const pkg of publicPackages()) {
    // Every package is ES modules only (CommonJS code loads it with require() on Node >= 20.19): checked
    // under ESM and bundler resolution, the CLI's `esm-only` profile.
    const ignored: readonly ResolutionKind[] = ['node10', 'node16-cjs'];
    it(`${pkg.name}: types resolve for ESM and bundlers`, async () => {
      const analysis = await checkPackage(createPackageFromTarballData(new Uint8Array(readFileSync(tarballOf(packed, pkg.name)))));
      // A prebuilt platform package exports only its package.json: no module, so no types.
      if (Object.keys((pkg.manifest.exports ?? {}) as object).every((subpath) => subpath === './package.json')) {
        expect(analysis.types, `${pkg.name} has no module entry, so no types`).toBe(false);
        return;
      }
      expect(analysis.types, `${pkg.name} ships no type declarations`).not.toBe(false);
      if (analysis.types === false) return;
      const problems = analysis.problems
        .filter((p) => !('resolutionKind' in p) || !ignored.includes(p.resolutionKind))
        .map((p) => {
          const { kind, ...where } = p;
          if ('trace' in where) delete (where as { trace?: unknown }).trace;
          return `${problemKindInfo[kind].title}: ${JSON.stringify(where)}`;
        });
      expect(problems).toEqual([]);
    });
  }
});
