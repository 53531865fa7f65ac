import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ipcAvailability } from '../src/index.js';

// consume.py (examples/python-consumer) reading a pinnedHost topic of another process: frames written on
// the producer's CUDA stream (host backend, 3 ms late) are read only after their generation fence.
const python = spawnSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' }).status === 0;
const script = fileURLToPath(new URL('../../../examples/python-consumer/consume.py', import.meta.url));
const producer = fileURLToPath(new URL('./fixtures/pinned-host-producer.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'hs-py-pinned-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(topic: string, writer: 'cuda' | 'host', frames: number): Promise<{ status: number | null; line: Record<string, unknown> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', producer, dir, topic, String(frames), writer], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const consumer = spawn('python3', [script, '--topic', topic, '--dir', dir, '--memory', 'pinnedHost', '--frames', String(frames), '--check', 'hs-pattern'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  consumer.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const status = await new Promise<number | null>((resolve) => consumer.on('close', resolve));
  await new Promise((resolve) => child.on('close', resolve));
  return { status, line: JSON.parse(out.trim().split('\n').pop() ?? '{}') as Record<string, unknown> };
}

describe.skipIf(!ipcAvailability().available || !python)('consume.py on a pinnedHost topic (skipped without python3 and NumPy)', () => {
  it('waits for each generation fence of a CUDA-stream writer by polling the counter, and reads host-written frames at once', async () => {
    const cuda = await run(`py-cuda-${process.pid}`, 'cuda', 60);
    expect(cuda.line).toMatchObject({ frames: 60, badFrames: 0, fence: 'host-poll', memory: 'pinnedHost' });
    expect(cuda.status).toBe(0);
    const host = await run(`py-host-${process.pid}`, 'host', 20);
    expect(host.line).toMatchObject({ frames: 20, badFrames: 0, fence: 'none', memory: 'pinnedHost' });
    expect(host.status).toBe(0);
  }, 60_000);
});
