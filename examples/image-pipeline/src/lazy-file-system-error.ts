import type { Err } from '@hs/streams';

/**
 * `fileSystemError` of @hs/example-point-cloud-input (the typed one-line error for a failed read or
 * write, naming the OS code: `NotFound` for ENOENT, `PermissionDenied` for EACCES/EPERM, otherwise
 * `InvalidArgument`; the Node error kept as the cause), with that package loaded only when a file error
 * happens: loading it also loads its point-cloud readers, about 0.3 s of start-up that a run without
 * file errors does not need.
 *
 * @param action - what failed: `'read'` or `'write'`.
 * @param subject - what was read or written, as the message names it (`input 'a.png'`, `'out/frame-00003.png'`).
 * @param cause - the error Node threw.
 * @returns the error `cannot <action> <subject>: <OS code>: <OS message>`.
 */
export async function fileSystemErrorLazily(action: 'read' | 'write', subject: string, cause: unknown): Promise<Err> {
  const { fileSystemError } = await import('@hs/example-point-cloud-input');
  return fileSystemError(action, subject, cause);
}
