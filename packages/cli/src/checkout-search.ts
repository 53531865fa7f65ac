import { access } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * The first existing `join(dir, relative)` for `dir` = `start` and each of its parents up to the file
 * system root: how `hs` finds a part of an hs checkout (`examples/<name>`, `tooling/benchmarks`,
 * `packages/ipc`) from anywhere inside it.
 *
 * @returns the absolute path found, or `undefined` when no ancestor holds it.
 */
export async function findInAncestors(start: string, relative: string): Promise<string | undefined> {
  let dir = start;
  for (;;) {
    const candidate = join(dir, relative);
    if (await exists(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
