import { CudaBackend, Device, MemoryKind, unwrap, type DeviceMemory, type KernelLaunch, type MemoryRange } from '@hs/streams';
import { afterAll, describe, expect, it } from 'vitest';
import { downscale2x, rgbaToGray } from '../../../examples/image-pipeline/src/kernels.js';

const gpu = CudaBackend.available();
if (!gpu) console.log('image kernel GPU tests skipped: no CUDA device or @hs/cuda-native not built');

const whole = (memory: DeviceMemory): MemoryRange => ({ memory, byteOffset: 0, byteLength: memory.byteSize, label: 'image' });

/** Deterministic pseudo-random bytes. */
function noise(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

describe.skipIf(!gpu)('image-pipeline kernels on CUDA match the host implementations byte for byte', () => {
  const backend = gpu ? unwrap(CudaBackend.create()) : (null as never);
  afterAll(() => backend?.dispose());

  async function runOnDevice(make: (src: MemoryRange, dst: MemoryRange) => KernelLaunch, input: Uint8Array, outBytes: number): Promise<Uint8Array> {
    const device = backend.devices[0] as Device;
    const s = unwrap(backend.createStream(device, { label: 'kernels' }));
    const src = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: input.byteLength }));
    const dst = unwrap(backend.allocate({ kind: MemoryKind.CudaDevice, device, byteSize: outBytes }));
    unwrap(backend.copyFromHostAsync(s, whole(src), input));
    unwrap(backend.launchKernel(s, make(whole(src), whole(dst))));
    const out = new Uint8Array(outBytes);
    unwrap(backend.copyToHostAsync(s, out, whole(dst)));
    await backend.synchronizeStream(s);
    return out;
  }

  for (const [width, height] of [
    [1, 1],
    [640, 480],
    [1023, 517],
  ] as const) {
    it(`hs.rgbaToGray ${width}x${height}`, async () => {
      const rgba = noise(width * height * 4, width + height);
      const fake = (n: number): MemoryRange => ({ memory: { byteSize: n } as DeviceMemory, byteOffset: 0, byteLength: n, label: 'host' });
      const launch = rgbaToGray(fake(rgba.byteLength), fake(width * height), width, height);
      const expected = new Uint8Array(width * height);
      launch.host([rgba], [expected], launch.params);
      const got = await runOnDevice((src, dst) => rgbaToGray(src, dst, width, height), rgba, width * height);
      expect(Buffer.compare(Buffer.from(got), Buffer.from(expected))).toBe(0);
    });
  }

  for (const [width, height] of [
    [2, 2],
    [640, 480],
    [1023, 517],
  ] as const) {
    it(`hs.downscale2x ${width}x${height}`, async () => {
      const gray = noise(width * height, width * 3 + height);
      const outBytes = (width >> 1) * (height >> 1);
      const fake = (n: number): MemoryRange => ({ memory: { byteSize: n } as DeviceMemory, byteOffset: 0, byteLength: n, label: 'host' });
      const launch = downscale2x(fake(gray.byteLength), fake(outBytes), width, height);
      const expected = new Uint8Array(outBytes);
      launch.host([gray], [expected], launch.params);
      const got = await runOnDevice((src, dst) => downscale2x(src, dst, width, height), gray, outBytes);
      expect(Buffer.compare(Buffer.from(got), Buffer.from(expected))).toBe(0);
    });
  }
});
