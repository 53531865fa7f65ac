import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** One package's planned release, as `changeset status --output` reports it. */
export interface PlannedRelease {
  readonly name: string;
  readonly type: 'major' | 'minor' | 'patch' | 'none';
  readonly oldVersion: string;
  readonly newVersion: string;
  /** Ids (file stems) of the changesets that name it. */
  readonly changesets: readonly string[];
}

/** A changeset file: its id, the packages it bumps, and its summary. */
export interface PendingChangeset {
  readonly id: string;
  readonly releases: Readonly<Record<string, string>>;
  readonly summary: string;
}

/** The workspace folders `pnpm-workspace.yaml` lists (`packages/*`, ...), as written there. */
export function workspaceGlobs(root: string): string[] {
  const yaml = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
  const block = /^packages:\s*\n((?:\s+-\s+.*\n?)+)/m.exec(yaml);
  return block === null ? [] : [...block[1]!.matchAll(/-\s+['"]?([^'"\n]+)['"]?/g)].map((m) => m[1]!.trim());
}

/** Parses the pending changesets in `.changeset/` (front matter `'pkg': bump`, then the summary). */
export function readChangesets(changesetDir: string): PendingChangeset[] {
  return readdirSync(changesetDir)
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .sort()
    .map((file) => {
      const text = readFileSync(join(changesetDir, file), 'utf8');
      const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n([\s\S]*)$/.exec(text);
      if (match === null) throw new Error(`.changeset/${file}: no front matter block`);
      const releases: Record<string, string> = {};
      for (const line of match[1]!.split(/\r?\n/)) {
        const entry = /^\s*['"]?([^'":]+)['"]?\s*:\s*(\w+)\s*$/.exec(line);
        if (entry !== null) releases[entry[1]!] = entry[2]!;
      }
      return { id: file.slice(0, -3), releases, summary: match[2]!.trim() };
    });
}

/**
 * Copies what a release reads (root manifest, workspace file, `.changeset/`, every workspace
 * package.json) from `root` into `dir`, links `node_modules` for the changelog generator, and commits
 * it on a `main` branch (`changeset status` compares against the base branch).
 */
export function prepareReleaseCopy(root: string, dir: string): void {
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
  copyFileSync(join(root, 'pnpm-workspace.yaml'), join(dir, 'pnpm-workspace.yaml'));
  cpSync(join(root, '.changeset'), join(dir, '.changeset'), { recursive: true });
  for (const glob of workspaceGlobs(root)) {
    const parent = glob.replace(/\/\*$/, '');
    if (!existsSync(join(root, parent))) continue;
    for (const entry of readdirSync(join(root, parent), { withFileTypes: true })) {
      const manifest = join(parent, entry.name, 'package.json');
      if (!entry.isDirectory() || !existsSync(join(root, manifest))) continue;
      mkdirSync(dirname(join(dir, manifest)), { recursive: true });
      copyFileSync(join(root, manifest), join(dir, manifest));
    }
  }
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const git = (...args: string[]): void => {
    execFileSync('git', ['-c', 'user.name=hs release dry run', '-c', 'user.email=dry-run@hs.invalid', ...args], { cwd: dir, stdio: 'pipe' });
  };
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, '.gitignore'), 'node_modules\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'release dry run base');
}

/** Runs the repository's changesets CLI in `dir`. @throws Error with its output when it fails. */
export function changeset(root: string, dir: string, ...args: string[]): string {
  try {
    return execFileSync(join(root, 'node_modules', '.bin', 'changeset'), args, { cwd: dir, stdio: 'pipe', encoding: 'utf8' });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`changeset ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}
