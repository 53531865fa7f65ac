import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { CudaStatus, addCudaTestKernels, loadCudaNative, loadCudaTestAddon } from '../src/index.js';

const loaded = loadCudaNative();
const binding = loaded.ok ? loaded.binding : null;
const hasDevice = loaded.ok && loaded.hasDevice;
if (!loaded.ok) console.log(`@hs/cuda-native tests skipped: ${loaded.reason}`);
else if (!hasDevice) console.log(`@hs/cuda-native device tests skipped: ${loaded.deviceProblem}`);

describe('loadCudaNative', () => {
  it('never throws and says what to do when the addon is unusable', () => {
    const again = loadCudaNative();
    expect(again).toBe(loaded);
    if (!again.ok) expect(again.reason).toMatch(/npx hs-build-addon cuda/);
  });

  it.skipIf(binding === null)('loads the addon and reports "no device" or a device count', () => {
    if (!loaded.ok) return;
    expect(loaded.runtime.runtimeVersion).toBeGreaterThanOrEqual(12000);
    if (loaded.hasDevice) expect(loaded.deviceProblem).toBe('');
    else expect(loaded.deviceProblem).toMatch(/^no device: cudaError/);
    expect(loaded.binding.kernelNames()).toEqual(expect.arrayContaining(['hs.rgbaToGray', 'hs.downscale2x']));
  });

  it.skipIf(binding === null || !loadCudaTestAddon('hs_cuda_test.node').ok)('carries no test kernel: addCudaTestKernels() adds the hs.test.* ones from the test addon, once', () => {
    if (!loaded.ok) return;
    const before = loaded.binding.kernelNames();
    expect(before.filter((name) => name.startsWith('hs.test.'))).toEqual([]);
    expect(addCudaTestKernels()).toEqual({ ok: true, added: 5 });
    expect(addCudaTestKernels()).toEqual({ ok: true, added: 0 });
    const after = loaded.binding.kernelNames();
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toEqual(['hs.test.addScalar', 'hs.test.fill', 'hs.test.spinFill', 'hs.test.copy', 'hs.test.shape']);
    expect(loaded.binding.kernelHostStaged().slice(before.length)).toEqual([false, false, false, false, true]);
    expect(() => loaded.binding.addKernels({})).toThrow(/addKernels: expected the kernel table external/);
  });

  it.skipIf(binding === null)('loads in worker threads and tears down with them (context-aware, cleanup per environment)', async () => {
    if (!loaded.ok) return;
    const code = [
      "const { parentPort } = require('node:worker_threads');",
      `const cuda = require(${JSON.stringify(loaded.path)});`,
      'cuda.setHostCallDispatcher(() => undefined);',
      'cuda.deferFree(1, 0n);',
      'parentPort.postMessage(cuda.runtimeInfo().deviceCount);',
    ].join('\n');
    for (let i = 0; i < 2; i++) {
      const worker = new Worker(code, { eval: true });
      const count = await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      expect(count).toBe(loaded.runtime.deviceCount);
      // 1 when terminate() stopped it, 0 when its event loop had already emptied (the addon keeps nothing
      // alive), undefined when it had already exited by then (a loaded machine): either way the environment
      // tore down without crashing the process.
      expect([0, 1, undefined]).toContain(await worker.terminate());
    }
  });

  it.skipIf(binding === null || hasDevice)('turns CUDA calls without a device into errors carrying the status', () => {
    expect(() => binding!.streamCreate(0, 0)).toThrow(/cudaError/);
    expect(binding!.streamMemoryOpsSupported()).toBe(false);
  });
});

describe.skipIf(!hasDevice)('bindings on a device', () => {
  const cuda = binding!;

  it('reports properties and attributes of device 0', () => {
    const p = cuda.deviceProperties(0);
    expect(p.name.length).toBeGreaterThan(0);
    expect(p.totalGlobalMem).toBeGreaterThan(0);
    expect(p.greatestStreamPriority).toBeLessThanOrEqual(p.leastStreamPriority);
    expect(typeof p.memoryPoolsSupported).toBe('boolean');
    expect(typeof p.ipcEventSupported).toBe('boolean');
  });

  it('creates prioritized streams and queries many events in one call', () => {
    const p = cuda.deviceProperties(0);
    const s = cuda.streamCreate(0, p.greatestStreamPriority);
    expect(cuda.streamPriority(s)).toBe(p.greatestStreamPriority);
    const events = new BigUint64Array(3);
    for (let i = 0; i < 2; i++) {
      events[i] = cuda.eventCreate(0, false);
      expect(cuda.eventRecord(events[i]!, s)).toBe(CudaStatus.Success);
    }
    const flags = new Uint8Array(3);
    let n = cuda.eventQueryMany(events, 3, flags);
    while (n < 3) n = cuda.eventQueryMany(events, 3, flags);
    expect([...flags]).toEqual([1, 1, 1]);
    for (let i = 0; i < 2; i++) expect(cuda.eventDestroy(events[i]!)).toBe(0);
    expect(cuda.streamDestroy(s)).toBe(0);
  });

  it('shares host-accessible memory as an external ArrayBuffer and detaches it before the free', () => {
    const p = cuda.mallocHost(4096);
    const buffer = cuda.externalArrayBuffer(p, 4096);
    const view = new Uint8Array(buffer);
    view[4095] = 7;
    expect(cuda.addressOf(view)).toBe(p);
    cuda.detachArrayBuffer(buffer);
    expect(view.byteLength).toBe(0);
    cuda.deferFree(1, p);
  });

  it('writes and waits 64-bit values in stream order through the driver entry points', async () => {
    expect(cuda.streamMemoryOpsSupported()).toBe(true);
    const flag = cuda.mallocHost(16);
    const words = new BigUint64Array(cuda.externalArrayBuffer(flag, 16));
    words[0] = 0n;
    words[1] = 0n;
    const waiter = cuda.streamCreate(0, 0);
    expect(cuda.streamWaitValue64(waiter, flag, 1n)).toBe(0);
    expect(cuda.streamWriteValue64(waiter, flag + 8n, 42n)).toBe(0);
    await new Promise((r) => setTimeout(r, 20));
    expect(words[1]).toBe(0n);
    words[0] = 1n;
    while (cuda.streamQuery(waiter) === CudaStatus.NotReady) await new Promise((r) => setTimeout(r, 1));
    expect(words[1]).toBe(42n);
    cuda.streamDestroy(waiter);
    cuda.deferFree(1, flag);
  });

  it('exports IPC handles for cudaMalloc memory and interprocess events', () => {
    const p = cuda.malloc(0, 1 << 20);
    expect(cuda.ipcGetMemHandle(p).length).toBe(64);
    const e = cuda.eventCreate(0, true);
    expect(cuda.ipcGetEventHandle(e).length).toBe(64);
    cuda.eventDestroy(e);
    cuda.deferFree(0, p);
  });

  it('captures stream-ordered allocate, memset, copy and free into a graph and launches it twice', async () => {
    const s = cuda.streamCreate(0, 0);
    const out = cuda.mallocHost(1024);
    const view = new Uint8Array(cuda.externalArrayBuffer(out, 1024));
    expect(cuda.streamBeginCapture(s)).toBe(0);
    const scratch = cuda.mallocAsync(1024, s);
    expect(cuda.memsetAsync(scratch, 0x3c, 1024, s)).toBe(0);
    expect(cuda.memcpyAsync(out, scratch, 1024, s)).toBe(0);
    expect(cuda.freeAsync(scratch, s)).toBe(0);
    const graph = cuda.streamEndCapture(s);
    const exec = cuda.graphInstantiate(graph);
    for (let launch = 0; launch < 2; launch++) {
      view.fill(0);
      expect(cuda.graphLaunch(exec, s)).toBe(0);
      while (cuda.streamQuery(s) === CudaStatus.NotReady) await new Promise((r) => setTimeout(r, 1));
      expect(view.every((b) => b === 0x3c)).toBe(true);
    }
    expect(cuda.graphExecDestroy(exec)).toBe(0);
    expect(cuda.graphDestroy(graph)).toBe(0);
    cuda.streamDestroy(s);
    cuda.deferFree(1, out);
  });
});
