import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root. */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Where the READMEs' pictures live. */
export const IMAGES_DIR = join(REPOSITORY_ROOT, 'docs', 'images');

/** Renders the flagship's plan as SVG into `file` with the built `hs` command (`hs plan scan-to-volume -o <file>`). */
export function renderPlanPicture(file: string): void {
  execFileSync(process.execPath, [join(REPOSITORY_ROOT, 'packages/cli/dist/bin.js'), 'plan', 'scan-to-volume', '-o', file], { cwd: REPOSITORY_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}
