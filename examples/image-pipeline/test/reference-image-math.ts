/**
 * Reference arithmetic for the tests, written from the formulas in the example's README and kept apart
 * from src/kernels.ts on purpose: pixel by pixel, by (x, y), with no shared code.
 */

/** Grey value of one RGBA pixel: (77 R + 150 G + 29 B + 128) >> 8. */
export function referenceLuma(r: number, g: number, b: number): number {
  return Math.floor((77 * r + 150 * g + 29 * b + 128) / 256);
}

/** Grey image (row-major, width * height bytes) of a row-major RGBA image. */
export function referenceGray(rgba: Uint8Array, width: number, height: number): number[] {
  const out: number[] = [];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 4;
      out.push(referenceLuma(rgba[p]!, rgba[p + 1]!, rgba[p + 2]!));
    }
  }
  return out;
}

/** 2x2 box downscale with rounding, (a + b + c + d + 2) >> 2; output floor(w/2) x floor(h/2). */
export function referenceDownscale(gray: readonly number[], width: number, height: number): { width: number; height: number; pixels: number[] } {
  const outWidth = Math.floor(width / 2);
  const outHeight = Math.floor(height / 2);
  const pixels: number[] = [];
  for (let y = 0; y < outHeight; y++) {
    for (let x = 0; x < outWidth; x++) {
      const at = (dx: number, dy: number): number => gray[(2 * y + dy) * width + (2 * x + dx)]!;
      pixels.push(Math.floor((at(0, 0) + at(1, 0) + at(0, 1) + at(1, 1) + 2) / 4));
    }
  }
  return { width: outWidth, height: outHeight, pixels };
}
