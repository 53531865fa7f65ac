import { isAbsolute, resolve } from 'node:path';

/** The environment variables this module reads (`INIT_CWD`). */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The folder the user typed the command in: `INIT_CWD` when a package manager set it (`pnpm --filter ...
 * run start` runs in the package's folder but sets `INIT_CWD` to where it was typed), else `cwd`.
 */
export function userDirectory(env: Environment, cwd: string = process.cwd()): string {
  const initCwd = env['INIT_CWD'];
  return initCwd !== undefined && initCwd !== '' && isAbsolute(initCwd) ? initCwd : cwd;
}

/** `path` made absolute against `userDirectory(env, cwd)`, so that errors print the file the user meant. */
export function resolveUserPath(path: string, env: Environment, cwd: string = process.cwd()): string {
  return resolve(userDirectory(env, cwd), path);
}

/** The default `--out` of example `name`: `<user directory>/out/<name>`, absolute. */
export function defaultOutDir(name: string, env: Environment, cwd: string = process.cwd()): string {
  return resolve(userDirectory(env, cwd), 'out', name);
}
