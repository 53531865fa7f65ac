import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ErrorCode, HsError, checkOutputFolder, errWithContext } from '@hs/streams';

/**
 * Creates the output folder `dir` (relative paths from the process's working directory) and its missing
 * parents one level at a time, each with a plain (non-recursive) `mkdir`: what a pipeline module's
 * `prepareRun()` or a command's `--out` needs. Node's `mkdir(dir, { recursive: true })` never returns on
 * Linux when a parent exists but refuses children with ENOENT (any path under `/proc`): it spins at full
 * CPU and its promise never settles. This walk reports such a folder as an error instead. A `dir` that is
 * a symbolic link is refused (`checkOutputFolder` of @hs/streams): in a shared folder another user could
 * point it at files of the user running the pipeline. Its parents may be links.
 *
 * @param dir - the folder to create; nothing happens when it is already a directory.
 * @param option - the option that named `dir` (such as `'--out'`), put before the message; omit for none.
 * @returns nothing, once `dir` is (now) a directory. A part another process creates at the same time is
 *   accepted when it is a directory.
 * @throws HsError (the promise rejects) `InvalidArgument` `[<option>: ]cannot create <dir>: <code>`
 *   naming the OS error of the first part that failed (ENOTDIR when an existing part is a file, ENOENT
 *   under a pseudo file system or a dangling link, EACCES, ...), with that error as the cause. Parents
 *   created before a later part fails stay (empty folders). `InvalidArgument`
 *   `[<option>: ]output folder '<dir>' is a symbolic link; ...` when `dir` is a link (to a folder or not);
 *   `InvalidArgument` `[<option>: ]the output folder must be a path (a string), ...` when `dir` is not a string.
 * @example
 * ```ts
 * import { mkdtempSync, statSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import type { HsError } from '@hs/streams';
 * import { createOutputDirectory } from '@hs/runtime';
 *
 * const out = join(mkdtempSync(join(tmpdir(), 'hs-out-')), 'runs', 'today');
 * await createOutputDirectory(out, '--out');
 * console.log(`${out} is a directory: ${statSync(out).isDirectory()}`);
 * try {
 *   await createOutputDirectory('/proc/hs-cannot-exist', '--out');
 * } catch (error) {
 *   console.log((error as HsError).code, (error as HsError).message); // InvalidArgument --out: cannot create ...
 * }
 * ```
 */
export async function createOutputDirectory(dir: string, option?: string): Promise<void> {
  if (typeof dir !== 'string') throw new HsError(ErrorCode.InvalidArgument, `${option === undefined ? '' : `${option}: `}the output folder must be a path (a string), got ${String(dir)}`);
  const failure = (cause: unknown): never => {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? 'unknown error';
    throw new HsError(ErrorCode.InvalidArgument, `${option === undefined ? '' : `${option}: `}cannot create ${dir}: ${code}`, { cause });
  };
  const missing: string[] = [];
  for (let path = resolve(dir); ; path = dirname(path)) {
    const found = await stat(path).catch((cause: unknown) => {
      if ((cause as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(path) === path) failure(cause);
      return null;
    });
    if (found === null) {
      missing.push(path);
      continue;
    }
    if (found.isDirectory()) break;
    failure(Object.assign(new Error(`${path} is not a directory`), { code: 'ENOTDIR' }));
  }
  for (const path of missing.reverse()) {
    try {
      await mkdir(path);
    } catch (cause) {
      // Another process (a second run into the same new --out) made it between the walk and here.
      if ((cause as NodeJS.ErrnoException).code === 'EEXIST' && (await isDirectory(path))) continue;
      failure(cause);
    }
  }
  try {
    await checkOutputFolder(dir);
  } catch (cause) {
    throw option === undefined ? cause : errWithContext(cause as HsError, option).error;
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
