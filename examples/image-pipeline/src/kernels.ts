import { ErrorCode, HsError, type KernelLaunch, type MemoryRange } from '@hs/streams';

// Backends capture a launch record when launchKernel() returns (Backend.launchKernel), so an operator
// passes one ImageKernelLaunch that each builder call refills: no allocation per frame.

/** Registry name of the RGBA to grey kernel; the CUDA backend looks the device version up by it. */
/**
 * A kernel launch record the builders below refill in place (one range read, one range written,
 * params `[width, height]`). Keep one per operator and pass it to every launch.
 */
export class ImageKernelLaunch implements KernelLaunch {
  name = '';
  readonly reads: MemoryRange[] = [];
  readonly writes: MemoryRange[] = [];
  readonly params: number[] = [0, 0];
  host: KernelLaunch['host'] = rgbaToGrayHost;
}

export const RGBA_TO_GRAY_KERNEL = 'hs.rgbaToGray';
/** Registry name of the 2x2 box downscale kernel; the CUDA backend looks the device version up by it. */
export const DOWNSCALE_2X_KERNEL = 'hs.downscale2x';

/**
 * Builds a launch of `hs.rgbaToGray`: `src` holds `height * width * 4` bytes of packed RGBA uint8
 * (`[H, W, 4]`), `dst` receives `height * width` bytes of uint8 grey (`[H, W]`), where
 * `gray = (77 * R + 150 * G + 29 * B + 128) >> 8` (BT.601 luma weights in 8.8 fixed point, rounded;
 * alpha is ignored).
 *
 * Launch contract shared with the CUDA version (issue #3): `reads = [src]`, `writes = [dst]`,
 * `params = [width, height]` (pixels). Refills and returns `into` (a fresh record when omitted).
 *
 * @throws HsError `ErrorCode.InvalidArgument` when `width` or `height` is not a positive integer or
 *   when a range is shorter than the image needs (a programmer error: the caller sized the tensors).
 */
export function rgbaToGray(src: MemoryRange, dst: MemoryRange, width: number, height: number, into = new ImageKernelLaunch()): KernelLaunch {
  checkDimensions(RGBA_TO_GRAY_KERNEL, width, height);
  checkRange(RGBA_TO_GRAY_KERNEL, 'src', src, width * height * 4);
  checkRange(RGBA_TO_GRAY_KERNEL, 'dst', dst, width * height);
  return fill(into, RGBA_TO_GRAY_KERNEL, rgbaToGrayHost, src, dst, width, height);
}

/**
 * Builds a launch of `hs.downscale2x`: `src` holds `height * width` bytes of uint8 grey (`[H, W]`),
 * `dst` receives `floor(height / 2) * floor(width / 2)` bytes (`[H/2, W/2]`), each output pixel the
 * rounded mean of one 2x2 block, `(a + b + c + d + 2) >> 2`. An odd last row or column is dropped.
 *
 * Launch contract shared with the CUDA version (issue #3): `reads = [src]`, `writes = [dst]`,
 * `params = [width, height]` (of the source, in pixels). Refills and returns `into` (a fresh record when
 * omitted).
 *
 * @throws HsError `ErrorCode.InvalidArgument` when `width` or `height` is not an integer of at least 2
 *   or when a range is shorter than the image needs.
 */
export function downscale2x(src: MemoryRange, dst: MemoryRange, width: number, height: number, into = new ImageKernelLaunch()): KernelLaunch {
  checkDimensions(DOWNSCALE_2X_KERNEL, width, height);
  if (width < 2 || height < 2) {
    throw new HsError(ErrorCode.InvalidArgument, `${DOWNSCALE_2X_KERNEL}: a ${width}x${height} image has no 2x2 block`);
  }
  checkRange(DOWNSCALE_2X_KERNEL, 'src', src, width * height);
  checkRange(DOWNSCALE_2X_KERNEL, 'dst', dst, (width >> 1) * (height >> 1));
  return fill(into, DOWNSCALE_2X_KERNEL, downscale2xHost, src, dst, width, height);
}

/** Host implementation of `hs.rgbaToGray`; allocates nothing. */
function rgbaToGrayHost(reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const src = reads[0]!;
  const dst = writes[0]!;
  const pixels = params[0]! * params[1]!;
  for (let i = 0, s = 0; i < pixels; i++, s += 4) {
    dst[i] = (77 * src[s]! + 150 * src[s + 1]! + 29 * src[s + 2]! + 128) >> 8;
  }
}

/** Host implementation of `hs.downscale2x`; allocates nothing. */
function downscale2xHost(reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const src = reads[0]!;
  const dst = writes[0]!;
  const width = params[0]!;
  const outWidth = width >> 1;
  const outHeight = params[1]! >> 1;
  let d = 0;
  for (let y = 0; y < outHeight; y++) {
    let top = 2 * y * width;
    let bottom = top + width;
    for (let x = 0; x < outWidth; x++, top += 2, bottom += 2) {
      dst[d++] = (src[top]! + src[top + 1]! + src[bottom]! + src[bottom + 1]! + 2) >> 2;
    }
  }
}

function fill(
  into: ImageKernelLaunch,
  name: string,
  host: KernelLaunch['host'],
  src: MemoryRange,
  dst: MemoryRange,
  width: number,
  height: number,
): ImageKernelLaunch {
  into.name = name;
  into.host = host;
  into.reads[0] = src;
  into.writes[0] = dst;
  into.params[0] = width;
  into.params[1] = height;
  return into;
}

function checkDimensions(kernel: string, width: number, height: number): void {
  if (!Number.isSafeInteger(width) || !Number.isSafeInteger(height) || width <= 0 || height <= 0) {
    throw new HsError(ErrorCode.InvalidArgument, `${kernel}: width and height must be positive integers, got ${width}x${height}`);
  }
}

function checkRange(kernel: string, role: string, range: MemoryRange, needed: number): void {
  if (range.byteLength < needed) {
    throw new HsError(
      ErrorCode.InvalidArgument,
      `${kernel}: ${role} range '${range.label}' has ${range.byteLength} bytes, the image needs ${needed}`,
    );
  }
}
