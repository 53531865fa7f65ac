import type { PackOutcome } from './pack-tarballs.js';

/**
 * The tarball path of a packed package. @throws Error with pnpm's output when it could not be packed,
 * or naming the package when the global setup did not pack it (a package added after the run began).
 */
export function tarballOf(packed: Readonly<Record<string, PackOutcome>>, name: string): string {
  const outcome = packed[name];
  if (outcome === undefined) throw new Error(`${name} was not packed`);
  if ('error' in outcome) throw new Error(outcome.error);
  return outcome.tarball;
}
