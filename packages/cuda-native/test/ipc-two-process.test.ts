import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CudaStatus, addCudaTestKernels, loadCudaNative } from '../src/index.js';

const loaded = loadCudaNative();
// hs.test.spinFill, the producer, comes from the test addon.
const kernels = addCudaTestKernels();
const hasDevice = loaded.ok && loaded.hasDevice && kernels.ok;
if (!hasDevice) console.log(`CUDA IPC two-process test skipped: ${loaded.ok ? loaded.deviceProblem : loaded.reason}`);

/** Bytes process A shares: the first half A's kernel fills, the second half process B fills. */
const HALF = 1 << 20;
/** Device time A's producer kernel spins before it writes, ns: longer than B needs to start. */
const PRODUCER_NS = 1_500_000_000;

/**
 * Process B, run by `node -e`: opens A's memory and event from the hex handles in argv, sizes the mapped
 * allocation (`ipcMemRange`), waits on the
 * event on its own stream, copies the first half into pinned memory, fills the second half with 0x77,
 * closes both handles and prints one JSON line.
 */
const PROCESS_B = `
const cuda = require(process.env.HS_IPC_ADDON);
const [memHex, eventHex, half] = process.argv.slice(-3);
const n = Number(half);
const check = (what, status) => { if (status !== 0) throw new Error(what + ': ' + cuda.errorName(status)); };
const remote = cuda.ipcOpenMemHandle(0, Buffer.from(memHex, 'hex'));
const range = cuda.ipcMemRange(0, remote);
const mappedBytes = range.base === remote ? range.size : -1;
const ready = cuda.ipcOpenEventHandle(0, Buffer.from(eventHex, 'hex'));
const pendingAtWait = cuda.eventQuery(ready) === 600;
const stream = cuda.streamCreate(0, 0);
const pinned = cuda.mallocHost(n);
const view = new Uint8Array(cuda.externalArrayBuffer(pinned, n));
view.fill(0);
check('streamWaitEvent', cuda.streamWaitEvent(stream, ready));
check('memcpyAsync', cuda.memcpyAsync(pinned, remote, n, stream));
check('memsetAsync', cuda.memsetAsync(remote + BigInt(n), 0x77, n, stream));
const poll = () => {
  const status = cuda.streamQuery(stream);
  if (status === 600) return setTimeout(poll, 1);
  check('streamQuery', status);
  const filled = view.reduce((count, b) => count + (b === 0x5a ? 1 : 0), 0);
  const closeStatus = cuda.ipcCloseMemHandle(remote);
  check('eventDestroy', cuda.eventDestroy(ready));
  check('streamDestroy', cuda.streamDestroy(stream));
  cuda.deferFree(1, pinned);
  console.log(JSON.stringify({ pendingAtWait, filled, closeStatus, mappedBytes }));
};
poll();
`;

function runProcessB(addon: string, memHandle: Buffer, eventHandle: Buffer): Promise<{ pendingAtWait: boolean; filled: number; closeStatus: number; mappedBytes: number }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', PROCESS_B, memHandle.toString('hex'), eventHandle.toString('hex'), String(HALF)],
      { env: { ...process.env, HS_IPC_ADDON: addon }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`process B failed: ${error.message}\n${stderr}`));
        const line = stdout.trim().split('\n').pop() ?? '';
        try {
          resolve(JSON.parse(line));
        } catch {
          reject(new Error(`process B printed no result: ${stdout}\n${stderr}`));
        }
      },
    );
  });
}

async function drain(cuda: { streamQuery(stream: bigint): number }, stream: bigint): Promise<void> {
  let status: number;
  while ((status = cuda.streamQuery(stream)) === CudaStatus.NotReady) await new Promise((r) => setTimeout(r, 1));
  expect(status).toBe(CudaStatus.Success);
}

// initcheck tracks writes per process: bytes process A wrote read as uninitialized in process B.
describe.skipIf(process.env['HS_GPU_SANITIZER_TOOL'] === 'initcheck')('CUDA IPC between two processes', () => {
  it.skipIf(!loaded.ok)('refuses handles that are not 64-byte Buffers before touching CUDA', () => {
    if (!loaded.ok) return;
    expect(() => loaded.binding.ipcOpenMemHandle(0, Buffer.alloc(63))).toThrow(/64 bytes/);
    expect(() => loaded.binding.ipcOpenEventHandle(0, Buffer.alloc(65))).toThrow(/64 bytes/);
  });

  it.skipIf(!hasDevice)("process B waits on A's event on its own stream, reads A's bytes and writes into A's memory", async () => {
    if (!loaded.ok) return;
    const cuda = loaded.binding;
    const memory = cuda.malloc(0, 2 * HALF);
    const ready = cuda.eventCreate(0, true);
    const stream = cuda.streamCreate(0, 0);
    const pinned = cuda.mallocHost(HALF);
    const view = new Uint8Array(cuda.externalArrayBuffer(pinned, HALF));
    try {
      expect(cuda.memsetAsync(memory, 0, 2 * HALF, stream)).toBe(0);
      await drain(cuda, stream);
      const spinFill = cuda.kernelNames().indexOf('hs.test.spinFill');
      const args = [new BigUint64Array([memory]), new Float64Array([HALF]), new Float64Array([PRODUCER_NS, 0x5a])] as const;
      expect(cuda.launchKernel(spinFill, stream, args[0], args[1], 0, 1, args[2], 2)).toBe(0);
      expect(cuda.eventRecord(ready, stream)).toBe(0);
      const b = await runProcessB(loaded.path, cuda.ipcGetMemHandle(memory), cuda.ipcGetEventHandle(ready));
      console.log(`ipc: process B queued its wait while A's event was ${b.pendingAtWait ? 'pending' : 'already complete'}; read ${b.filled}/${HALF} bytes 0x5a`);
      // ipcMemRange sizes the mapping from its first byte: the whole exported allocation, what an importer checks HELLO against.
      expect(b).toEqual({ pendingAtWait: b.pendingAtWait, filled: HALF, closeStatus: 0, mappedBytes: 2 * HALF });
      expect(cuda.memcpyAsync(pinned, memory + BigInt(HALF), HALF, stream)).toBe(0);
      await drain(cuda, stream);
      expect(view.every((v) => v === 0x77)).toBe(true);
    } finally {
      cuda.detachArrayBuffer(view.buffer as ArrayBuffer);
      cuda.streamDestroy(stream);
      cuda.eventDestroy(ready);
      cuda.deferFree(1, pinned);
      cuda.deferFree(0, memory);
    }
  }, 120_000);
});
