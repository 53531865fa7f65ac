import { readFileSync } from 'node:fs';
import { checkPackage, createPackageFromTarballData } from '@arethetypeswrong/core';
import { problemKindInfo } from '@arethetypeswrong/core/problems';
import type { ResolutionKind } from '@arethetypeswrong/core/types';
import { describe, expect, inject, it } from 'vitest';
import { tarballOf } from '../src/packed-tarball.js';
import { publicPackages, shipsCommonJs } from '../src/public-packages.js';

const packed = inject('packed');

describe('arethetypeswrong on each packed tarball', () => {
  for (const pkg of publicPackages()) {
    // Packages with a `require` export are checked under every resolution (the CLI's `strict` profile);
    // ESM-only packages under ESM and bundler resolution (its `esm-only` profile).
    const ignored: readonly ResolutionKind[] = shipsCommonJs(pkg.manifest) ? [] : ['node10', 'node16-cjs'];
    it(`${pkg.name}: types resolve${ignored.length === 0 ? ' for ESM, CommonJS, node10 and bundlers' : ' for ESM and bundlers (ESM-only package)'}`, async () => {
      const analysis = await checkPackage(createPackageFromTarballData(new Uint8Array(readFileSync(tarballOf(packed, pkg.name)))));
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
