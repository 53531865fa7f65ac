/**
 * The headers of one `.nvdb` segment, read and checked without touching its payloads: the 16-byte file header and,
 * per grid, the 176-byte FileMetaData record and name, and where each payload lies. `decodeNvdb`,
 * `decodeNvdbGrid` and `readNvdbMetadata` all read segments through it.
 * Spec: NANOVDB-FORMAT.md ".nvdb files" (io::Segment, io::FileMetaData).
 */
import { inflateSync } from 'node:zlib';
import { ErrorCode, HsError, err, ok, type Result } from '@hs/streams';
import { FILE_MAGIC, FORMAT_MAJOR, ROOT_OFFSET, type GridClass, type GridType } from '../grid/grid-layout.js';
import type { Box3 } from '../grid/grid-validation.js';

/** Payload compression of a `.nvdb` segment. `blosc` is decoded and encoded by the async readers and writers only. */
export type NvdbCodec = 'none' | 'zip' | 'blosc';

export const CODECS: readonly NvdbCodec[] = ['none', 'zip', 'blosc'];

/** The InvalidArgument `who` (a writer that takes every codec, BLOSC included) throws for `codec`, or nothing for a codec of `CODECS`. */
export function checkWriterCodec(who: string, codec: unknown): void {
  if (!CODECS.includes(codec as NvdbCodec)) throw new HsError(ErrorCode.InvalidArgument, `${who}: codec must be ${CODECS.map((c) => `'${c}'`).join(', ').replace(/, ([^,]*)$/, ' or $1')}, got ${String(codec)}`);
}
/** Header code of the zip codec (its position in `CODECS`). */
const ZIP_CODE = CODECS.indexOf('zip');
/** Most bytes one byte of a deflate stream inflates to (a 258-byte match per bit, DEFLATE's limit). */
const ZLIB_MAX_RATIO = 1032;
export const HEADER_SIZE = 16;
export const META_SIZE = 176;
/** Most bytes of grids one host buffer holds on Node 20 (one less than 4 GiB); larger grids are listed, not decoded. */
export const MAX_GRID_SIZE = 2 ** 32 - 1;

/** The NotSupported for `bytes` of grids that exceed one host buffer. */
export function tooLargeForHost(who: string, bytes: number): Result<never> {
  return err(ErrorCode.NotSupported, `${who}: ${bytes} bytes of grids exceed 2^32 - 1 (${MAX_GRID_SIZE}), the most one host buffer holds on Node 20; split the file into smaller grids`);
}

/** What a `.nvdb` file says about one grid without its payload being inflated (FileMetaData and the name). */
export interface NvdbGridInfo {
  /** Segment of the file holding the grid, from 0 (raw grid buffers: the chain). */
  readonly segment: number;
  /** Position of the grid in its segment, from 0. */
  readonly index: number;
  /** Grid name (UTF-8; long names in full). */
  readonly name: string;
  /** The grid's value type (GridData's `mGridType`). */
  readonly gridType: GridType;
  /** The grid's class (GridData's `mGridClass`): level set, fog volume, topology, ... */
  readonly gridClass: GridClass;
  /** Payload compression. */
  readonly codec: NvdbCodec;
  /** Bytes of the grid once decoded. */
  readonly gridSize: number;
  /** Bytes of the payload in the file. */
  readonly fileSize: number;
  /** Active voxels (tiles counted by the voxels they cover). */
  readonly voxelCount: number;
  /** Index-space bounding box of the active values. */
  readonly indexBBox: Box3;
  /** World-space bounding box. */
  readonly worldBBox: Box3;
  /** Voxel size per axis, world units. */
  readonly voxelSize: readonly [number, number, number];
  /** Leaf, lower, upper node counts. */
  readonly nodeCount: readonly [number, number, number];
  /** Active tiles in lower, upper and root. */
  readonly tileCount: readonly [number, number, number];
  /** Blind-data records of the grid. */
  readonly blindDataCount: number;
  /** Format version (`major << 21 | minor << 10 | patch`). */
  readonly version: number;
}

/** One segment's headers: its grids and where each payload starts. */
export interface SegmentHeaders {
  readonly codec: NvdbCodec;
  readonly grids: readonly NvdbGridInfo[];
  /** File offset of each grid's payload. */
  readonly payloads: readonly number[];
  /** File offset just past the segment. */
  readonly end: number;
}

/** A typed error for `field` of segment `index` at byte `start`. */
export function segmentFault(index: number, start: number, field: string, problem: string, code = ErrorCode.InvalidArgument): Result<never> {
  return err(code, `.nvdb segment ${index} at byte ${start}: ${field}: ${problem}`);
}

/**
 * Reads and checks the headers of the segment at `start` (the `index`-th of the file): magic, version, grid count,
 * codec, and per grid its gridSize (for zip, one its payload can inflate to), fileSize, codec, name, and that its
 * payload lies inside the file. Blosc segments
 * are read like the others; only decoding them is NotSupported. `file` must hold the headers; `fileLength` is where
 * the file ends (a reader of paths passes only the headers it read, and the file's size).
 */
export function readSegmentHeaders(file: Uint8Array, start: number, index: number, fileLength = file.length): Result<SegmentHeaders> {
  const bad = (field: string, problem: string): Result<never> => segmentFault(index, start, field, problem);
  const v = new DataView(file.buffer, file.byteOffset, file.length);
  if (file.length - start < HEADER_SIZE) return bad('header', `only ${file.length - start} bytes remain of a 16-byte header (truncated)`);
  if (v.getBigUint64(start, true) !== FILE_MAGIC) return bad('header.magic', 'expected "NanoVDB2"');
  const version = v.getUint32(start + 8, true);
  if (version >>> 21 !== FORMAT_MAJOR) return bad('header.version', `major version ${version >>> 21}, hs reads ${FORMAT_MAJOR}`);
  const gridCount = v.getUint16(start + 12, true);
  if (gridCount === 0) return bad('header.gridCount', '0 grids');
  const codecCode = v.getUint16(start + 14, true);
  const codec = CODECS[codecCode];
  if (codec === undefined) return bad('header.codec', `${codecCode} is not 0 (none), 1 (zip) or 2 (blosc)`);
  let at = start + HEADER_SIZE;
  const grids: NvdbGridInfo[] = [];
  const i32x3 = (o: number): [number, number, number] => [v.getInt32(o, true), v.getInt32(o + 4, true), v.getInt32(o + 8, true)];
  const f64x3 = (o: number): [number, number, number] => [v.getFloat64(o, true), v.getFloat64(o + 8, true), v.getFloat64(o + 16, true)];
  const u32x3 = (o: number): [number, number, number] => [v.getUint32(o, true), v.getUint32(o + 4, true), v.getUint32(o + 8, true)];
  for (let g = 0; g < gridCount; g++) {
    if (file.length - at < META_SIZE) return bad(`meta[${g}]`, 'truncated');
    const gridSize = v.getBigUint64(at, true);
    const fileSize = v.getBigUint64(at + 8, true);
    const nameSize = v.getUint32(at + 136, true);
    if (gridSize < BigInt(ROOT_OFFSET) || gridSize > BigInt(Number.MAX_SAFE_INTEGER)) return bad(`meta[${g}].gridSize`, `${gridSize} is outside ${ROOT_OFFSET}..2^53 bytes`);
    if (fileSize > BigInt(fileLength)) return bad(`meta[${g}].fileSize`, `${fileSize} bytes exceed the file`);
    // Checked before a reader allocates gridSize bytes: a small file must not make it reserve gigabytes.
    if (codecCode === ZIP_CODE && gridSize > fileSize * BigInt(ZLIB_MAX_RATIO)) {
      return bad(`meta[${g}].gridSize`, `${gridSize} bytes cannot inflate from a ${fileSize}-byte zip payload (zlib inflates at most ${ZLIB_MAX_RATIO} bytes per byte)`);
    }
    if (v.getUint16(at + 168, true) !== codecCode) return bad(`meta[${g}].codec`, 'differs from the header codec');
    if (nameSize === 0 || at + META_SIZE + nameSize > file.length) return bad(`meta[${g}].nameSize`, `${nameSize} does not fit in the file`);
    const nameBytes = file.subarray(at + META_SIZE, at + META_SIZE + nameSize);
    if (nameBytes[nameSize - 1] !== 0) return bad(`meta[${g}].name`, 'not NUL-terminated');
    grids.push({
      segment: index,
      index: g,
      name: new TextDecoder().decode(nameBytes.subarray(0, nameSize - 1)),
      gridType: v.getUint32(at + 32, true) as GridType,
      gridClass: v.getUint32(at + 36, true) as GridClass,
      codec,
      gridSize: Number(gridSize),
      fileSize: Number(fileSize),
      voxelCount: Number(v.getBigUint64(at + 24, true)),
      worldBBox: { min: f64x3(at + 40), max: f64x3(at + 64) },
      indexBBox: { min: i32x3(at + 88), max: i32x3(at + 100) },
      voxelSize: f64x3(at + 112),
      nodeCount: u32x3(at + 140),
      tileCount: u32x3(at + 156),
      blindDataCount: v.getUint16(at + 170, true),
      version: v.getUint32(at + 172, true),
    });
    at += META_SIZE + nameSize;
  }
  const payloads: number[] = [];
  for (const [g, m] of grids.entries()) {
    if (at + m.fileSize > fileLength) return bad(`payload[${g}]`, `${m.fileSize} bytes run past the end of the file (truncated)`);
    payloads.push(at);
    at += m.fileSize;
  }
  return ok({ codec, grids, payloads, end: at });
}

/** Decodes grid `g` of a segment's headers into `into` (its gridSize bytes); NotSupported for blosc. */
export function decodePayload(file: Uint8Array, headers: SegmentHeaders, g: number, into: Uint8Array, index: number, start: number): Result<void> {
  const m = headers.grids[g] as NvdbGridInfo;
  if (m.gridSize > MAX_GRID_SIZE) return tooLargeForHost(`.nvdb segment ${index}: grid ${g}`, m.gridSize);
  const payload = file.subarray(headers.payloads[g] as number, (headers.payloads[g] as number) + m.fileSize);
  if (headers.codec === 'blosc') return segmentFault(index, start, 'header.codec', 'blosc payloads are decoded by decodeNvdbAsync and readNvdbAsync (a WebAssembly codec loaded on demand)', ErrorCode.NotSupported);
  if (headers.codec === 'none') {
    if (m.fileSize !== m.gridSize) return segmentFault(index, start, `meta[${g}].fileSize`, `${m.fileSize} differs from gridSize ${m.gridSize} for an uncompressed grid`);
    into.set(payload);
    return ok(undefined);
  }
  if (payload.length < 8) return segmentFault(index, start, `payload[${g}]`, 'missing the compressed size');
  const packed = new DataView(payload.buffer, payload.byteOffset, 8).getBigUint64(0, true);
  if (packed !== BigInt(payload.length - 8)) return segmentFault(index, start, `payload[${g}].compressedSize`, `${packed} differs from the ${payload.length - 8} bytes that follow`);
  let raw: Uint8Array;
  try {
    raw = inflateSync(payload.subarray(8), { maxOutputLength: m.gridSize });
  } catch (cause) {
    return err(ErrorCode.InvalidArgument, `.nvdb segment ${index}: payload[${g}]: the zlib stream is corrupt or inflates past gridSize ${m.gridSize}`, cause);
  }
  if (raw.length !== m.gridSize) return segmentFault(index, start, `payload[${g}]`, `inflates to ${raw.length} bytes, not gridSize ${m.gridSize}`);
  into.set(raw);
  return ok(undefined);
}

/** Null when each validated grid is the one its FileMetaData describes (size, type, name), else the fault. */
export function metadataMismatch(metas: readonly NvdbGridInfo[], grids: readonly { gridSize: number; gridType: number; name: string }[], index: number, start: number): Result<never> | null {
  for (const [g, m] of metas.entries()) {
    const grid = grids[g];
    if (grid === undefined || grid.gridSize !== m.gridSize || grid.gridType !== m.gridType || grid.name !== m.name) {
      return segmentFault(index, start, `meta[${g}]`, 'gridSize, gridType or name differs from the grid it describes');
    }
  }
  if (grids.length !== metas.length) return segmentFault(index, start, 'header.gridCount', `${metas.length} declared, the grid chain holds ${grids.length}`);
  return null;
}
