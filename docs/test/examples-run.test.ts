import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ipcAvailability } from '@hs/ipc';
import { describe, expect, it } from 'vitest';

const docsDir = fileURLToPath(new URL('..', import.meta.url));

/** What each example must print (substrings of its stdout). Every example needs an entry. */
const EXPECTED: Readonly<Record<string, readonly string[]>> = {
  'cross-process-topics.ts': ['publish frames: host over posixShm', 'consumer: 100 frames received, 0 values wrong', 'producer: 100 frames published, 0 slots outstanding'],
  'error-rule.ts': ['tap: NotFound', 'run failed: InvalidState: operator camera: frame 3: the camera stopped answering', 'recorder received 2 frames'],
  'cuda-operator.ts': ['gray 2x4: 77 77 77 77 77 77 77 77', 'ordering violations: 0'],
  'inject-allocator.ts': ['allocate 262144 B (alignment 256)', 'refused: OutOfMemory', 'after dispose: 0 B live'],
  'invert-operator.ts': ['slotCount = 2 (maxConsumerQueueDepth)', 'first pixels: 255 245 235 225'],
  'point-cloud-volume.ts': ['mean intensity: 907 voxels', 'count channel: an hs Tensor [908] of int32, 2000 points in all', 'read back: intensity Float, (unnamed) OnIndex', 'resource: 7 allocations, 0 bytes outstanding'],
};

/** Why an example cannot run on this machine, or null. */
const ipc = ipcAvailability();
const SKIP: Readonly<Record<string, string | null>> = {
  'cross-process-topics.ts': ipc.available ? null : `the IPC addon is unavailable (${ipc.reason})`,
};
for (const [file, reason] of Object.entries(SKIP)) if (reason !== null) console.log(`docs/examples/${file} skipped: ${reason}`);

describe('docs/examples run (host backend, no GPU)', () => {
  for (const file of readdirSync(join(docsDir, 'examples')).filter((f) => f.endsWith('.ts')).sort()) {
    it.skipIf((SKIP[file] ?? null) !== null)(file, async () => {
      expect(EXPECTED[file], `add the expected output of ${file} to EXPECTED`).toBeDefined();
      const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
        execFile(process.execPath, ['--import', 'tsx', join('examples', file)], { cwd: docsDir, timeout: 60_000, env: { ...process.env, HS_BACKEND: 'host' } }, (error, stdout, stderr) =>
          done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
        );
      });
      expect(run.stderr).toBe('');
      expect(run.code, run.stdout).toBe(0);
      for (const expected of EXPECTED[file]!) expect(run.stdout).toContain(expected);
    });
  }
});
