import { Device, ErrorCode, HostBackend, HsError, MemoryKind, unwrap, type Backend, type MemoryRange } from '@hs/streams';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DOWNSCALE_2X_KERNEL, ImageKernelLaunch, RGBA_TO_GRAY_KERNEL, downscale2x, rgbaToGray } from '../src/kernels.js';
import { patternRgba } from './fixture-images.js';
import { referenceDownscale, referenceGray } from './reference-image-math.js';

let backend: HostBackend;
beforeEach(() => {
  backend = new HostBackend({ orderingChecker: true });
});
afterEach(() => {
  backend.dispose();
});

/** A whole device allocation of `bytes` bytes as one range. */
function deviceRange(b: Backend, bytes: number, label: string): MemoryRange {
  const memory = unwrap(b.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: bytes, label }));
  return { memory, byteOffset: 0, byteLength: bytes, label };
}

/**
 * Uploads `rgba`, runs grey then downscale on one stream, and reads both results back. Both launches
 * refill ONE record before either runs: correct output shows the backend captured the first launch.
 */
async function runKernels(rgba: Uint8Array, width: number, height: number): Promise<{ gray: Uint8Array; small: Uint8Array }> {
  const stream = unwrap(backend.createStream(Device.cuda(0), { label: 'kernels' }));
  const src = deviceRange(backend, width * height * 4, 'rgba');
  const gray = deviceRange(backend, width * height, 'gray');
  const small = deviceRange(backend, (width >> 1) * (height >> 1), 'small');
  const grayOut = new Uint8Array(gray.byteLength);
  const smallOut = new Uint8Array(small.byteLength);
  unwrap(backend.copyFromHostAsync(stream, src, rgba));
  const launch = new ImageKernelLaunch();
  unwrap(backend.launchKernel(stream, rgbaToGray(src, gray, width, height, launch)));
  unwrap(backend.launchKernel(stream, downscale2x(gray, small, width, height, launch)));
  unwrap(backend.copyToHostAsync(stream, grayOut, gray));
  unwrap(backend.copyToHostAsync(stream, smallOut, small));
  await backend.synchronizeStream(stream);
  return { gray: grayOut, small: smallOut };
}

describe('hs.rgbaToGray and hs.downscale2x on the host backend', () => {
  it('match the reference formulas on every pixel of an odd-sized pattern', async () => {
    const width = 37;
    const height = 23;
    const rgba = patternRgba(width, height);
    const { gray, small } = await runKernels(rgba, width, height);
    const expectedGray = referenceGray(rgba, width, height);
    expect(Array.from(gray)).toEqual(expectedGray);
    const expectedSmall = referenceDownscale(expectedGray, width, height);
    expect([expectedSmall.width, expectedSmall.height]).toEqual([18, 11]);
    expect(Array.from(small)).toEqual(expectedSmall.pixels);
    expect(backend.orderingChecker?.violations ?? []).toEqual([]);
  });

  it('keep the extremes and round half up where truncation would differ', async () => {
    // White, black, pure red, pure blue: grey 255, 0, (77*255+128)>>8 = 77, (29*255+128)>>8 = 29.
    const extremes = Uint8Array.from([255, 255, 255, 255, 0, 0, 0, 255, 255, 0, 0, 255, 0, 0, 255, 255]);
    const { gray } = await runKernels(extremes, 2, 2);
    expect(Array.from(gray)).toEqual([255, 0, 77, 29]);
    // Grey of (0,1,0) is (150+128)>>8 = 1 (0 without the +128); the block 0,0,1,1 averages to (2+2)>>2 = 1
    // (0 without the +2).
    const faint = Uint8Array.from([0, 0, 0, 255, 0, 0, 0, 255, 0, 1, 0, 255, 0, 1, 0, 255]);
    const rounded = await runKernels(faint, 2, 2);
    expect(Array.from(rounded.gray)).toEqual([0, 0, 1, 1]);
    expect(Array.from(rounded.small)).toEqual([1]);
  });

  it('declares its ranges and params in the documented order', () => {
    const src = deviceRange(backend, 6 * 4 * 4, 'src');
    const dst = deviceRange(backend, 6 * 4, 'dst');
    const gray = rgbaToGray(src, dst, 6, 4);
    expect(gray.name).toBe(RGBA_TO_GRAY_KERNEL);
    expect(gray.name).toBe('hs.rgbaToGray');
    expect(gray.reads).toEqual([src]);
    expect(gray.writes).toEqual([dst]);
    expect(gray.params).toEqual([6, 4]);
    const small = deviceRange(backend, 3 * 2, 'small');
    const down = downscale2x(dst, small, 6, 4);
    expect(down.name).toBe(DOWNSCALE_2X_KERNEL);
    expect(down.name).toBe('hs.downscale2x');
    expect(down.params).toEqual([6, 4]);
  });

  it('throw InvalidArgument for ranges too short for the image and for bad dimensions', () => {
    const src = deviceRange(backend, 16, 'src');
    const dst = deviceRange(backend, 4, 'dst');
    const code = (fn: () => unknown): ErrorCode | undefined => {
      try {
        fn();
      } catch (thrown) {
        return thrown instanceof HsError ? thrown.code : undefined;
      }
      return undefined;
    };
    expect(code(() => rgbaToGray(src, dst, 2, 2))).toBeUndefined();
    expect(code(() => rgbaToGray(src, dst, 3, 2))).toBe(ErrorCode.InvalidArgument);
    expect(code(() => rgbaToGray(src, dst, 0, 2))).toBe(ErrorCode.InvalidArgument);
    expect(code(() => rgbaToGray(src, dst, 1.5, 2))).toBe(ErrorCode.InvalidArgument);
    expect(code(() => downscale2x(dst, dst, 1, 4))).toBe(ErrorCode.InvalidArgument);
    expect(code(() => downscale2x(dst, deviceRange(backend, 1, 'one'), 2, 2))).toBeUndefined();
    expect(code(() => downscale2x(src, dst, 5, 4))).toBe(ErrorCode.InvalidArgument);
  });
});
