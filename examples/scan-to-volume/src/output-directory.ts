import { createOutputDirectory as createDirectory } from '@hs/runtime';
import type { Result } from '@hs/streams';

/**
 * Creates the `--out` folder and its missing parents with `createOutputDirectory` of @hs/runtime (which
 * reports a folder under `/proc` as ENOENT where Node's recursive mkdir would never return).
 * @returns OK, or InvalidArgument `--out: cannot create <dir>: <code>`.
 */
export function createOutputDirectory(dir: string): Promise<Result<void>> {
  return createDirectory(dir, '--out');
}
