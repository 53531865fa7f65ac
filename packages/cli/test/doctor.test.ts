import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CudaDeviceFault, CudaDeviceProperties, CudaReport } from '@hs/streams';
import { PREBUILT_FLOORS, PREBUILT_PLATFORMS, prebuiltPlatform } from '@hs/native-addon';
import { cudaChecks, ipcAddonCheck, prebuiltCheck } from '../src/doctor-checks.js';
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
    const ipc = here.checks.find((c) => c.name === '@hs/ipc')?.detail;
    expect(ipc).toMatch(/native addon loaded from|addon is not installed/);
    if (ipc?.startsWith('native addon loaded')) expect(ipc).toMatch(/ \(ABI \d+\); topic mailboxes (available|unavailable \()/);
  });

  it('reports an installed @hs/ipc whose addon is missing or broken, with the build command', async () => {
    const installIpc = async (project: string): Promise<string> => {
      const installed = join(outside, project, 'node_modules', '@hs', 'ipc');
      await mkdir(join(installed, 'build'), { recursive: true });
      await writeFile(join(installed, 'package.json'), '{"name":"@hs/ipc"}');
      return installed;
    };
    const ipcCheck = async (project: string) => (await report({ HS_BACKEND: 'host' }, join(outside, project))).checks.find((c) => c.name === '@hs/ipc');
    const unbuilt = await installIpc('unbuilt');
    const missing = await ipcCheck('unbuilt');
    expect(missing).toMatchObject({ status: 'missing', todo: 'install cmake and a C++ compiler, then: npx hs-build-addon ipc' });
    expect(missing?.detail).toContain(`${join(unbuilt, 'build', 'hs_ipc.node')} is missing`);
    // One process keeps the first outcome per path, so the broken addon lives in another project.
    await writeFile(join(await installIpc('broken'), 'build', 'hs_ipc.node'), 'not an ELF file');
    const broken = await ipcCheck('broken');
    expect(broken).toMatchObject({ status: 'failed', todo: 'rebuild it: npx hs-build-addon ipc' });
    expect(broken?.detail).toContain('failed to load');
  });

  it('states the prebuilt addons\' floors (glibc, NVIDIA driver) on a platform that has them, and the source build elsewhere', () => {
    const check = prebuiltCheck();
    if (PREBUILT_PLATFORMS.includes(prebuiltPlatform())) {
      expect(check).toEqual({
        name: 'prebuilt addons',
        status: 'ok',
        detail: `@hs/native-${prebuiltPlatform()} for ${prebuiltPlatform()}: needs glibc ${PREBUILT_FLOORS.glibc} or newer and, for CUDA, an NVIDIA driver ${PREBUILT_FLOORS.nvidiaDriver} or newer (CUDA ${PREBUILT_FLOORS.cuda})`,
      });
    } else {
      expect(check).toMatchObject({ status: 'missing', detail: `hs publishes no prebuilt addon for ${prebuiltPlatform()} yet (only for linux-x64-gnu)`, todo: expect.stringContaining('npx hs-build-addon') });
    }
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

describe('CUDA checks', () => {
  const properties = (ordinal: number, pools: boolean, ipc: boolean, handleTypes: number): CudaDeviceProperties => ({
    ordinal,
    name: `GPU ${ordinal}`,
    totalGlobalMem: 80 * 2 ** 30,
    computeCapability: '9.0',
    multiProcessorCount: 132,
    pciBusId: ordinal,
    memoryPoolsSupported: pools,
    memoryPoolSupportedHandleTypes: handleTypes,
    ipcEventSupported: ipc,
    unifiedAddressing: true,
    managedMemory: true,
    concurrentManagedAccess: true,
    hostRegisterSupported: true,
    leastStreamPriority: 0,
    greatestStreamPriority: -5,
  });
  const load = (devices: readonly (CudaDeviceProperties | CudaDeviceFault)[]): CudaReport => ({
    addon: 'loaded',
    path: '/x/hs_cuda.node',
    abiVersion: 1,
    runtimeVersion: 12040,
    driverVersion: 13000,
    statusText: 'cudaSuccess',
    streamMemoryOps: true,
    devices,
  });

  it('lists each device with memory-pool and IPC support, and what to do where one is missing', () => {
    const devices = [properties(0, true, true, 1 | 8), properties(1, false, false, 0)];
    const checks = cudaChecks(load(devices));
    expect(checks.map((c) => [c.name, c.status, c.detail])).toEqual([
      ['CUDA addon', 'ok', 'loaded from /x/hs_cuda.node'],
      ['CUDA runtime', 'ok', '12.4'],
      ['CUDA driver', 'ok', 'supports CUDA 13.0'],
      ['cuda:0', 'ok', 'GPU 0, compute capability 9.0, 80.0 GiB, 132 SMs'],
      ['cuda:0 memory pools', 'ok', 'stream-ordered allocation (cudaMallocAsync) supported'],
      ['cuda:0 IPC', 'ok', 'events shareable; pool handle types: POSIX file descriptor, fabric'],
      ['cuda:1', 'ok', 'GPU 1, compute capability 9.0, 80.0 GiB, 132 SMs'],
      ['cuda:1 memory pools', 'missing', 'the device or driver does not support memory pools'],
      ['cuda:1 IPC', 'missing', 'events not shareable; pool handle types: none'],
    ]);
    expect(checks.filter((c) => c.status !== 'ok').every((c) => (c.todo ?? '').length > 0)).toBe(true);
  });

  it('reports a device whose properties cannot be read as failed, and a missing addon with its reason', () => {
    const checks = cudaChecks(load([{ ordinal: 0, error: 'cudaErrorDevicesUnavailable' }]));
    expect(checks.at(-1)).toMatchObject({ name: 'cuda:0', status: 'failed', detail: 'device properties unreadable (cudaErrorDevicesUnavailable)' });
    expect(cudaChecks({ addon: 'unavailable', reason: 'the CUDA addon is not built: build it' })).toEqual([
      { name: 'CUDA addon', status: 'missing', detail: 'not loaded, so no CUDA backend', todo: 'the CUDA addon is not built: build it' },
    ]);
  });
});

describe('hs doctor: the @hs/ipc addon check decides as @hs/ipc does', () => {
  const fn = (): void => undefined;
  const wireV2 = { createSealedSegment: fn, openSealedSegment: fn, sendWithDescriptors: fn, connectAndReceive: fn };

  it('says mailboxes are available only with the doorbell pipes of ABI 6 (watchDoorbell and createDoorbellPipe)', () => {
    expect(ipcAddonCheck('/x/hs_ipc.node', { abiVersion: 6, ...wireV2, watchDoorbell: fn, createDoorbellPipe: fn })).toEqual({
      name: '@hs/ipc',
      status: 'ok',
      detail: 'native addon loaded from /x/hs_ipc.node (ABI 6); topic mailboxes available',
    });
    // ABI 5 watched named FIFO doorbells: @hs/ipc's mailboxSupport() refuses it, so the doctor does too.
    const fifo = ipcAddonCheck('/x/hs_ipc.node', { abiVersion: 5, ...wireV2, watchDoorbell: fn });
    expect(fifo.status).toBe('ok');
    expect(fifo.detail).toBe(
      'native addon loaded from /x/hs_ipc.node (ABI 5); topic mailboxes unavailable (ABI 5 has named doorbell FIFOs; mailboxes need the doorbell pipes of ABI 6; descriptors go over the socket; rebuild: npx hs-build-addon ipc)',
    );
    const noLibuv = ipcAddonCheck('/x/hs_ipc.node', { abiVersion: 6, ...wireV2 });
    expect(noLibuv.detail).toMatch(/; topic mailboxes unavailable \(built without libuv/);
  });

  it('fails an addon older than wire version 2 (no sealed segments or descriptor passing), with the rebuild command', () => {
    for (const exports of [{ abiVersion: 4, watchDoorbell: fn }, { abiVersion: 5, ...wireV2, connectAndReceive: undefined }, {}]) {
      const check = ipcAddonCheck('/x/hs_ipc.node', exports);
      expect(check).toMatchObject({ name: '@hs/ipc', status: 'failed', todo: 'rebuild it: npx hs-build-addon ipc' });
      expect(check.detail).toMatch(/is older than wire version 2 needs \(ABI 5: sealed segments passed with HELLO\); every topic fails with NotSupported$/);
    }
    expect(ipcAddonCheck('/x/hs_ipc.node', { abiVersion: 4 }).detail).toContain('(ABI 4)');
    expect(ipcAddonCheck('/x/hs_ipc.node', {}).detail).toContain('(no ABI version)');
  });
});
