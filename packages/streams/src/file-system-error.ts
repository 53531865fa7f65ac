import { ErrorCode, err, type Err } from './errors.js';

/** What a failed file-system call was doing, as `fileSystemError` names it. */
export type FileSystemAction = 'read' | 'write' | 'create';

/**
 * The typed error for a failed read, write or folder creation of `path`: one line
 * `cannot <action> <path>: <OS code>: <OS message>` (`EISDIR`, `ENOSPC`, ...), with the Node error kept as
 * the cause. The code says what to do: `NotFound` for ENOENT (a missing file or parent), `PermissionDenied`
 * for EACCES and EPERM, `InvalidArgument` otherwise (a directory where a file is expected, a full device, a
 * path under a file). For operators and commands that read or write files, so a file problem reads the
 * same everywhere in a pipeline.
 *
 * @param action - what failed.
 * @param path - the path as the message names it (callers may quote it or say what it is, `input 'a.png'`).
 * @param cause - what Node threw (an `ErrnoException`; anything else is reported as `unknown error`).
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs';
 * import { ErrorCode, fileSystemError, ok, type Result } from '@hs/streams';
 *
 * function readCalibration(path: string): Result<string> {
 *   try {
 *     return ok(readFileSync(path, 'utf8'));
 *   } catch (cause) {
 *     return fileSystemError('read', `calibration '${path}'`, cause);
 *   }
 * }
 *
 * const calibration = readCalibration('/nonexistent/camera.json');
 * if (!calibration.ok) console.log(calibration.error.code === ErrorCode.NotFound, calibration.error.message);
 * ```
 */
export function fileSystemError(action: FileSystemAction, path: string, cause: unknown): Err {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? 'unknown error';
  const reason = cause instanceof Error ? cause.message.split(',')[0] : String(cause);
  const kind = code === 'ENOENT' ? ErrorCode.NotFound : code === 'EACCES' || code === 'EPERM' ? ErrorCode.PermissionDenied : ErrorCode.InvalidArgument;
  const detail = reason?.startsWith(code) ? reason : `${code}: ${reason}`;
  return err(kind, `cannot ${action} ${path}: ${detail}`, cause);
}
