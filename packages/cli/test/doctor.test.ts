import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../src/index.js';
import { hs, spawnHs } from './run-hs.js';

let outside: string;
beforeAll(async () => {
  outside = await mkdtemp(join(tmpdir(), 'hs-doctor-'));
});
afterAll(async () => {
  await rm(outside, { recursive: true, force: true });
});

interface Report {
  backend: string | undefined;
  hostBackendWorks: boolean;
  checks: { name: string; status: string; detail: string; todo?: string }[];
}

async function report(env: Record<string, string | undefined>, cwd?: string): Promise<Report> {
  const { exitCode, out } = await hs(['doctor', '--json'], { env, cwd });
  expect(exitCode).toBe(ExitCode.Success);
  return JSON.parse(out.join('\n')) as Report;
}

describe('hs doctor', () => {
  it('verifies the host backend with a round trip and exits 0', async () => {
    const { checks, hostBackendWorks, backend } = await report({ HS_BACKEND: 'host' });
    expect(hostBackendWorks).toBe(true);
    expect(backend).toBe('host');
    expect(checks.find((c) => c.name === 'host backend')).toEqual({
      name: 'host backend',
      status: 'ok',
      detail: 'stream, 4096-byte cudaDevice allocation on cuda:0, fill and copy back verified',
    });
    expect(checks.find((c) => c.name === 'backend')?.detail).toBe('host (chosen by HS_BACKEND=host)');
  });

  it('gives every missing or failed piece a to-do line', async () => {
    const { checks } = await report({});
    expect(checks.some((c) => c.name === 'CUDA addon')).toBe(true);
    for (const check of checks) {
      if (check.status === 'ok') expect(check.todo).toBeUndefined();
      else expect(check.todo).toMatch(/\S/);
    }
  });

  it('reports a bad HS_BACKEND as failed with what to do, still exit 0 because the host backend works', async () => {
    const { checks, backend } = await report({ HS_BACKEND: 'opencl' });
    expect(backend).toBeUndefined();
    expect(checks.find((c) => c.name === 'backend')).toMatchObject({
      status: 'failed',
      detail: expect.stringContaining('unknown backend "opencl" from HS_BACKEND'),
      todo: 'unset HS_BACKEND (auto-detection) or set HS_BACKEND=host to run on the host backend',
    });
  });

  it('says how to get @hs/ipc outside a checkout, and finds it inside one', async () => {
    const away = await report({ HS_BACKEND: 'host' }, outside);
    expect(away.checks.find((c) => c.name === '@hs/ipc')).toEqual({
      name: '@hs/ipc',
      status: 'missing',
      detail: 'not installed here',
      todo: 'for cross-process topics add @hs/ipc to your project (pnpm add @hs/ipc)',
    });
    const here = await report({ HS_BACKEND: 'host' });
    expect(here.checks.find((c) => c.name === '@hs/ipc')?.detail).toMatch(/native addon (loaded from|not built)/);
  });

  it('prints aligned lines as the built bin, exit code 0', async () => {
    const { code, stdout } = await spawnHs(['doctor']);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('hs doctor');
    expect(lines).toContain('  ok      host backend: stream, 4096-byte cudaDevice allocation on cuda:0, fill and copy back verified');
    expect(lines.at(-1)).toBe('hs runs here on the host backend');
  });
});
