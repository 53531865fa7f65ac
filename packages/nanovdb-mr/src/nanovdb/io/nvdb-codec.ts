import { deflateSync, inflateSync } from 'node:zlib';
import { ErrorCode, err, ok, type Result, errWithContext } from '@hs/streams';
import { FILE_MAGIC, FORMAT_MAJOR, FORMAT_VERSION, GRID_MAGIC, ROOT_OFFSET } from '../grid/grid-layout.js';
import { bytesArgumentProblem, validateGrids, type GridMetadata } from '../grid/grid-validation.js';

/** Payload compression of a `.nvdb` segment. `blosc` is read as NotSupported (no well-kept JS codec). */
export type NvdbCodec = 'none' | 'zip' | 'blosc';

const CODECS: readonly NvdbCodec[] = ['none', 'zip', 'blosc'];
const HEADER_SIZE = 16;
const META_SIZE = 176;
/** Largest grid a segment may declare, bytes (what one JS buffer can hold). */
const MAX_GRID_SIZE = 2 ** 32;

/** One decoded segment: the grids' bytes back to back (one chain) and their metadata. */
export interface NvdbSegment {
  /** The segment's grids, decompressed, back to back as one chain. */
  readonly bytes: Uint8Array;
  /** Metadata of each grid in `bytes`, in chain order. */
  readonly grids: readonly GridMetadata[];
}

/**
 * Encodes one buffer of grids (validated `grids` over `bytes`) as one `.nvdb` segment: the 16-byte file
 * header, a 176-byte FileMetaData record plus the NUL-terminated name per grid, then each grid's payload,
 * raw (`none`) or as a u64 compressed size and a zlib stream (`zip`). NotSupported for `blosc`.
 *
 * `into`, when given, is where the file is written if it fits: the result is then `into.subarray(0, n)`
 * for the file's n bytes and no output array is allocated (a writer that encodes one grid after another
 * keeps one buffer, e.g. the previous result); when the file does not fit, a new array is returned as
 * without `into`. InvalidArgument when `into` is not a Uint8Array or shares memory with `bytes`.
 * Spec: NANOVDB-FORMAT.md ".nvdb files" (io::writeGrid).
 */
export function encodeNvdb(bytes: Uint8Array, grids: readonly GridMetadata[], codec: NvdbCodec = 'none', into?: Uint8Array): Result<Uint8Array> {
  if (codec === 'blosc') return err(ErrorCode.NotSupported, 'encodeNvdb: blosc needs a codec hs does not ship; use zip or none');
  if (codec !== 'none' && codec !== 'zip') return err(ErrorCode.InvalidArgument, `encodeNvdb: codec must be 'none' or 'zip', got ${String(codec)}`);
  if (grids.length === 0 || grids.length > 0xffff) return err(ErrorCode.InvalidArgument, `encodeNvdb: a segment holds 1 to 65535 grids, got ${grids.length}`);
  if (into !== undefined) {
    const notBytes = bytesArgumentProblem('encodeNvdb: into', into);
    if (notBytes !== null) return notBytes;
    if (sharesMemory(into, bytes)) return err(ErrorCode.InvalidArgument, 'encodeNvdb: into shares memory with the grid bytes; pass a separate output buffer');
  }
  const payloads: Uint8Array[] = [];
  for (const g of grids) {
    const raw = bytes.subarray(g.byteOffset, g.byteOffset + g.gridSize);
    if (codec === 'none') {
      payloads.push(raw);
    } else {
      const packed = deflateSync(raw);
      const framed = new Uint8Array(8 + packed.length);
      new DataView(framed.buffer).setBigUint64(0, BigInt(packed.length), true);
      framed.set(packed, 8);
      payloads.push(framed);
    }
  }
  const names = grids.map((g) => new TextEncoder().encode(g.name));
  const size = HEADER_SIZE + grids.reduce((n, _g, i) => n + META_SIZE + (names[i] as Uint8Array).length + 1 + (payloads[i] as Uint8Array).length, 0);
  const out = into !== undefined && into.byteLength >= size ? into.subarray(0, size) : new Uint8Array(size);
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  v.setBigUint64(0, FILE_MAGIC, true);
  v.setUint32(8, FORMAT_VERSION, true);
  v.setUint16(12, grids.length, true);
  v.setUint16(14, CODECS.indexOf(codec), true);
  let at = HEADER_SIZE;
  grids.forEach((g, i) => {
    const name = names[i] as Uint8Array;
    v.setBigUint64(at, BigInt(g.gridSize), true);
    v.setBigUint64(at + 8, BigInt((payloads[i] as Uint8Array).length), true);
    v.setBigUint64(at + 16, nameKey(name), true);
    v.setBigUint64(at + 24, BigInt(g.voxelCount), true);
    v.setUint32(at + 32, g.gridType, true);
    v.setUint32(at + 36, g.gridClass, true);
    for (let a = 0; a < 3; a++) {
      v.setFloat64(at + 40 + 8 * a, g.worldBBox.min[a] as number, true);
      v.setFloat64(at + 64 + 8 * a, g.worldBBox.max[a] as number, true);
      v.setInt32(at + 88 + 4 * a, g.indexBBox.min[a] as number, true);
      v.setInt32(at + 100 + 4 * a, g.indexBBox.max[a] as number, true);
      v.setFloat64(at + 112 + 8 * a, g.voxelSize[a] as number, true);
      v.setUint32(at + 140 + 4 * a, g.nodeCount[a] as number, true);
      v.setUint32(at + 156 + 4 * a, g.tileCount[a] as number, true);
    }
    v.setUint32(at + 136, name.length + 1, true);
    v.setUint32(at + 152, 1, true);
    v.setUint16(at + 168, CODECS.indexOf(codec), true);
    v.setUint16(at + 170, g.blindMetadataCount, true);
    v.setUint32(at + 172, g.version, true);
    out.set(name, at + META_SIZE);
    out[at + META_SIZE + name.length] = 0;
    at += META_SIZE + name.length + 1;
  });
  for (const p of payloads) {
    out.set(p, at);
    at += p.length;
  }
  return ok(out);
}

/** True when the two arrays' bytes overlap (same buffer, intersecting ranges). */
function sharesMemory(a: Uint8Array, b: Uint8Array): boolean {
  return a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;
}

/**
 * Decodes a `.nvdb` file into its segments, each validated as a grid chain. A file of raw grid buffers
 * back to back (it starts with the grid magic) is read as such first. Every header field is checked
 * before it is used, compressed payloads are inflated with their declared grid size as the output limit,
 * and all grids are validated (`validateGrids`), so a truncated or corrupted file gives a typed error:
 * InvalidArgument when `file` is not a Uint8Array, InvalidArgument naming the segment, grid and field (for example `segment 0: meta[0].gridSize: …`),
 * NotSupported for blosc payloads or grid types hs does not read.
 * Spec: NANOVDB-FORMAT.md ".nvdb files" (io::readGrids).
 */
export function decodeNvdb(file: Uint8Array): Result<NvdbSegment[]> {
  const notBytes = bytesArgumentProblem('decodeNvdb', file);
  if (notBytes !== null) return notBytes;
  const segments: NvdbSegment[] = [];
  if (file.length >= 8 && new DataView(file.buffer, file.byteOffset, 8).getBigUint64(0, true) === GRID_MAGIC) {
    let offset = 0;
    while (offset < file.length) {
      const chain = validateGrids(file.subarray(offset));
      if (!chain.ok) return errWithContext(chain.error, `raw grid buffer at byte ${offset}`);
      const last = chain.value[chain.value.length - 1] as GridMetadata;
      const end = offset + last.byteOffset + last.gridSize;
      segments.push({ bytes: file.slice(offset, end), grids: chain.value });
      offset = end;
    }
    return ok(segments);
  }
  let offset = 0;
  while (offset < file.length) {
    const segment = decodeSegment(file, offset, segments.length);
    if (!segment.ok) return segment;
    segments.push(segment.value.segment);
    offset = segment.value.end;
  }
  if (segments.length === 0) return err(ErrorCode.InvalidArgument, 'decodeNvdb: the file is empty');
  return ok(segments);
}

function decodeSegment(file: Uint8Array, start: number, index: number): Result<{ segment: NvdbSegment; end: number }> {
  const bad = (field: string, problem: string, code = ErrorCode.InvalidArgument): Result<never> =>
    err(code, `.nvdb segment ${index} at byte ${start}: ${field}: ${problem}`);
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
  if (codec === 'blosc') return bad('header.codec', 'blosc payloads need a codec hs does not ship; re-save with zip or none', ErrorCode.NotSupported);
  let at = start + HEADER_SIZE;
  const metas: { gridSize: number; fileSize: number; name: string; gridType: number }[] = [];
  for (let g = 0; g < gridCount; g++) {
    if (file.length - at < META_SIZE) return bad(`meta[${g}]`, 'truncated');
    const gridSize = v.getBigUint64(at, true);
    const fileSize = v.getBigUint64(at + 8, true);
    const nameSize = v.getUint32(at + 136, true);
    if (gridSize < BigInt(ROOT_OFFSET) || gridSize > BigInt(MAX_GRID_SIZE)) return bad(`meta[${g}].gridSize`, `${gridSize} is outside ${ROOT_OFFSET}..2^32 bytes`);
    if (fileSize > BigInt(file.length)) return bad(`meta[${g}].fileSize`, `${fileSize} bytes exceed the file`);
    if (v.getUint16(at + 168, true) !== codecCode) return bad(`meta[${g}].codec`, 'differs from the header codec');
    if (nameSize === 0 || at + META_SIZE + nameSize > file.length) return bad(`meta[${g}].nameSize`, `${nameSize} does not fit in the file`);
    const nameBytes = file.subarray(at + META_SIZE, at + META_SIZE + nameSize);
    if (nameBytes[nameSize - 1] !== 0) return bad(`meta[${g}].name`, 'not NUL-terminated');
    metas.push({ gridSize: Number(gridSize), fileSize: Number(fileSize), name: new TextDecoder().decode(nameBytes.subarray(0, nameSize - 1)), gridType: v.getUint32(at + 32, true) });
    at += META_SIZE + nameSize;
  }
  const total = metas.reduce((n, m) => n + m.gridSize, 0);
  if (total > MAX_GRID_SIZE) return bad('meta', `the grids total ${total} bytes, more than one buffer holds`);
  const bytes = new Uint8Array(total);
  let into = 0;
  for (const [g, m] of metas.entries()) {
    if (at + m.fileSize > file.length) return bad(`payload[${g}]`, `${m.fileSize} bytes run past the end of the file (truncated)`);
    const payload = file.subarray(at, at + m.fileSize);
    if (codec === 'none') {
      if (m.fileSize !== m.gridSize) return bad(`meta[${g}].fileSize`, `${m.fileSize} differs from gridSize ${m.gridSize} for an uncompressed grid`);
      bytes.set(payload, into);
    } else {
      if (payload.length < 8) return bad(`payload[${g}]`, 'missing the compressed size');
      const packed = new DataView(payload.buffer, payload.byteOffset, 8).getBigUint64(0, true);
      if (packed !== BigInt(payload.length - 8)) return bad(`payload[${g}].compressedSize`, `${packed} differs from the ${payload.length - 8} bytes that follow`);
      let raw: Uint8Array;
      try {
        raw = inflateSync(payload.subarray(8), { maxOutputLength: m.gridSize });
      } catch (cause) {
        return err(ErrorCode.InvalidArgument, `.nvdb segment ${index}: payload[${g}]: the zlib stream is corrupt or inflates past gridSize ${m.gridSize}`, cause);
      }
      if (raw.length !== m.gridSize) return bad(`payload[${g}]`, `inflates to ${raw.length} bytes, not gridSize ${m.gridSize}`);
      bytes.set(raw, into);
    }
    into += m.gridSize;
    at += m.fileSize;
  }
  const grids = validateGrids(bytes);
  if (!grids.ok) return errWithContext(grids.error, `.nvdb segment ${index}`);
  for (const [g, m] of metas.entries()) {
    const grid = grids.value[g];
    if (grid === undefined || grid.gridSize !== m.gridSize || grid.gridType !== m.gridType || grid.name !== m.name) {
      return bad(`meta[${g}]`, 'gridSize, gridType or name differs from the grid it describes');
    }
  }
  if (grids.value.length !== metas.length) return bad('header.gridCount', `${metas.length} declared, the grid chain holds ${grids.value.length}`);
  return ok({ segment: { bytes, grids: grids.value }, end: at });
}

/** NanoVDB's name key: `h = h * 67 + c + (h >> 56)` over the name's bytes, in u64 arithmetic. */
function nameKey(name: Uint8Array): bigint {
  let h = 0n;
  for (const c of name) h = (h * 67n + BigInt(c) + (h >> 56n)) & 0xffffffffffffffffn;
  return h;
}
