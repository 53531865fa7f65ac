import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { publicPackages, readManifest } from '../src/public-packages.js';

describe('build order', () => {
  it('lists every public package as a workspace devDependency, so turbo builds it before it is packed', () => {
    const own = readManifest(fileURLToPath(new URL('..', import.meta.url))).devDependencies ?? {};
    const missing = publicPackages().filter((p) => own[p.name] !== 'workspace:*').map((p) => p.name);
    expect(missing, 'add them to tooling/package-checks/package.json devDependencies as "workspace:*"').toEqual([]);
  });
});
