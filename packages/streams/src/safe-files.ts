// Over 500 lines: the file-system rules every hs reader and writer follows (no symlink followed, staging files renamed into place, regular files only), one function each with its runnable example.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, fsyncSync, lstatSync, openSync, readSync, renameSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import { lstat, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ErrorCode, HsError, OK_VOID, err, ok, type Err, type Result } from './errors.js';
import { fileSystemError } from './file-system-error.js';

/*
 * One way for hs and its examples to write and read files in folders other users may share (a `--out`
 * under /tmp): writes never follow a symlink planted at the staging or target path, opens never block
 * on a FIFO, a symlinked output folder is refused, and staging files of killed runs are removed.
 * Spec: issue 22 item 1.
 */

// Absent on Windows: there the flags are 0 and the checks by lstat/fstat still apply.
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const EXCLUSIVE_WRITE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW | O_NONBLOCK;
const READ_NONBLOCKING = constants.O_RDONLY | O_NONBLOCK;

/**
 * The suffix of every staging file: `<name>.<pid>.<16 hex digits>.hs-staging`, beside its target.
 * @example
 * ```ts
 * import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { STAGING_SUFFIX, createStagingFile } from '@hs/streams';
 *
 * const out = mkdtempSync(join(tmpdir(), 'hs-out-'));
 * const staging = await createStagingFile(join(out, 'grid.nvdb'));
 * const inFlight = readdirSync(out).filter((name) => name.endsWith(STAGING_SUFFIX));
 * console.log(`while writing: ${inFlight.length} file ending in ${STAGING_SUFFIX}`);
 * await staging.discard();
 * rmSync(out, { recursive: true, force: true });
 * ```
 */
export const STAGING_SUFFIX = '.hs-staging';
/** A staging file's name: the target's name, the writing process's pid, 16 random hex digits, the suffix. */
const STAGING_NAME = /^.+\.([1-9][0-9]*)\.[0-9a-f]{16}\.hs-staging$/;

/** Options of `writeFileAtomic`, `createStagingFile` and `openExclusive`. */
export interface SafeWriteOptions {
  /** Permission bits of a new file (before the umask); default 0o644. */
  readonly mode?: number;
  /** How error messages name the file (`lock file 'a/.lock'`); default the path. */
  readonly label?: string;
}

/** Options of `readRegularFile`. */
export interface ReadRegularFileOptions {
  /** Largest file accepted, in bytes; a larger one is refused with InvalidArgument before it is read. Default: no limit. */
  readonly maxBytes?: number;
  /** How error messages name the file (`input 'a.png'`); default the path. */
  readonly label?: string;
}

/** What `fstat` found, named for messages: `a FIFO`, `a directory`, ... */
function fileType(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isFile()) return 'a regular file';
  return 'not a regular file';
}

function notRegular(path: string, stats: Stats): Err {
  return err(ErrorCode.InvalidArgument, `cannot read ${path}: it is ${fileType(stats)}, not a regular file; pass a regular file`);
}

/** A FIFO, socket or device at a path to be written: refused, not replaced (renaming over `/dev/full` as root would replace the device). */
function specialTarget(label: string, stats: Stats | undefined): Result<void> {
  if (stats === undefined || stats.isFile() || stats.isSymbolicLink() || stats.isDirectory()) return OK_VOID;
  return err(ErrorCode.InvalidArgument, `cannot write ${label}: it is ${fileType(stats)}, not a regular file; remove it or choose another path`);
}

function symlinkedFolder(folder: string): Err {
  return err(
    ErrorCode.InvalidArgument,
    `output folder '${folder}' is a symbolic link; hs does not write through a symlinked folder (another user could point it ` +
      `at files of yours): pass the folder it points to, or a folder only you can write`,
  );
}

function folderCheck(folder: string, stats: Stats): Result<void> {
  if (stats.isSymbolicLink()) return symlinkedFolder(folder);
  if (!stats.isDirectory()) return err(ErrorCode.InvalidArgument, `output folder '${folder}' is ${fileType(stats)}, not a directory`);
  return OK_VOID;
}

/**
 * Checks that `folder` is a directory and not a symbolic link (it is `lstat`ed, so a link is seen as one),
 * before files are written or removed in it. Parents of `folder` may be links (`/tmp` on macOS is one).
 *
 * @param folder - the output folder, relative paths from the working directory.
 * @returns nothing when `folder` is a real directory.
 * @throws HsError (the promise rejects) `InvalidArgument` naming the folder when it is a symbolic link (saying what
 *   to pass instead) or not a directory; `fileSystemError`'s error when it cannot be `lstat`ed (`NotFound` for a
 *   missing folder, `PermissionDenied`, ...).
 * @example
 * ```ts
 * import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { HsError, checkOutputFolder } from '@hs/streams';
 *
 * const base = mkdtempSync(join(tmpdir(), 'hs-out-'));
 * mkdirSync(join(base, 'out'));
 * await checkOutputFolder(join(base, 'out')); // a real directory: resolves
 * symlinkSync(join(base, 'out'), join(base, 'linked'));
 * try {
 *   await checkOutputFolder(join(base, 'linked'));
 * } catch (error) {
 *   if (error instanceof HsError) console.log(`refused (${error.code}): ${error.detail.split(';')[0]}`);
 * }
 * rmSync(base, { recursive: true, force: true });
 * ```
 */
export async function checkOutputFolder(folder: string): Promise<void> {
  let stats: Stats;
  try {
    stats = await lstat(folder);
  } catch (cause) {
    throw fileSystemError('write', `output folder '${folder}'`, cause).error;
  }
  const checked = folderCheck(folder, stats);
  if (!checked.ok) throw checked.error;
}

function stagingPathFor(path: string): string {
  return join(dirname(path), `${basename(path)}.${process.pid}.${randomBytes(8).toString('hex')}${STAGING_SUFFIX}`);
}

/** A regular file opened for reading by `openRegularFile`. */
export interface RegularFile {
  /** The open file (read-only, `O_NONBLOCK`); the caller closes it. */
  readonly handle: FileHandle;
  /** Its size in bytes when it was opened (`fstat`). */
  readonly size: number;
}

/** A staging file being written; `commit()` renames it onto its target, `discard()` removes it. */
export interface StagingFile {
  /** The open staging file (write-only), for writes in pieces. */
  readonly handle: FileHandle;
  /** Its path: `<target>.<pid>.<random>.hs-staging`, in the target's folder. */
  readonly stagingPath: string;
  /**
   * Flushes (`fsync`), closes and renames the staging file onto the target: readers see the old file or the
   * new one, never a part. A symlink at the target is replaced, never followed.
   * @throws HsError (the promise rejects) `fileSystemError`'s `write <target>` error (EISDIR when the target is a
   *   folder, ...); the staging file is then removed.
   */
  commit(): Promise<void>;
  /** Closes and removes the staging file (best effort, never rejects); for a write given up. */
  discard(): Promise<void>;
}

/**
 * Opens a new staging file for `path` in `path`'s folder, for a caller that writes the content in pieces
 * (`writeFileAtomic` writes one buffer). The folder is `lstat`ed first and refused when it is a symbolic
 * link; the staging file is created with `O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK` under a random name, so
 * nothing planted in the folder (a symlink, a FIFO) is opened instead.
 *
 * @param path - the file to write; its folder must exist.
 * @returns the open staging file; call `commit()` or `discard()` on it.
 * @throws HsError (the promise rejects) `InvalidArgument` for a symlinked folder (`checkOutputFolder`), or a
 *   FIFO, socket or device at `path`;
 *   `fileSystemError`'s `write <path>` error otherwise (`NotFound` when the folder is missing, `PermissionDenied`, ...).
 * @example
 * ```ts
 * import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { createStagingFile } from '@hs/streams';
 *
 * const out = mkdtempSync(join(tmpdir(), 'hs-out-'));
 * const target = join(out, 'points.xyz');
 * const staging = await createStagingFile(target);
 * try {
 *   for (let i = 0; i < 3; i += 1) await staging.handle.write(`${i} ${i * 2} ${i * 3}\n`); // written in pieces
 * } catch (error) {
 *   await staging.discard();
 *   throw error;
 * }
 * await staging.commit(); // fsync, close, rename: readers see the old file or the whole new one
 * console.log(`${target} holds ${readFileSync(target, 'utf8').split('\n').length - 1} points`);
 * rmSync(out, { recursive: true, force: true });
 * ```
 */
export async function createStagingFile(path: string, options: SafeWriteOptions = {}): Promise<StagingFile> {
  const folder = dirname(path);
  const label = options.label ?? path;
  let stats: Stats;
  try {
    stats = await lstat(folder);
  } catch (cause) {
    throw fileSystemError('write', label, cause).error;
  }
  const checked = folderCheck(folder, stats);
  if (!checked.ok) throw checked.error;
  const target = specialTarget(label, await lstat(path).catch(() => undefined));
  if (!target.ok) throw target.error;
  const stagingPath = stagingPathFor(path);
  let handle: FileHandle;
  try {
    handle = await open(stagingPath, EXCLUSIVE_WRITE, options.mode ?? 0o644);
  } catch (cause) {
    throw fileSystemError('write', label, cause).error;
  }
  let closed = false;
  const discard = async (): Promise<void> => {
    if (!closed) {
      closed = true;
      await handle.close().catch(() => undefined);
    }
    await unlink(stagingPath).catch(() => undefined);
  };
  const commit = async (): Promise<void> => {
    try {
      await handle.sync();
      closed = true;
      await handle.close();
      await rename(stagingPath, path);
    } catch (cause) {
      await discard();
      throw fileSystemError('write', label, cause).error;
    }
  };
  return { handle, stagingPath, commit, discard };
}

/**
 * Writes `bytes` as the whole new content of `path`, atomically and safely in a shared folder: a staging file
 * `<path>.<pid>.<random>.hs-staging` is created beside it (`createStagingFile`: `O_EXCL | O_NOFOLLOW | O_NONBLOCK`,
 * the folder refused when it is a symlink), written, `fsync`ed and renamed onto `path`. Readers see the previous
 * file or the new one; a symlink at `path` is replaced, never written through; a FIFO, socket or device at `path`
 * is refused (never opened, never replaced); concurrent writers of one path each leave one whole file (the last
 * rename wins). On failure the staging file is removed.
 *
 * @param path - the file to write; its folder must exist.
 * @param bytes - the content.
 * @returns nothing, once `path` holds `bytes`.
 * @throws HsError (the promise rejects) `InvalidArgument` when the folder is a symbolic link, or when a FIFO, socket
 *   or device is at `path` (naming the type); `fileSystemError`'s
 *   `write <path>` error naming the OS code: `NotFound` (ENOENT: the folder is missing), `PermissionDenied`
 *   (EACCES, EPERM), `InvalidArgument` otherwise (EISDIR when `path` is a folder, ENOSPC, ...).
 * @example
 * ```ts
 * import { mkdtempSync, rmSync, statSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { writeFileAtomic } from '@hs/streams';
 *
 * const out = mkdtempSync(join(tmpdir(), 'hs-out-'));
 * const frame = new Uint8Array(64 * 64).fill(128); // a 64x64 gray8 frame
 * await writeFileAtomic(join(out, 'frame-00000.gray'), frame);
 * console.log(`wrote ${statSync(join(out, 'frame-00000.gray')).size} bytes atomically`);
 * rmSync(out, { recursive: true, force: true });
 * ```
 */
export async function writeFileAtomic(path: string, bytes: Uint8Array | string, options: SafeWriteOptions = {}): Promise<void> {
  const staging = await createStagingFile(path, options);
  try {
    await staging.handle.writeFile(bytes);
  } catch (cause) {
    await staging.discard();
    throw fileSystemError('write', options.label ?? path, cause).error;
  }
  await staging.commit();
}

/**
 * The synchronous twin of `writeFileAtomic`, for synchronous callers (command-line tools); it blocks the thread.
 * @returns `OK_VOID` once `path` holds `bytes`; otherwise the error `writeFileAtomic` rejects with, the staging
 *   file removed.
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { writeFileAtomicSync } from '@hs/streams';
 *
 * const out = mkdtempSync(join(tmpdir(), 'hs-out-'));
 * const written = writeFileAtomicSync(join(out, 'plan.json'), JSON.stringify({ operators: 3 }));
 * if (!written.ok) throw written.error;
 * const missing = writeFileAtomicSync(join(out, 'no-such-folder', 'plan.json'), '{}');
 * if (!missing.ok) console.log(missing.error.code, '-', missing.error.detail); // NotFound: the folder is missing
 * rmSync(out, { recursive: true, force: true });
 * ```
 */
export function writeFileAtomicSync(path: string, bytes: Uint8Array | string, options: SafeWriteOptions = {}): Result<void> {
  const folder = dirname(path);
  const label = options.label ?? path;
  let stats: Stats;
  try {
    stats = lstatSync(folder);
  } catch (cause) {
    return fileSystemError('write', label, cause);
  }
  const checked = folderCheck(folder, stats);
  if (!checked.ok) return checked;
  let existing: Stats | undefined;
  try {
    existing = lstatSync(path);
  } catch {
    existing = undefined; // nothing there yet (or unreadable: the open or rename reports it)
  }
  const target = specialTarget(label, existing);
  if (!target.ok) return target;
  const stagingPath = stagingPathFor(path);
  let fd: number;
  try {
    fd = openSync(stagingPath, EXCLUSIVE_WRITE, options.mode ?? 0o644);
  } catch (cause) {
    return fileSystemError('write', label, cause);
  }
  let fdOpen = true;
  try {
    const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
    for (let done = 0; done < data.byteLength; ) done += writeSync(fd, data, done, data.byteLength - done);
    fsyncSync(fd);
    fdOpen = false;
    closeSync(fd);
    renameSync(stagingPath, path);
    return OK_VOID;
  } catch (cause) {
    if (fdOpen) {
      try {
        closeSync(fd);
      } catch {
        // The write's failure is the one reported.
      }
    }
    try {
      unlinkSync(stagingPath);
    } catch {
      // Best effort: already gone.
    }
    return fileSystemError('write', label, cause);
  }
}

/**
 * Creates `path` exclusively (`O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK`), for lock files: fails
 * when anything exists at `path` (a file, a planted symlink, a FIFO), never opens it.
 *
 * @param path - the file to create.
 * @returns the open file (write-only); the caller writes and closes it.
 * @throws HsError (the promise rejects) `AlreadyExists` naming `path` when something is there (the EEXIST as the
 *   cause); `fileSystemError`'s `write <path>` error otherwise (`NotFound` when the folder is missing, ...).
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { ErrorCode, HsError, openExclusive } from '@hs/streams';
 *
 * const dir = mkdtempSync(join(tmpdir(), 'hs-run-'));
 * const lockPath = join(dir, '.run.lock');
 * const lock = await openExclusive(lockPath);
 * await lock.writeFile(`${process.pid}\n`);
 * await lock.close();
 * try {
 *   await openExclusive(lockPath, { label: `lock file '${lockPath}'` }); // a second run finds it taken
 * } catch (error) {
 *   if (error instanceof HsError && error.code === ErrorCode.AlreadyExists) console.log(`another run holds the lock: ${error.detail}`);
 * }
 * rmSync(dir, { recursive: true, force: true });
 * ```
 */
export async function openExclusive(path: string, options: SafeWriteOptions = {}): Promise<FileHandle> {
  try {
    return await open(path, EXCLUSIVE_WRITE, options.mode ?? 0o644);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'EEXIST') throw new HsError(ErrorCode.AlreadyExists, `cannot create ${options.label ?? path}: it already exists`, { cause });
    throw fileSystemError('write', options.label ?? path, cause).error;
  }
}

/**
 * Opens `path` for reading without blocking (`O_RDONLY | O_NONBLOCK`: a FIFO opens at once instead of waiting for
 * a writer) and checks with `fstat` that what was opened is a regular file. For readers that read in pieces.
 *
 * @returns the open file and its size.
 * @throws HsError (the promise rejects) `InvalidArgument` naming the type when `path` is not a regular file (a FIFO,
 *   a directory, a device); `fileSystemError`'s `read <path>` error when it cannot be opened (`NotFound`, ...).
 * @example
 * ```ts
 * import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { openRegularFile } from '@hs/streams';
 *
 * const dir = mkdtempSync(join(tmpdir(), 'hs-in-'));
 * const path = join(dir, 'scene.bin');
 * writeFileSync(path, Buffer.from('HSV1 and the rest of the scene'));
 * const { handle, size } = await openRegularFile(path); // a FIFO or a directory is refused, never waited on
 * try {
 *   const magic = Buffer.alloc(4);
 *   await handle.read(magic, 0, 4, 0); // read in pieces: here only the header
 *   console.log(`${size} bytes, magic '${magic.toString('latin1')}'`);
 * } finally {
 *   await handle.close();
 * }
 * rmSync(dir, { recursive: true, force: true });
 * ```
 */
export async function openRegularFile(path: string, options: Pick<ReadRegularFileOptions, 'label'> = {}): Promise<RegularFile> {
  const label = options.label ?? path;
  let handle: FileHandle;
  try {
    handle = await open(path, READ_NONBLOCKING);
  } catch (cause) {
    throw fileSystemError('read', label, cause).error;
  }
  let stats: Stats;
  try {
    stats = await handle.stat();
  } catch (cause) {
    await handle.close().catch(() => undefined);
    throw fileSystemError('read', label, cause).error;
  }
  if (!stats.isFile()) {
    await handle.close().catch(() => undefined);
    throw notRegular(label, stats).error;
  }
  return { handle, size: stats.size };
}

function tooLarge(path: string, size: number, maxBytes: number): Err {
  return err(ErrorCode.InvalidArgument, `cannot read ${path}: it holds ${size} bytes, more than the ${maxBytes} accepted`);
}

/**
 * Reads the whole of `path`, refusing anything that is not a regular file (`openRegularFile`: a FIFO cannot make
 * the read wait forever).
 *
 * @param path - the file to read.
 * @param options - `maxBytes`: a larger file is refused before it is read.
 * @returns its bytes.
 * @throws HsError (the promise rejects) `InvalidArgument` naming the type for a FIFO, directory or device, or when
 *   the file is larger than `maxBytes`; `fileSystemError`'s `read <path>` error (`NotFound`, `PermissionDenied`, ...).
 * @example
 * ```ts
 * import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { HsError, readRegularFile } from '@hs/streams';
 *
 * const dir = mkdtempSync(join(tmpdir(), 'hs-in-'));
 * writeFileSync(join(dir, 'input.ply'), 'ply\nformat ascii 1.0\nend_header\n');
 * const ply = await readRegularFile(join(dir, 'input.ply'), { maxBytes: 256 * 2 ** 20 });
 * console.log(`read ${ply.byteLength} bytes`);
 * await readRegularFile(dir, { label: `input '${dir}'` }).catch((error: unknown) => {
 *   if (error instanceof HsError) console.log(`refused (${error.code}): ${error.detail}`); // a directory, not a regular file
 * });
 * rmSync(dir, { recursive: true, force: true });
 * ```
 */
export async function readRegularFile(path: string, options: ReadRegularFileOptions = {}): Promise<Buffer> {
  const { handle, size } = await openRegularFile(path, options);
  const label = options.label ?? path;
  try {
    if (options.maxBytes !== undefined && size > options.maxBytes) throw tooLarge(label, size, options.maxBytes).error;
    return await handle.readFile();
  } catch (cause) {
    throw cause instanceof HsError ? cause : fileSystemError('read', label, cause).error;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * The synchronous twin of `readRegularFile` (it blocks the thread, never on a FIFO).
 * @returns the bytes, or the error `readRegularFile` rejects with.
 * @example
 * ```ts
 * import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { readRegularFileSync } from '@hs/streams';
 *
 * const dir = mkdtempSync(join(tmpdir(), 'hs-in-'));
 * const path = join(dir, 'points.xyz');
 * writeFileSync(path, '0 0 0\n1 2 3\n');
 * const bytes = readRegularFileSync(path, { maxBytes: 1024 });
 * if (!bytes.ok) throw bytes.error;
 * console.log(`${bytes.value.toString('utf8').trim().split('\n').length} points in ${bytes.value.byteLength} bytes`);
 * const tooLarge = readRegularFileSync(path, { maxBytes: 4 });
 * if (!tooLarge.ok) console.log(tooLarge.error.message); // InvalidArgument: ... more than the 4 accepted
 * rmSync(dir, { recursive: true, force: true });
 * ```
 */
export function readRegularFileSync(path: string, options: ReadRegularFileOptions = {}): Result<Buffer> {
  const label = options.label ?? path;
  let fd: number;
  try {
    fd = openSync(path, READ_NONBLOCKING);
  } catch (cause) {
    return fileSystemError('read', label, cause);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return notRegular(label, stats);
    if (options.maxBytes !== undefined && stats.size > options.maxBytes) return tooLarge(label, stats.size, options.maxBytes);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.max(65536, stats.size - total + 1));
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      chunks.push(read === chunk.length ? chunk : chunk.subarray(0, read));
      total += read;
      if (options.maxBytes !== undefined && total > options.maxBytes) return tooLarge(label, total, options.maxBytes);
    }
    return ok(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
  } catch (cause) {
    return fileSystemError('read', label, cause);
  } finally {
    try {
      closeSync(fd);
    } catch {
      // Nothing to do: the read's outcome stands.
    }
  }
}

/** `false` only when no process has `pid` (ESRCH); EPERM means it exists under another user. */
function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (cause) {
    return (cause as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes from `folder` the staging files (`*.<pid>.<random>.hs-staging`) whose process no longer exists: what a run
 * killed with SIGKILL mid-write left. Staging files of live processes (this one included) are kept, and nothing
 * with another name is touched; entries are unlinked, never followed. Call it when a writer starts.
 *
 * A pid reused by an unrelated live process keeps its staging file until that process ends.
 *
 * @param folder - the folder to clean.
 * @returns the names removed, sorted.
 * @throws HsError (the promise rejects) `fileSystemError`'s `read <folder>` error when the folder cannot be listed;
 *   a file that another process removes first is not an error.
 * @example
 * ```ts
 * import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { STAGING_SUFFIX, removeStaleStaging } from '@hs/streams';
 *
 * const out = mkdtempSync(join(tmpdir(), 'hs-out-'));
 * // What a writer killed mid-write leaves: a staging file of a pid that no longer runs.
 * writeFileSync(join(out, `frame-00007.png.4194305.0123456789abcdef${STAGING_SUFFIX}`), 'partial');
 * writeFileSync(join(out, 'frame-00006.png'), 'whole');
 * const removed = await removeStaleStaging(out); // when a writer starts
 * console.log(`removed ${removed.join(', ')}; frame-00006.png is kept`);
 * rmSync(out, { recursive: true, force: true });
 * ```
 */
export async function removeStaleStaging(folder: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (cause) {
    throw fileSystemError('read', `folder '${folder}'`, cause).error;
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = STAGING_NAME.exec(name);
    if (match === null || processIsAlive(Number(match[1]))) continue;
    try {
      await unlink(join(folder, name));
      removed.push(name);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'ENOENT') throw fileSystemError('write', join(folder, name), cause).error;
    }
  }
  return removed.sort();
}
