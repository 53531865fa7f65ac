/**
 * Regenerates the pictures the READMEs show, from the built checkout (`pnpm docs:pictures` builds first):
 * - `docs/images/scan-to-volume-plan.svg`: the flagship's execution plan (`hs plan scan-to-volume -o ...svg`);
 * - `docs/images/scan-to-volume-preview.png`: the flagship's depth-shaded preview of the bundled bunny, on the
 *   host backend (the CUDA build writes the same bytes);
 * - `docs/images/bench-latency.svg`: the latency plot of `hs bench --sections chain` on this machine.
 * The plan and the preview do not depend on the machine (`docs/test/pictures.test.ts` renders the plan again and
 * compares); the bench plot does, so regenerate it on a quiet machine.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IMAGES_DIR, REPOSITORY_ROOT, renderPlanPicture } from './pictures.js';

const scratch = mkdtempSync(join(tmpdir(), 'hs-pictures-'));
try {
  renderPlanPicture(join(IMAGES_DIR, 'scan-to-volume-plan.svg'));
  const run = (args: readonly string[]): void => {
    execFileSync(process.execPath, args, { cwd: REPOSITORY_ROOT, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, HS_BACKEND: 'host' } });
  };
  run([join(REPOSITORY_ROOT, 'examples/scan-to-volume/dist/main.js'), '--backend', 'host', '--out', join(scratch, 'flagship')]);
  copyFileSync(join(scratch, 'flagship', 'preview.png'), join(IMAGES_DIR, 'scan-to-volume-preview.png'));
  run([join(REPOSITORY_ROOT, 'packages/cli/dist/bin.js'), 'bench', '--sections', 'chain', '--out', join(scratch, 'bench')]);
  copyFileSync(join(scratch, 'bench', 'bench-latency.svg'), join(IMAGES_DIR, 'bench-latency.svg'));
  console.log(`wrote scan-to-volume-plan.svg, scan-to-volume-preview.png and bench-latency.svg into ${IMAGES_DIR}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
