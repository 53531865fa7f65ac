import { rename, rm, writeFile } from 'node:fs/promises';
import { fileSystemError } from '@hs/streams';

/** Replacers made by this process so far: numbers each one's staging file. */
let replacersMade = 0;

/**
 * Replaces one file atomically, again and again: each `write` puts the bytes in a staging file next to
 * it, `<path>.<pid>.<n>.tmp` (the process id and a number unique to this replacer in the process), then
 * renames that over `path`. Readers of `path` see the previous file or the new one, never a part; two
 * writers of the same path, in one process or in several, never share a staging file, so neither
 * breaks the other's rename (the last rename wins). A write that fails removes its staging file (best
 * effort) before it returns. Uses `fs/promises`: the JS thread never blocks.
 */
export class AtomicFileReplacer {
  /** The staging file this replacer writes before each rename. */
  readonly stagingPath: string;

  /** @param path the file to replace; its folder must exist when `write` is called. */
  constructor(readonly path: string) {
    replacersMade += 1;
    this.stagingPath = `${path}.${process.pid}.${replacersMade}.tmp`;
  }

  /**
   * Writes `bytes` as the new content of `path`.
   * @returns nothing, once `path` holds `bytes`.
   * @throws HsError (the promise rejects) with `fileSystemError`'s error for `write <path>` naming the OS
   *   code: NotFound (ENOENT, e.g. the folder is gone), PermissionDenied (EACCES, EPERM), InvalidArgument
   *   otherwise (EISDIR when `path` is a folder, ENOSPC, ...); the staging file is then removed.
   */
  async write(bytes: Uint8Array): Promise<void> {
    try {
      await writeFile(this.stagingPath, bytes);
      await rename(this.stagingPath, this.path);
    } catch (cause) {
      // Best effort: the failure reported is the write's, not a cleanup's.
      await rm(this.stagingPath, { force: true }).catch(() => undefined);
      throw fileSystemError('write', this.path, cause).error;
    }
  }
}
