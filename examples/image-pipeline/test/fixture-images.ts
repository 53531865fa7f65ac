import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
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

/** IHDR fields of a hand-built PNG. */
export interface PngHeaderFields {
  readonly width: number;
  readonly height: number;
  readonly colorType: number;
  readonly bitDepth: number;
  readonly interlaced: boolean;
}

/**
 * Builds a PNG byte by byte: signature, IHDR, one IDAT holding `imageData` deflated (or no IDAT when
 * `imageData` is `null`), IEND; every chunk with a correct CRC. Lets tests make files an encoder never would.
 */
export function buildPng(header: PngHeaderFields, imageData: Uint8Array | null): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(header.width, 0);
  ihdr.writeUInt32BE(header.height, 4);
  ihdr[8] = header.bitDepth;
  ihdr[9] = header.colorType;
  ihdr[12] = header.interlaced ? 1 : 0;
  const chunks = [pngChunk('IHDR', ihdr)];
  if (imageData !== null) chunks.push(pngChunk('IDAT', deflateSync(imageData)));
  chunks.push(pngChunk('IEND', Buffer.alloc(0)));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ...chunks]);
}

/**
 * A copy of `png` with every chunk's CRC recomputed from its type and data, so that a test can damage
 * chunk data and still get past the CRC check to the check it means to exercise.
 */
export function withChunkCrcsRecomputed(png: Uint8Array): Buffer {
  const out = Buffer.from(png);
  for (let offset = 8; offset + 12 <= out.length; ) {
    const length = out.readUInt32BE(offset);
    const crcAt = offset + 8 + length;
    if (crcAt + 4 > out.length) break;
    out.writeUInt32BE(crc32(out.subarray(offset + 4, crcAt)), crcAt);
    offset = crcAt + 4;
  }
  return out;
}

function pngChunk(type: string, data: Uint8Array): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.byteLength);
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}
