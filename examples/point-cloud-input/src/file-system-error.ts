import { ErrorCode, err, type Err } from '@hs/streams';

/**
 * The typed error for a failed read or write of `path`, one line naming the OS code (`EISDIR`, `ENOSPC`,
 * …): NotFound for a missing file, PermissionDenied for EACCES/EPERM, InvalidArgument otherwise (a
 * directory, a full device, a path under a file). The Node error is kept as the cause.
 */
export function fileSystemError(action: 'read' | 'write', path: string, cause: unknown): Err {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? 'unknown error';
  const reason = cause instanceof Error ? cause.message.split(',')[0] : String(cause);
  const kind = code === 'ENOENT' ? ErrorCode.NotFound : code === 'EACCES' || code === 'EPERM' ? ErrorCode.PermissionDenied : ErrorCode.InvalidArgument;
  const detail = reason?.startsWith(code) ? reason : `${code}: ${reason}`;
  return err(kind, `cannot ${action} ${path}: ${detail}`, cause);
}
