import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasSources, publicPackages, repositoryRoot } from '../src/public-packages.js';

describe('API reference coverage', () => {
  it('lists every public package with sources in typedoc.json, so its exports are documented and validated', () => {
    const config = JSON.parse(readFileSync(join(repositoryRoot, 'typedoc.json'), 'utf8')) as { entryPoints: string[] };
    const missing = publicPackages()
      .filter(hasSources)
      .map((p) => relative(repositoryRoot, p.dir))
      .filter((dir) => !config.entryPoints.includes(dir));
    expect(missing, 'add them to "entryPoints" in typedoc.json').toEqual([]);
  });
});
