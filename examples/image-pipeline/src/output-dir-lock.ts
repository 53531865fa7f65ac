import { unlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, HsError, fileSystemError, ok, openExclusive, readRegularFile, readRegularFileSync, unwrap, type Result } from '@hs/streams';

/** Name of the lock file a run keeps in its output directory while it uses that directory. */
export const OUTPUT_DIR_LOCK_FILE = '.image-pipeline.lock';

/** Exclusive use of one output directory by this process, until `release()`. */
export interface OutputDirLock {
  /** The lock file: `<dir>/.image-pipeline.lock`, holding this process's pid. */
  readonly path: string;
  /**
   * Deletes the lock file if it still holds this process's pid; later calls do nothing. Synchronous
   * (one read and one unlink) because it also runs from the process's `'exit'` event, where only
   * synchronous work happens. Never throws: a lock file already gone, or one another process has since
   * taken over, is left as it is.
   */
  release(): void;
}

/** Tries this many times to create the lock file (a stale lock removed in between) before reporting it busy. */
const CREATE_ATTEMPTS = 3;

/**
 * Takes exclusive use of the output directory `dir` (which must exist) for this process: creates
 * `<dir>/.image-pipeline.lock` with `openExclusive` of @hs/streams (`O_CREAT | O_EXCL | O_NOFOLLOW |
 * O_NONBLOCK`: fails if anything exists there, never follows a planted symlink nor blocks on a FIFO) and
 * writes this process's pid into it. An existing lock file is read with `readRegularFile`, so a FIFO
 * planted at the lock path is a typed error at once, not a hang. `dir` itself is not checked for being a
 * symlink: `prepareOutputDir` creates it with `createOutputDirectory`, which refuses one. A lock file whose pid names no live process (left by a run that was
 * killed) is stale: it is deleted and taken over. The lock is also released when the process exits
 * (the `'exit'` event: a normal end, `process.exit()`, an uncaught exception); a process killed by a
 * signal it does not handle leaves its lock file, which the next run finds stale and takes over.
 *
 * Two runs taking over the same stale lock at the same instant are not told apart; a pid reused by an
 * unrelated live process keeps a stale lock looking held (the message says how to remove it).
 *
 * @param dir - the output directory, relative paths from the process's working directory.
 * @returns the lock. Nothing in `dir` is changed on failure.
 * @throws HsError (the promise rejects) `AlreadyExists` when another live process (or another run in this
 *   process) holds it, naming its pid and the lock file and saying what to do; `fileSystemError`'s error
 *   (`PermissionDenied` for EACCES/EPERM, `NotFound` for ENOENT, else `InvalidArgument`, with the OS code)
 *   when the lock file cannot be created, written or read; `InvalidArgument` when something that is not a
 *   regular file (a FIFO, a folder) is at the lock path.
 */
export async function lockOutputDir(dir: string): Promise<OutputDirLock> {
  const path = join(dir, OUTPUT_DIR_LOCK_FILE);
  let holder: number | undefined;
  for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
    if (unwrap(await createLockFile(path))) return holdLock(path);
    const read = unwrap(await readLockHolder(path));
    if (read === 'gone') continue; // its run ended between our create and our read
    holder = read;
    if (holder === undefined || processIsAlive(holder)) break;
    await rm(path, { force: true }); // stale: its process is gone
  }
  const who = holder === undefined ? 'pid unknown: the lock file holds no pid yet' : `pid ${holder}`;
  throw new HsError(
    ErrorCode.AlreadyExists,
    `output directory '${dir}' is in use by another image-pipeline run (${who}; lock file ${path}); ` +
      `choose another --out, or wait until that run ends (if no run uses the directory, delete ${path})`,
  );
}

/** `true` when this process created the lock file and wrote its pid; `false` when the file already exists. */
async function createLockFile(path: string): Promise<Result<boolean>> {
  let file;
  try {
    file = await openExclusive(path, { label: `lock file '${path}'` });
  } catch (thrown) {
    if ((thrown as HsError).code === ErrorCode.AlreadyExists) return ok(false);
    return { ok: false, error: thrown as HsError };
  }
  try {
    await file.writeFile(`${process.pid}\n`);
    await file.close();
  } catch (cause) {
    await file.close().catch(() => undefined);
    await rm(path, { force: true });
    return fileSystemError('write', `lock file '${path}'`, cause);
  }
  return ok(true);
}

/** The pid in the lock file; `undefined` when it holds none (being written, or damaged); `'gone'` when it no longer exists. */
async function readLockHolder(path: string): Promise<Result<number | undefined | 'gone'>> {
  try {
    return ok(parsePid((await readRegularFile(path, { label: `lock file '${path}'`, maxBytes: LOCK_FILE_MAX_BYTES })).toString('utf8')));
  } catch (thrown) {
    if ((thrown as HsError).code === ErrorCode.NotFound) return ok('gone');
    return { ok: false, error: thrown as HsError };
  }
}

/** A pid and a newline fit in 21 bytes; a larger lock file holds no pid (and is not read whole). */
const LOCK_FILE_MAX_BYTES = 64;

function parsePid(text: string): number | undefined {
  return /^[1-9][0-9]*\n?$/.test(text) ? Number.parseInt(text, 10) : undefined;
}

/** Signal 0 checks that `pid` exists without signalling it; EPERM means it exists but belongs to another user. */
function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (cause) {
    return (cause as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function holdLock(path: string): OutputDirLock {
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    process.off('exit', release);
    try {
      const text = readRegularFileSync(path, { maxBytes: LOCK_FILE_MAX_BYTES });
      if (text.ok && parsePid(text.value.toString('utf8')) === process.pid) unlinkSync(path);
    } catch {
      // Already gone, or unreadable: nothing of ours to remove.
    }
  };
  process.on('exit', release);
  return { path, release };
}
