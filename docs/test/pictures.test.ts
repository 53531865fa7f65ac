import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMAGES_DIR, REPOSITORY_ROOT, renderPlanPicture } from '../pictures/pictures.js';

/** The READMEs and guides a user reads: the root README, every package's and example's, docs/ and its guides. */
function markdownFiles(): string[] {
  const inFolders = (parent: string): string[] =>
    readdirSync(join(REPOSITORY_ROOT, parent), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(parent, e.name, 'README.md'));
  return ['README.md', ...inFolders('packages'), ...inFolders('examples'), ...readdirSync(join(REPOSITORY_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f)), ...readdirSync(join(REPOSITORY_ROOT, 'docs', 'guides')).map((f) => join('docs', 'guides', f))].filter((f) => existsSync(join(REPOSITORY_ROOT, f)));
}

/** `file: target` of every markdown image (`![alt](target)`) with a relative target. */
function images(): { file: string; target: string; path: string }[] {
  return markdownFiles().flatMap((file) =>
    [...readFileSync(join(REPOSITORY_ROOT, file), 'utf8').matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)]
      .map(([, target]) => target as string)
      .filter((target) => !/^[a-z]+:/.test(target))
      .map((target) => ({ file, target, path: resolve(REPOSITORY_ROOT, dirname(file), target) })),
  );
}

describe('README pictures', () => {
  it('every picture a README or guide shows exists', () => {
    expect(images().filter((i) => !existsSync(i.path)).map((i) => `${i.file}: ${i.target}`)).toEqual([]);
  });

  it('every picture of docs/images is shown by the README (pnpm docs:pictures writes them)', () => {
    const shown = new Set(images().map((i) => relative(IMAGES_DIR, i.path)));
    expect(readdirSync(IMAGES_DIR).filter((f) => !shown.has(f))).toEqual([]);
    expect(readdirSync(IMAGES_DIR).sort()).toEqual(['bench-latency.svg', 'scan-to-volume-plan.svg', 'scan-to-volume-preview.png']);
  });

  it('the plan picture is the one hs plan draws today (run pnpm docs:pictures after changing the plan)', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'hs-plan-picture-'));
    try {
      const fresh = join(scratch, 'plan.svg');
      renderPlanPicture(fresh);
      expect(readFileSync(fresh, 'utf8')).toBe(readFileSync(join(IMAGES_DIR, 'scan-to-volume-plan.svg'), 'utf8'));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
