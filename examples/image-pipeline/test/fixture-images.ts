import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { encode as encodeJpeg } from 'jpeg-js';
import { PNG } from 'pngjs';

/** A deterministic RGBA test pattern (gradients plus a checker), `width * height * 4` bytes. */
export function patternRgba(width: number, height: number): Uint8Array {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 4;
      data[p] = (x * 255) / Math.max(1, width - 1);
      data[p + 1] = (y * 255) / Math.max(1, height - 1);
      data[p + 2] = (x + y) % 2 === 0 ? 255 : 0;
      data[p + 3] = 200;
    }
  }
  return data;
}

/** Encodes RGBA pixels as a PNG (colour type 6 by default, or 2 for RGB without alpha). */
export function encodePng(rgba: Uint8Array, width: number, height: number, colorType: 2 | 6 = 6): Buffer {
  const image = { width, height, data: Buffer.from(rgba) };
  return PNG.sync.write(image as PNG, { colorType });
}

/** Encodes RGBA pixels as a baseline JPEG at quality 90. */
export function encodeJpegImage(rgba: Uint8Array, width: number, height: number): Buffer {
  return encodeJpeg({ width, height, data: rgba }, 90).data;
}

/** Writes `bytes` to `dir/name` and returns the path. */
export async function writeFixture(dir: string, name: string, bytes: Uint8Array): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, bytes);
  return path;
}
