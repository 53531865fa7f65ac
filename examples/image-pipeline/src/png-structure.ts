import { crc32, inflateSync } from 'node:zlib';

/** Channels per pixel by PNG colour type (0 grey, 2 RGB, 3 palette, 4 grey+alpha, 6 RGBA). */
const CHANNELS_BY_COLOR_TYPE: Readonly<Record<number, number>> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** Adam7 passes: first column, first row, column step, row step. */
const ADAM7_PASSES: readonly (readonly [number, number, number, number])[] = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];

/** The IHDR fields that fix the size of the decompressed image data. */
interface PngHeader {
  readonly width: number;
  readonly height: number;
  readonly bitDepth: number;
  readonly colorType: number;
  readonly interlaced: boolean;
}

/**
 * Checks what a PNG decoder may let through silently or report vaguely: walks the chunk list (signature,
 * then IHDR first, then length/type/data/CRC records up to IEND) and requires no chunk running past the
 * end of the data, every chunk's CRC-32 (over its type and data) to match the one stored after it, at
 * least one IDAT chunk, and that the concatenated IDAT data inflates (zlib) to exactly the byte count
 * the header implies: per row one filter byte plus `ceil(width * bitsPerPixel / 8)` bytes, summed over
 * the rows of the image, or over the rows of each of the seven Adam7 passes when interlaced.
 *
 * The contents of ancillary chunks are left to the decoder.
 *
 * @param bytes the whole file, starting with the 8-byte PNG signature (the caller has detected it).
 * @returns `undefined` when the structure is sound, else a sentence saying what is wrong.
 */
export function findPngStructureProblem(bytes: Uint8Array): string | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let header: PngHeader | undefined;
  const idat: Uint8Array[] = [];
  let offset = 8;
  for (;;) {
    if (offset === bytes.byteLength) return header === undefined ? 'no IHDR chunk' : 'the file ends before the IEND chunk';
    if (offset + 12 > bytes.byteLength) return `the file ends inside a chunk header at byte ${offset}`;
    const length = view.getUint32(offset);
    const type = String.fromCharCode(...bytes.subarray(offset + 4, offset + 8));
    const dataStart = offset + 8;
    if (dataStart + length + 4 > bytes.byteLength) {
      return `chunk '${type}' at byte ${offset} declares ${length} data bytes, but the file ends after ${bytes.byteLength - dataStart}`;
    }
    const data = bytes.subarray(dataStart, dataStart + length);
    const storedCrc = view.getUint32(dataStart + length);
    const computedCrc = crc32(bytes.subarray(offset + 4, dataStart + length));
    if (storedCrc !== computedCrc) {
      return `chunk '${type}' at byte ${offset} has a bad CRC (stored ${hex32(storedCrc)}, computed ${hex32(computedCrc)}): the file is damaged`;
    }
    if (header === undefined) {
      if (type !== 'IHDR' || length !== 13) return `the first chunk is '${type}' (${length} bytes), not a 13-byte IHDR`;
      header = {
        width: view.getUint32(dataStart),
        height: view.getUint32(dataStart + 4),
        bitDepth: data[8]!,
        colorType: data[9]!,
        interlaced: data[12] === 1,
      };
    } else if (type === 'IDAT') {
      idat.push(data);
    } else if (type === 'IEND') {
      break;
    }
    offset = dataStart + length + 4;
  }
  if (idat.length === 0) return 'no IDAT chunk: the file holds no pixel data';
  const expected = imageDataBytes(header);
  if (expected === undefined) return `unsupported colour type ${header.colorType} with bit depth ${header.bitDepth}`;
  let inflated: number;
  try {
    // One byte past the expected size is enough to tell "too much" from "exact".
    inflated = inflateSync(Buffer.concat(idat), { maxOutputLength: expected + 1 }).byteLength;
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') inflated = expected + 1;
    else return `the IDAT data does not inflate (${cause instanceof Error ? cause.message : String(cause)})`;
  }
  if (inflated === expected) return undefined;
  const layout = `${header.width}x${header.height} ${header.interlaced ? 'Adam7-interlaced' : 'non-interlaced'}`;
  const got = inflated > expected ? `more than ${expected}` : String(inflated);
  return `the IDAT data inflates to ${got} bytes, but a ${layout} image with colour type ${header.colorType} and bit depth ${header.bitDepth} needs exactly ${expected}`;
}

/** `0x` and eight lower-case hex digits. */
function hex32(value: number): string {
  return `0x${value.toString(16).padStart(8, '0')}`;
}

/** Decompressed image data size in bytes (filter bytes included), or `undefined` for an unknown colour type. */
function imageDataBytes(header: PngHeader): number | undefined {
  const channels = CHANNELS_BY_COLOR_TYPE[header.colorType];
  if (channels === undefined) return undefined;
  const bitsPerPixel = channels * header.bitDepth;
  const rowsBytes = (width: number, height: number): number =>
    width === 0 || height === 0 ? 0 : height * (1 + Math.ceil((width * bitsPerPixel) / 8));
  if (!header.interlaced) return rowsBytes(header.width, header.height);
  let total = 0;
  for (const [x0, y0, dx, dy] of ADAM7_PASSES) {
    total += rowsBytes(Math.max(0, Math.ceil((header.width - x0) / dx)), Math.max(0, Math.ceil((header.height - y0) / dy)));
  }
  return total;
}
