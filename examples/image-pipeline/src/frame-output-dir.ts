import { lstat, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createOutputDirectory } from '@hs/runtime';
import { ErrorCode, HsError, removeStaleStaging } from '@hs/streams';
import { lockOutputDir, type OutputDirLock } from './output-dir-lock.js';

/** Frame files one run can name: `frame-00000.png` to `frame-99999.png`. */
export const MAX_FRAME_FILES = 100_000;

/** Exactly the names `frameFileName` produces: `frame-` and five decimal digits, then `.png`. */
export const FRAME_FILE_PATTERN = /^frame-\d{5}\.png$/;

/**
 * The file name of frame `index` (0-based): `frame-00000.png`, `frame-00001.png`, ...
 * @throws HsError `ErrorCode.InvalidArgument` when `index` is not an integer from 0 to `MAX_FRAME_FILES - 1`.
 */
export function frameFileName(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_FRAME_FILES) {
    throw new HsError(ErrorCode.InvalidArgument, `frame index must be an integer from 0 to ${MAX_FRAME_FILES - 1}, got ${index}`);
  }
  return `frame-${String(index).padStart(5, '0')}.png`;
}

/** An output directory ready for a run: locked for it, old frames gone. */
export interface PreparedOutputDir {
  /** This run's exclusive use of the directory; call `release()` when the run has ended (success or not). */
  readonly lock: OutputDirLock;
  /** Names of the stale frame files removed, sorted. */
  readonly removed: readonly string[];
}

/**
 * Makes `dir` ready for a fresh run: creates it (`createOutputDirectory` of @hs/runtime: typed errors, no
 * hang under `/proc`, a symlinked `dir` refused so nothing is deleted where it points), takes its lock
 * (`lockOutputDir`: one run per directory at a time), removes the staging files of killed runs
 * (`removeStaleStaging`), then deletes the frame files an earlier run left there, so that the directory
 * ends up holding only this run's frames. Only regular files (by `lstat`) whose whole name matches
 * `FRAME_FILE_PATTERN` and that belong to this process's user are removed (unlinked, never followed);
 * anything else (other names, `frame-1.png`, directories, symbolic links, another user's files) is left
 * alone (a link or another user's file at a frame's path is replaced when that frame is written).
 * @returns the lock and the names removed.
 * @throws HsError (the promise rejects) `AlreadyExists` (`lockOutputDir`) when another run uses `dir`, with
 *   nothing in it touched; `InvalidArgument` when `dir` is a symbolic link (nothing touched), when the directory cannot be created, listed, or a stale frame
 *   cannot be removed (the OS error in the message and as the cause), the lock then released;
 *   `lockOutputDir`'s file-system errors.
 */
export async function prepareOutputDir(dir: string): Promise<PreparedOutputDir> {
  await createOutputDirectory(dir);
  const lock = await lockOutputDir(dir);
  const removed: string[] = [];
  const uid = process.getuid?.();
  try {
    await removeStaleStaging(dir);
    for (const name of await readdir(dir)) {
      if (!FRAME_FILE_PATTERN.test(name)) continue;
      const stats = await lstat(join(dir, name));
      if (!stats.isFile() || (uid !== undefined && stats.uid !== uid)) continue;
      await unlink(join(dir, name));
      removed.push(name);
    }
  } catch (cause) {
    lock.release();
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new HsError(ErrorCode.InvalidArgument, `cannot clear old frames from output directory '${dir}': ${reason}`, { cause });
  }
  return { lock, removed: removed.sort() };
}
