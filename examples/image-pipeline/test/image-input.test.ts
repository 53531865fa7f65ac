import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode, type Result } from '@hs/streams';
import { decode as decodeJpeg } from 'jpeg-js';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeImage, detectImageFormat, loadBundledMandrill, loadImageFile, loadImageFiles, type ImageBounds } from '../src/image-input.js';
import { buildPng, encodeJpegImage, encodePng, patternRgba, withChunkCrcsRecomputed, writeFixture } from './fixture-images.js';

const BOUNDS: ImageBounds = { minWidth: 2, minHeight: 2, maxWidth: 64, maxHeight: 48 };

function expectInvalid<T>(result: Result<T>, messagePart: RegExp): void {
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.error.code).toBe(ErrorCode.InvalidArgument);
  expect(result.error.message).toMatch(messagePart);
}

async function expectRejection(promise: Promise<unknown>, code: ErrorCode, message: string): Promise<void> {
  await expect(promise).rejects.toMatchObject({ code, message });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hs-image-input-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('bundled mandrill', () => {
  it('decodes to 128x128 RGBA identical to a direct pngjs decode of the data URI', async () => {
    const result = loadBundledMandrill({ minWidth: 2, minHeight: 2, maxWidth: 128, maxHeight: 128 });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { default: uri } = await import('baboon-image-uri');
    const direct = PNG.sync.read(Buffer.from(uri.split(',')[1]!, 'base64'));
    expect(result.value.name).toBe('mandrill');
    expect([result.value.width, result.value.height]).toEqual([128, 128]);
    expect(Buffer.from(result.value.data).equals(direct.data)).toBe(true);
  });

  it('is rejected when the configured bound is smaller than the photo', () => {
    expectInvalid(loadBundledMandrill(BOUNDS), /128x128 pixels, larger than the configured bound 64x48/);
  });
});

describe('decoding by content', () => {
  it('decodes an RGBA PNG exactly', () => {
    const rgba = patternRgba(13, 7);
    const result = decodeImage(encodePng(rgba, 13, 7), 'pattern.png', BOUNDS);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect([result.value.width, result.value.height]).toEqual([13, 7]);
    expect(Array.from(result.value.data)).toEqual(Array.from(rgba));
  });

  it('expands an RGB PNG to RGBA with opaque alpha', () => {
    const rgba = patternRgba(5, 4);
    for (let a = 3; a < rgba.length; a += 4) rgba[a] = 255; // opaque, so the RGB encoder keeps the colours as they are
    const result = decodeImage(encodePng(rgba, 5, 4, 2), 'rgb.png', BOUNDS);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    for (let p = 0; p < 5 * 4; p++) {
      expect(Array.from(result.value.data.subarray(p * 4, p * 4 + 4))).toEqual([rgba[p * 4], rgba[p * 4 + 1], rgba[p * 4 + 2], 255]);
    }
  });

  it('decodes a JPEG to the same pixels jpeg-js gives', () => {
    const jpegBytes = encodeJpegImage(patternRgba(20, 10), 20, 10);
    const result = decodeImage(jpegBytes, 'photo.jpg', BOUNDS);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const direct = decodeJpeg(jpegBytes, { useTArray: true, formatAsRGBA: true });
    expect([result.value.width, result.value.height]).toEqual([20, 10]);
    expect(Array.from(result.value.data)).toEqual(Array.from(direct.data));
  });

  it('detects the format from magic bytes, not from the file name', async () => {
    const jpegNamedPng = await writeFixture(dir, 'actually-a-jpeg.png', encodeJpegImage(patternRgba(8, 8), 8, 8));
    const pngNamedJpg = await writeFixture(dir, 'actually-a-png.jpg', encodePng(patternRgba(8, 8), 8, 8));
    await loadImageFile(jpegNamedPng, BOUNDS);
    const b = await loadImageFile(pngNamedJpg, BOUNDS);
    expect(detectImageFormat(encodeJpegImage(patternRgba(2, 2), 2, 2))).toBe('jpeg');
    expect(detectImageFormat(encodePng(patternRgba(2, 2), 2, 2))).toBe('png');
    expect(Array.from(b.data)).toEqual(Array.from(patternRgba(8, 8)));
  });

  it('loads several files in order', async () => {
    const first = await writeFixture(dir, 'first.png', encodePng(patternRgba(4, 3), 4, 3));
    const second = await writeFixture(dir, 'second.jpeg', encodeJpegImage(patternRgba(6, 5), 6, 5));
    const images = await loadImageFiles([first, second], BOUNDS);
    expect(images.map((i) => [i.name, i.width, i.height])).toEqual([['first.png', 4, 3], ['second.jpeg', 6, 5]]);
  });
});

describe('input errors', () => {
  it('reports a missing file as NotFound with the OS code', async () => {
    const path = join(dir, 'nope.png');
    await expectRejection(loadImageFile(path, BOUNDS), ErrorCode.NotFound, `NotFound: cannot read input '${path}': ENOENT: no such file or directory`);
  });

  it('reports a directory as InvalidArgument naming what it is', async () => {
    const sub = join(dir, 'a-directory.png');
    await mkdir(sub, { recursive: true });
    await expectRejection(loadImageFile(sub, BOUNDS), ErrorCode.InvalidArgument, `InvalidArgument: cannot read input '${sub}': it is a directory, not a regular file; pass a regular file`);
  });

  it.skipIf(process.platform === 'win32')('refuses a FIFO at the input path at once instead of waiting for a writer', async () => {
    const fifo = join(dir, 'planted.png');
    execFileSync('mkfifo', [fifo]);
    const started = performance.now();
    await expectRejection(loadImageFile(fifo, BOUNDS), ErrorCode.InvalidArgument, `InvalidArgument: cannot read input '${fifo}': it is a FIFO (named pipe), not a regular file; pass a regular file`);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it.skipIf(process.getuid?.() === 0)('reports an unreadable file as PermissionDenied with the OS code (skipped as root: root reads any file)', async () => {
    const locked = await writeFixture(dir, 'locked.png', encodePng(patternRgba(4, 4), 4, 4));
    await chmod(locked, 0o000);
    await expectRejection(loadImageFile(locked, BOUNDS), ErrorCode.PermissionDenied, `PermissionDenied: cannot read input '${locked}': EACCES: permission denied`);
  });

  it('stops a multi-file load at the first bad file, naming it', async () => {
    const good = await writeFixture(dir, 'good.png', encodePng(patternRgba(4, 4), 4, 4));
    await expect(loadImageFiles([good, join(dir, 'missing.jpg')], BOUNDS)).rejects.toMatchObject({ code: ErrorCode.NotFound, message: expect.stringMatching(/missing\.jpg/) });
  });

  it('rejects an unsupported format with its leading bytes', () => {
    const gif = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1');
    expectInvalid(decodeImage(gif, 'anim.gif', BOUNDS), /'anim\.gif' is not a PNG or JPEG image \(first bytes: 47 49 46 38 39 61 01 00\)/);
  });

  it('rejects an empty file', () => {
    expectInvalid(decodeImage(new Uint8Array(0), 'empty.png', BOUNDS), /not a PNG or JPEG image \(first bytes: none, the file is empty\)/);
  });

  it('rejects a PNG whose header is truncated', () => {
    const png = encodePng(patternRgba(4, 4), 4, 4);
    expectInvalid(decodeImage(png.subarray(0, 20), 'short.png', BOUNDS), /looks like a PNG but its header is corrupt or truncated/);
  });

  it('rejects a PNG whose pixel data is corrupt (with CRCs that match the corrupt data)', () => {
    const png = Buffer.from(encodePng(patternRgba(16, 16), 16, 16));
    png.fill(0x5a, 41, png.length - 16); // overwrite the compressed IDAT payload, keep the header and the IDAT CRC
    expectInvalid(decodeImage(withChunkCrcsRecomputed(png), 'broken.png', BOUNDS), /input 'broken\.png': not a valid PNG \(the IDAT data does not inflate/);
  });

  it('rejects a JPEG without a frame header', () => {
    expectInvalid(decodeImage(Buffer.from([0xff, 0xd8, 0xff, 0xd9]), 'stub.jpg', BOUNDS), /looks like a JPEG but its header is corrupt/);
  });

  it('rejects a JPEG whose scan data is corrupt', () => {
    const jpegBytes = Buffer.from(encodeJpegImage(patternRgba(16, 16), 16, 16));
    const truncated = jpegBytes.subarray(0, jpegBytes.length - 200);
    const result = decodeImage(truncated, 'cut.jpg', BOUNDS);
    expectInvalid(result, /'cut\.jpg' is a corrupt JPEG/);
  });

  it('rejects an image larger than the bound before decoding it', () => {
    expectInvalid(decodeImage(encodePng(patternRgba(65, 4), 65, 4), 'wide.png', BOUNDS), /65x4 pixels, larger than the configured bound 64x48/);
    expectInvalid(decodeImage(encodeJpegImage(patternRgba(8, 49), 8, 49), 'tall.jpg', BOUNDS), /8x49 pixels, larger than the configured bound/);
  });

  it('rejects an image smaller than the minimum', () => {
    expectInvalid(decodeImage(encodePng(patternRgba(1, 5), 1, 5), 'thin.png', BOUNDS), /1x5 pixels, smaller than the minimum 2x2/);
  });
});

/** Raw (inflated) PNG image data: every row a filter byte 0 followed by `rowBytes` bytes of `fill`. */
function rawRows(rows: number, rowBytes: number, fill = 0x40): Uint8Array {
  const raw = new Uint8Array(rows * (1 + rowBytes)).fill(fill);
  for (let r = 0; r < rows; r++) raw[r * (1 + rowBytes)] = 0;
  return raw;
}

/** The Adam7 pass (1..7) of each position of the repeating 8x8 block, as the PNG format draws it. */
const ADAM7_BLOCK = [
  [1, 6, 4, 6, 2, 6, 4, 6],
  [7, 7, 7, 7, 7, 7, 7, 7],
  [5, 6, 5, 6, 5, 6, 5, 6],
  [7, 7, 7, 7, 7, 7, 7, 7],
  [3, 6, 4, 6, 3, 6, 4, 6],
  [7, 7, 7, 7, 7, 7, 7, 7],
  [5, 6, 5, 6, 5, 6, 5, 6],
  [7, 7, 7, 7, 7, 7, 7, 7],
];

/** Adam7 image data for 8-bit RGBA `rgba`, built pixel by pixel from the block above: one list of rows per pass. */
function adam7Passes(rgba: Uint8Array, width: number, height: number): Uint8Array[][] {
  const passes: Uint8Array[][] = [[], [], [], [], [], [], []];
  for (let pass = 1; pass <= 7; pass++) {
    for (let y = 0; y < height; y++) {
      const row: number[] = [];
      for (let x = 0; x < width; x++) {
        if (ADAM7_BLOCK[y % 8]![x % 8] === pass) row.push(...rgba.subarray((y * width + x) * 4, (y * width + x) * 4 + 4));
      }
      if (row.length > 0) passes[pass - 1]!.push(Uint8Array.from([0, ...row]));
    }
  }
  return passes;
}

function concatRows(passes: readonly Uint8Array[][]): Uint8Array {
  return Buffer.concat(passes.flat());
}

describe('PNG structure checks (files a decoder would turn into black pixels)', () => {
  const rgba8x8 = { width: 8, height: 8, colorType: 6, bitDepth: 8, interlaced: false };

  it('accepts a hand-built PNG with complete image data (the fixture builder is sound)', () => {
    const result = decodeImage(buildPng(rgba8x8, rawRows(8, 32)), 'complete.png', BOUNDS);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value.data.every((b) => b === 0x40)).toBe(true);
  });

  it('rejects a PNG with a header but no IDAT chunk', () => {
    expectInvalid(decodeImage(buildPng(rgba8x8, null), 'no-idat.png', BOUNDS), /input 'no-idat\.png': not a valid PNG \(no IDAT chunk/);
  });

  it('rejects a PNG whose IDAT holds only 3 of its 8 rows, giving both sizes', () => {
    expectInvalid(
      decodeImage(buildPng(rgba8x8, rawRows(3, 32)), 'three-rows.png', BOUNDS),
      /input 'three-rows\.png': not a valid PNG \(the IDAT data inflates to 99 bytes, but a 8x8 non-interlaced image .* needs exactly 264\)/,
    );
  });

  it('rejects a PNG whose IDAT holds more rows than its header', () => {
    expectInvalid(
      decodeImage(buildPng(rgba8x8, rawRows(9, 32)), 'extra-row.png', BOUNDS),
      /'extra-row\.png': not a valid PNG \(the IDAT data inflates to more than 264 bytes/,
    );
  });

  it('counts sub-byte rows by rounding each row up to whole bytes (1-bit grey, 10 pixels wide)', () => {
    const grey1 = { width: 10, height: 3, colorType: 0, bitDepth: 1, interlaced: false };
    expect(decodeImage(buildPng(grey1, rawRows(3, 2, 0xff)), 'bits.png', BOUNDS).ok).toBe(true);
    expectInvalid(decodeImage(buildPng(grey1, rawRows(2, 2, 0xff)), 'bits-short.png', BOUNDS), /inflates to 6 bytes.*needs exactly 9/);
  });

  it('decodes a complete Adam7-interlaced PNG exactly and rejects one missing its last pass', () => {
    const [width, height] = [10, 7];
    const rgba = patternRgba(width, height);
    const passes = adam7Passes(rgba, width, height);
    const header = { width, height, colorType: 6, bitDepth: 8, interlaced: true };
    const complete = decodeImage(buildPng(header, concatRows(passes)), 'adam7.png', BOUNDS);
    expect(complete.ok).toBe(true);
    if (complete.ok) expect(Array.from(complete.value.data)).toEqual(Array.from(rgba));

    const full = concatRows(passes).byteLength;
    const short = concatRows(passes.slice(0, 6)).byteLength;
    expect(short).toBeLessThan(full);
    const pattern = new RegExp(`'adam7-short\\.png': not a valid PNG \\(the IDAT data inflates to ${short} bytes, but a 10x7 Adam7-interlaced image .* needs exactly ${full}\\)`);
    expectInvalid(decodeImage(buildPng(header, concatRows(passes.slice(0, 6))), 'adam7-short.png', BOUNDS), pattern);
  });

  it('rejects a PNG cut off inside a chunk, saying where', () => {
    const png = encodePng(patternRgba(8, 8), 8, 8);
    expectInvalid(decodeImage(png.subarray(0, png.length - 20), 'cut.png', BOUNDS), /'cut\.png': not a valid PNG \(chunk 'IDAT' at byte 33 declares \d+ data bytes, but the file ends after \d+\)/);
  });

  it('names a chunk whose CRC does not match, with the stored and computed values', () => {
    const png = Buffer.from(encodePng(patternRgba(8, 8), 8, 8));
    const ihdrCrcAt = 8 + 8 + 13; // signature, IHDR length and type, 13 data bytes
    const stored = png.readUInt32BE(ihdrCrcAt);
    png.writeUInt8(png.readUInt8(ihdrCrcAt) ^ 0xff, ihdrCrcAt);
    const hex = (value: number) => `0x${value.toString(16).padStart(8, '0')}`;
    const result = decodeImage(png, 'bad-crc.png', BOUNDS);
    expect(!result.ok && result.error.message).toBe(
      `InvalidArgument: input 'bad-crc.png': not a valid PNG (chunk 'IHDR' at byte 8 has a bad CRC (stored ${hex(png.readUInt32BE(ihdrCrcAt))}, computed ${hex(stored)}): the file is damaged)`,
    );
    expect(!result.ok && result.error.code).toBe(ErrorCode.InvalidArgument);
  });

  it('names a damaged IDAT chunk by its CRC before trying to inflate it', () => {
    const png = Buffer.from(encodePng(patternRgba(16, 16), 16, 16));
    png.fill(0x5a, 41, png.length - 16);
    expectInvalid(decodeImage(png, 'damaged.png', BOUNDS), /^InvalidArgument: input 'damaged\.png': not a valid PNG \(chunk 'IDAT' at byte 33 has a bad CRC \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\): the file is damaged\)$/);
  });

  it('wraps the decoder\'s own message naming the file', () => {
    const png = Buffer.concat([encodePng(patternRgba(8, 8), 8, 8), Buffer.from('trailing junk')]);
    expectInvalid(decodeImage(png, 'trailing.png', BOUNDS), /^InvalidArgument: input 'trailing\.png': not a valid PNG \(unrecognised content at end of stream\)$/);
  });
});
