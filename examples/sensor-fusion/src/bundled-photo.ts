/// <reference path="./baboon-image-uri.d.ts" />
import baboonDataUri from 'baboon-image-uri';
import { PNG } from 'pngjs';

/** A decoded RGBA photo: `data` holds `height * width * 4` bytes, rows top to bottom. */
export interface Photo {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array;
}

/**
 * Decodes the bundled 128x128 mandrill (the `baboon-image-uri` package, a PNG data URI) to RGBA. The
 * image-pipeline example accepts any PNG or JPEG with full checks; this example needs only this one
 * known-good photo, so it decodes it directly.
 */
export function loadBundledPhoto(): Photo {
  const png = PNG.sync.read(Buffer.from(baboonDataUri.slice(baboonDataUri.indexOf(',') + 1), 'base64'));
  return { width: png.width, height: png.height, data: new Uint8Array(png.data.buffer, png.data.byteOffset, png.data.byteLength) };
}
