import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { changeset, prepareReleaseCopy, readChangesets, workspaceGlobs, type PendingChangeset, type PlannedRelease } from '../src/changesets-dry-run.js';
import { publicPackages, readManifest, repositoryRoot } from '../src/public-packages.js';

const publicNames = publicPackages().map((p) => p.name);
const config = JSON.parse(readFileSync(join(repositoryRoot, '.changeset', 'config.json'), 'utf8')) as { fixed: string[][] };

function workspaceNames(): string[] {
  return workspaceGlobs(repositoryRoot).flatMap((glob) => {
    const parent = join(repositoryRoot, glob.replace(/\/\*$/, ''));
    if (!existsSync(parent)) return [];
    return readdirSync(parent, { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(parent, e.name, 'package.json')))
      .map((e) => readManifest(join(parent, e.name)).name);
  });
}

describe('changesets configuration', () => {
  it('versions every public package in one fixed (lockstep) group naming only workspace packages', () => {
    expect(config.fixed).toHaveLength(1);
    const group = config.fixed[0]!;
    expect(publicNames.filter((name) => !group.includes(name)), 'public packages missing from the fixed group').toEqual([]);
    const workspace = workspaceNames();
    expect(group.filter((name) => !workspace.includes(name)), 'fixed-group names that are not workspace packages').toEqual([]);
  });

  it('has pending changesets that name only workspace packages with a known bump', () => {
    const workspace = workspaceNames();
    for (const set of readChangesets(join(repositoryRoot, '.changeset'))) {
      for (const [name, bump] of Object.entries(set.releases)) {
        expect(workspace, `.changeset/${set.id}.md names ${name}`).toContain(name);
        expect(['major', 'minor', 'patch'], `.changeset/${set.id}.md bump for ${name}`).toContain(bump);
      }
      expect(set.summary, `.changeset/${set.id}.md has no summary`).not.toBe('');
    }
  });
});

describe('changesets release dry run (status, then version, in a temporary copy)', () => {
  const dir = join(inject('scratchDir'), 'release-copy');
  let pending: PendingChangeset[] = [];
  let releases: PlannedRelease[] = [];

  beforeAll(() => {
    prepareReleaseCopy(repositoryRoot, dir);
    pending = readChangesets(join(dir, '.changeset'));
    if (pending.length === 0) {
      // Right after a release nothing is pending: plan a patch of every public package to check the mechanics.
      const frontMatter = publicNames.map((name) => `'${name}': patch`).join('\n');
      writeFileSync(join(dir, '.changeset', 'release-dry-run.md'), `---\n${frontMatter}\n---\n\nRelease dry run.\n`);
      pending = readChangesets(join(dir, '.changeset'));
    }
    changeset(repositoryRoot, dir, 'status', '--output', 'release-plan.json');
    releases = (JSON.parse(readFileSync(join(dir, 'release-plan.json'), 'utf8')) as { releases: PlannedRelease[] }).releases;
    changeset(repositoryRoot, dir, 'version');
  });

  it('plans one new version, above the current one, for every public package', () => {
    const planned = releases.filter((r) => publicNames.includes(r.name));
    expect(planned.map((r) => r.name).sort()).toEqual([...publicNames].sort());
    const versions = new Set(planned.map((r) => r.newVersion));
    expect([...versions]).toHaveLength(1);
    for (const r of planned) expect(r.newVersion, r.name).not.toBe(r.oldVersion);
  });

  it('writes that version into every public package.json and leaves private packages alone', () => {
    const newVersion = releases.find((r) => publicNames.includes(r.name))!.newVersion;
    for (const pkg of publicPackages(dir)) expect(pkg.manifest.version, pkg.name).toBe(newVersion);
    for (const glob of workspaceGlobs(dir).filter((g) => !g.startsWith('packages'))) {
      const parent = join(dir, glob.replace(/\/\*$/, ''));
      if (!existsSync(parent)) continue;
      for (const entry of readdirSync(parent)) {
        const before = readManifest(join(repositoryRoot, glob.replace(/\/\*$/, ''), entry));
        expect(readManifest(join(parent, entry)).version, before.name).toBe(before.version);
      }
    }
  });

  it('writes each changeset summary into the CHANGELOG of every package it names and consumes the changesets', () => {
    for (const set of pending) {
      const firstLine = set.summary.split('\n')[0]!;
      for (const name of Object.keys(set.releases).filter((n) => publicNames.includes(n))) {
        const pkg = publicPackages(dir).find((p) => p.name === name)!;
        expect(readFileSync(join(pkg.dir, 'CHANGELOG.md'), 'utf8'), `${name} CHANGELOG`).toContain(firstLine);
      }
    }
    expect(readChangesets(join(dir, '.changeset'))).toEqual([]);
  });
});
