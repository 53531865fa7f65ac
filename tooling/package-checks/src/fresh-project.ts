import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readmeCompilerOptions } from './readme-installs.js';

/** One README example to compile and run in the fresh project. */
export interface ProjectExample {
  /** File stem, unique per example (`hs-streams-1`). */
  readonly id: string;
  /** TypeScript source. */
  readonly code: string;
}

/** What came out of running one compiled example. */
export interface ExampleRun {
  /** Process exit code (null when killed by the timeout). */
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const require = createRequire(import.meta.url);

/** One packed package to install: its name and tarball path. */
export interface PackedTarball {
  readonly name: string;
  readonly tarball: string;
}

/**
 * Creates a project in `dir` the way a user would: an empty ESM package.json, then one `npm install` of
 * every tarball together plus `@types/node` and the `extra` packages (`name@version`) from the registry.
 * No hs package has an install script, so nothing builds: the addons come from the prebuilt platform
 * package among the tarballs.
 * @throws Error with npm's output when the install fails.
 */
export function installTarballs(dir: string, packed: readonly PackedTarball[], typesNodeVersion: string, extra: readonly string[] = []): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'hs-fresh-project', private: true, type: 'module' }, null, 2));
  try {
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...packed.map((p) => p.tarball), `@types/node@${typesNodeVersion}`, ...extra], {
      cwd: dir,
      stdio: 'pipe',
      encoding: 'utf8',
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm install of the packed tarballs failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

/** The TypeScript settings the repository README gives users (its `readme-tsconfig` block). */
const USER_COMPILER_OPTIONS = readmeCompilerOptions(readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8'));

/**
 * Writes the examples to `examples/<id>.ts` and compiles them with TypeScript against the installed
 * packages, with the settings the README gives users (`readmeCompilerOptions`; library declarations checked
 * too: the published `.d.ts` files must compile for a user). Returns the compiler's diagnostics per example id
 * ('' when clean); JS is emitted into `dist/` even when an example has type errors.
 */
export function compileExamples(dir: string, examples: readonly ProjectExample[]): Map<string, string> {
  mkdirSync(join(dir, 'examples'), { recursive: true });
  for (const example of examples) writeFileSync(join(dir, 'examples', `${example.id}.ts`), example.code);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { ...USER_COMPILER_OPTIONS, rootDir: 'examples', outDir: 'dist' },
      include: ['examples'],
    }),
  );
  let output = '';
  try {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json', '--pretty', 'false'], {
      cwd: dir,
      stdio: 'pipe',
      encoding: 'utf8',
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    output = `${stdout ?? ''}${stderr ?? ''}`;
  }
  const lines = output.split('\n').filter((line) => line.trim() !== '');
  const byExample = new Map<string, string>();
  for (const example of examples) {
    byExample.set(example.id, lines.filter((line) => line.startsWith(`examples/${example.id}.ts`)).join('\n'));
  }
  const unattributed = lines.filter((line) => !examples.some((e) => line.startsWith(`examples/${e.id}.ts`)) && /error TS/.test(line));
  if (unattributed.length > 0) {
    // Errors inside the installed packages' declarations belong to every example that imports them.
    for (const example of examples) byExample.set(example.id, [byExample.get(example.id), ...unattributed].filter(Boolean).join('\n'));
  }
  return byExample;
}

/** Runs `dist/<id>.js` with Node in the project, bounded by `timeoutMs`. Never throws. */
export function runExample(dir: string, id: string, timeoutMs = 60_000): Promise<ExampleRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join('dist', `${id}.js`)], { cwd: dir, timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      const exitCode = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ exitCode, stdout, stderr });
    });
  });
}
