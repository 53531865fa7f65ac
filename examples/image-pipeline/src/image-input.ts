/// <reference path="./baboon-image-uri.d.ts" />
import { basename } from 'node:path';
import { ErrorCode, OK_VOID, err, ok, readRegularFile, unwrap, type Result } from '@hs/streams';
import baboonDataUri from 'baboon-image-uri';
import { decode as decodeJpeg } from 'jpeg-js';
import { PNG } from 'pngjs';
import { findPngStructureProblem } from './png-structure.js';

/**
 * A decoded image: `data` holds `height * width * 4` bytes, row-major, RGBA, 8 bits per channel
 * (the `[H, W, 4]` uint8 layout the image source emits).
 */
export interface RgbaImage {
  /** Where the image came from (file base name, or `mandrill` for the bundled photo). */
  readonly name: string;
  /** Columns, in pixels. */
  readonly width: number;
  /** Rows, in pixels. */
  readonly height: number;
  /** `height * width * 4` bytes: R, G, B, A per pixel, rows top to bottom. */
  readonly data: Uint8Array;
}

/**
 * Accepted image dimensions, in pixels, inclusive. The pipeline sizes its pools from the maxima, so an
 * image outside them is rejected before it is decoded.
 */
export interface ImageBounds {
  readonly minWidth: number;
  readonly minHeight: number;
  readonly maxWidth: number;
  readonly maxHeight: number;
}

/** The image formats the example decodes, detected from the first bytes of the data. */
export type ImageFormat = 'png' | 'jpeg';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const;
const JPEG_SIGNATURE = [0xff, 0xd8, 0xff] as const;

/**
 * Detects PNG or JPEG from the leading magic bytes (never from a file name).
 * @returns the format, or `undefined` when the bytes start like neither.
 */
export function detectImageFormat(bytes: Uint8Array): ImageFormat | undefined {
  if (startsWith(bytes, PNG_SIGNATURE)) return 'png';
  if (startsWith(bytes, JPEG_SIGNATURE)) return 'jpeg';
  return undefined;
}

/**
 * Decodes a PNG or JPEG held in memory into RGBA uint8. The dimensions are read from the header and
 * checked against `bounds` before any pixel is decoded.
 *
 * Any PNG colour type and bit depth is accepted (16-bit channels are scaled to 8 bits, grey and
 * palette images are expanded, missing alpha becomes 255); baseline and progressive JPEGs with 1 or 3
 * components are accepted (alpha 255).
 *
 * @param name label used in error messages and in `RgbaImage.name`.
 * A PNG's chunk structure is checked before decoding (see `findPngStructureProblem`): a chunk with a bad
 * CRC is named, and a PNG without IDAT, or whose IDAT data is shorter or longer than its header implies,
 * is rejected rather than decoded to black pixels. PNG failures read `input '<name>': not a valid PNG (<what is wrong>)`.
 *
 * @returns `ErrorCode.InvalidArgument` when the bytes are neither PNG nor JPEG, when the header, chunk
 *   structure or pixel data is corrupt, or when the dimensions fall outside `bounds`.
 */
export function decodeImage(bytes: Uint8Array, name: string, bounds: ImageBounds): Result<RgbaImage> {
  const format = detectImageFormat(bytes);
  if (format === undefined) {
    const head = Array.from(bytes.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join(' ');
    return err(
      ErrorCode.InvalidArgument,
      `input '${name}' is not a PNG or JPEG image (first bytes: ${head || 'none, the file is empty'}); ` +
        'convert it to PNG or JPEG',
    );
  }
  const size = format === 'png' ? readPngSize(bytes) : readJpegSize(bytes);
  if (size === undefined) {
    return err(ErrorCode.InvalidArgument, `input '${name}' looks like a ${format.toUpperCase()} but its header is corrupt or truncated`);
  }
  const checked = checkBounds(name, size.width, size.height, bounds);
  if (!checked.ok) return checked;
  if (format === 'png') {
    const problem = findPngStructureProblem(bytes);
    if (problem !== undefined) return err(ErrorCode.InvalidArgument, notValidPng(name, problem));
  }
  try {
    const data = format === 'png' ? decodePngPixels(bytes) : decodeJpegPixels(bytes);
    if (data.byteLength !== size.width * size.height * 4) {
      return err(ErrorCode.InvalidArgument, `input '${name}' decoded to ${data.byteLength} bytes, expected ${size.width}x${size.height} RGBA`);
    }
    return ok({ name, width: size.width, height: size.height, data });
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    const message = format === 'png' ? notValidPng(name, reason) : `input '${name}' is a corrupt JPEG (${reason})`;
    return err(ErrorCode.InvalidArgument, message, cause);
  }
}

/**
 * Reads and decodes one image file. The format is detected from the file's bytes.
 * @returns the decoded image.
 * @throws HsError (the promise rejects) when the file cannot be read, with `fileSystemError`'s typed error
 *   `cannot read input '<path>': <OS code>: <OS message>`: `NotFound` for a missing file (ENOENT),
 *   `PermissionDenied` for EACCES/EPERM, `InvalidArgument` otherwise; `InvalidArgument` naming the type for
 *   anything that is not a regular file (a directory, a FIFO: `readRegularFile`, so a FIFO cannot hang the
 *   read); else with any
 *   error `decodeImage` gives (`InvalidArgument`).
 */
export async function loadImageFile(path: string, bounds: ImageBounds): Promise<RgbaImage> {
  const bytes = await readRegularFile(path, { label: `input '${path}'` });
  return unwrap(decodeImage(bytes, basename(path), bounds));
}

/**
 * Reads and decodes several image files, in order. Stops at the first failure.
 * @returns the images.
 * @throws HsError (the promise rejects) with the first file's error (see `loadImageFile`).
 */
export async function loadImageFiles(paths: readonly string[], bounds: ImageBounds): Promise<RgbaImage[]> {
  const images: RgbaImage[] = [];
  for (const path of paths) images.push(await loadImageFile(path, bounds));
  return images;
}

/**
 * The bundled test photo (the mandrill, 128x128, from the `baboon-image-uri` package), decoded from its
 * PNG data URI.
 * @returns `ErrorCode.InvalidArgument` when the photo does not fit `bounds`.
 */
export function loadBundledMandrill(bounds: ImageBounds): Result<RgbaImage> {
  const base64 = baboonDataUri.slice(baboonDataUri.indexOf(',') + 1);
  return decodeImage(Buffer.from(base64, 'base64'), 'mandrill', bounds);
}

/**
 * The images a run emits: the files at `inputs` (PNG or JPEG, detected by content), or the bundled
 * mandrill when `inputs` is `undefined`.
 * @returns the decoded images.
 * @throws HsError (the promise rejects) with the first file's failure (see `loadImageFiles`,
 *   `loadBundledMandrill`).
 */
export async function loadImageInputs(inputs: readonly string[] | undefined, bounds: ImageBounds): Promise<readonly RgbaImage[]> {
  return inputs === undefined ? [unwrap(loadBundledMandrill(bounds))] : loadImageFiles(inputs, bounds);
}

function notValidPng(name: string, reason: string): string {
  return `input '${name}': not a valid PNG (${reason})`;
}

function startsWith(bytes: Uint8Array, signature: readonly number[]): boolean {
  if (bytes.byteLength < signature.length) return false;
  return signature.every((b, i) => bytes[i] === b);
}

function checkBounds(name: string, width: number, height: number, bounds: ImageBounds): Result<void> {
  if (width > bounds.maxWidth || height > bounds.maxHeight) {
    return err(
      ErrorCode.InvalidArgument,
      `input '${name}' is ${width}x${height} pixels, larger than the configured bound ` +
        `${bounds.maxWidth}x${bounds.maxHeight}; resize it or raise the bound`,
    );
  }
  if (width < bounds.minWidth || height < bounds.minHeight) {
    return err(
      ErrorCode.InvalidArgument,
      `input '${name}' is ${width}x${height} pixels, smaller than the minimum ${bounds.minWidth}x${bounds.minHeight}`,
    );
  }
  return OK_VOID;
}

/** Width and height from the IHDR chunk, which must directly follow the signature. */
function readPngSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  if (bytes.byteLength < 24) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const isIhdr = bytes[12] === 0x49 && bytes[13] === 0x48 && bytes[14] === 0x44 && bytes[15] === 0x52;
  if (!isIhdr) return undefined;
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  return width > 0 && height > 0 ? { width, height } : undefined;
}

/** Width and height from the first start-of-frame segment, walking the marker segments before it. */
function readJpegSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 2;
  while (offset + 4 <= bytes.byteLength) {
    if (bytes[offset] !== 0xff) return undefined;
    const marker = bytes[offset + 1]!;
    if (marker === 0xff) {
      offset += 1; // fill byte
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return undefined; // scan or end of image before any frame header
    const length = view.getUint16(offset + 2);
    const isStartOfFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isStartOfFrame) {
      if (offset + 9 > bytes.byteLength) return undefined;
      const height = view.getUint16(offset + 5);
      const width = view.getUint16(offset + 7);
      return width > 0 && height > 0 ? { width, height } : undefined;
    }
    if (length < 2) return undefined;
    offset += 2 + length;
  }
  return undefined;
}

function decodePngPixels(bytes: Uint8Array): Uint8Array {
  const png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return new Uint8Array(png.data.buffer, png.data.byteOffset, png.data.byteLength);
}

function decodeJpegPixels(bytes: Uint8Array): Uint8Array {
  return decodeJpeg(bytes, { useTArray: true, formatAsRGBA: true }).data;
}
