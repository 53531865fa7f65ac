import { extname } from 'node:path';
import { ErrorCode, err, ok, type Result } from '@hs/streams';

/**
 * Checks the extension of an output file against the ones the command writes (`-o plan.png` for a
 * command that writes `.txt`, `.json`, `.dot`, `.svg` and `.html` is refused rather than filled with text).
 * A name without an extension is accepted.
 * @returns `path`, or `InvalidArgument` naming the flag, the extension and the ones accepted.
 */
export function refuseUnwritableExtension(flag: string, path: string, writable: readonly string[]): Result<string> {
  const extension = extname(path).toLowerCase();
  if (extension === '' || writable.includes(extension)) return ok(path);
  return err(ErrorCode.InvalidArgument, `${flag} ${path}: cannot write a ${extension} file; use one of ${writable.join(', ')}`);
}
