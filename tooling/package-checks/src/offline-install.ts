import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PackedTarball } from './fresh-project.js';

/** The build tools a user's install must never start: each is a stub on the PATH that records its run. */
export const STUB_TOOLS: readonly string[] = ['nvcc', 'cmake', 'cmake-js', 'g++', 'gcc', 'c++', 'cc', 'make', 'ninja', 'node-gyp'];

/** A folder of stub build tools; every run of one appends its name to `ran.log` there and exits 1. */
export function stubToolchain(dir: string): { readonly bin: string; ran(): string[] } {
  const bin = join(dir, 'stub-tools');
  const log = join(bin, 'ran.log');
  mkdirSync(bin, { recursive: true });
  for (const tool of STUB_TOOLS) {
    writeFileSync(join(bin, tool), `#!/bin/sh\necho "${tool} $*" >> ${JSON.stringify(log)}\nexit 1\n`);
    chmodSync(join(bin, tool), 0o755);
  }
  return { bin, ran: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((line) => line !== '') : []) };
}

/**
 * Installs `packed` into a fresh ESM project at `dir` the way a user would, but offline: one `npm install
 * --offline` of the tarballs, lifecycle scripts enabled (none may exist), with the stub build tools of
 * `stubToolchain` first on the PATH. Returns the stub runs (empty when nothing tried to build).
 * @throws Error with npm's output when the install fails.
 */
export function installOffline(dir: string, packed: readonly PackedTarball[]): string[] {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'hs-user-project', private: true, type: 'module' }, null, 2));
  const stubs = stubToolchain(dir);
  try {
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', ...packed.map((p) => p.tarball)], {
      cwd: dir,
      stdio: 'pipe',
      encoding: 'utf8',
      env: { ...process.env, PATH: `${stubs.bin}:${process.env['PATH'] ?? ''}` },
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm install --offline of ${packed.map((p) => p.name).join(', ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
  return stubs.ran();
}

/** Every package in `dir`'s node_modules (scoped ones as `@scope/name`), sorted. */
export function installedPackages(dir: string): string[] {
  const root = join(dir, 'node_modules');
  return readdirSync(root)
    .filter((entry) => !entry.startsWith('.'))
    .flatMap((entry) => (entry.startsWith('@') ? readdirSync(join(root, entry)).map((name) => `${entry}/${name}`) : [entry]))
    .sort();
}

/** The lifecycle scripts a package manager runs at install. */
export const INSTALL_SCRIPTS: readonly string[] = ['preinstall', 'install', 'postinstall', 'prepare'];

/** The install-time scripts (`INSTALL_SCRIPTS`) and `binding.gyp` of each installed package that has any. */
export function installTimeWork(dir: string): string[] {
  return installedPackages(dir).flatMap((name) => {
    const pkgDir = join(dir, 'node_modules', name);
    const scripts = (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
    return [...INSTALL_SCRIPTS.filter((s) => s in scripts).map((s) => `${name}: ${s} script`), ...(existsSync(join(pkgDir, 'binding.gyp')) ? [`${name}: binding.gyp`] : [])];
  });
}
