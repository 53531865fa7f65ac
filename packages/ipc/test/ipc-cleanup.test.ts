// The opt-in signal cleanup (issue 21): the library installs no signal handler; installIpcCleanup() removes
// a publisher's names on SIGINT/SIGTERM and the process still dies of the signal.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { installIpcCleanup, ipcAvailability } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-ipc-cleanup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const script = fileURLToPath(new URL('./fixtures/signalled-publisher.ts', import.meta.url));

async function signalled(topic: string, mode: string, signal: NodeJS.Signals) {
  const child = spawn(process.execPath, ['--import', 'tsx', script, dir, topic, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, got) => resolve({ code, signal: got })));
  const line = await new Promise<string>((resolve) => child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString())));
  const ready = JSON.parse(line.trim()) as { socketPath: string; library: { SIGINT: number; SIGTERM: number } };
  expect(existsSync(ready.socketPath)).toBe(true);
  child.kill(signal);
  return { ready, exit: await exited };
}

describe.skipIf(!ipcAvailability().available)('installIpcCleanup', () => {
  it('removes the topic socket on SIGINT and SIGTERM, and the process still dies of the signal', async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const { ready, exit } = await signalled(`cleanup-${signal}`, 'cleanup', signal);
      expect(ready.library).toEqual({ SIGINT: 0, SIGTERM: 0 }); // the library itself installs none
      expect(exit).toEqual({ code: null, signal });
      expect(existsSync(ready.socketPath)).toBe(false);
    }
  }, 60_000);

  it('without it a signal leaves the socket (the next publisher replaces it as stale), and the uninstaller removes its listeners', async () => {
    const { ready, exit } = await signalled('cleanup-none', 'none', 'SIGTERM');
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(existsSync(ready.socketPath)).toBe(true);
    const before = process.listenerCount('SIGINT');
    const uninstall = installIpcCleanup();
    expect(process.listenerCount('SIGINT')).toBe(before + 1);
    uninstall();
    uninstall();
    expect(process.listenerCount('SIGINT')).toBe(before);
  }, 60_000);
});
