import { deflateSync } from 'node:zlib';
import { ErrorCode, err, ok, type Result, errWithContext } from '@hs/streams';
import { CHECKSUM_NONE, computeChecksum } from '../grid/grid-checksum.js';
import { FILE_MAGIC, FORMAT_VERSION, GRID_MAGIC, Grid, LEGACY_GRID_MAGIC } from '../grid/grid-layout.js';
import { bytesArgumentProblem, validateGrids, type GridMetadata } from '../grid/grid-validation.js';
import { readNvdbMetadata } from './nvdb-metadata.js';
import { CODECS, HEADER_SIZE, MAX_GRID_SIZE, META_SIZE, decodePayload, metadataMismatch, readSegmentHeaders, segmentFault, tooLargeForHost, type NvdbCodec, type NvdbGridInfo } from './nvdb-segment.js';

export type { NvdbCodec } from './nvdb-segment.js';

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
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, encodeNvdb, pointsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const coords = new Int32Array([0, 0, 0, 1, 1, 1]);
 * const grid = unwrap(pointsToGrid(backend, host, { space: 'index', coords }, { gridType: GridType.Float, name: 'density' }));
 * const bytes = unwrap(grid.hostBytes());
 * const raw = unwrap(encodeNvdb(bytes, grid.grids)); // codec 'none'
 * const zip = unwrap(encodeNvdb(bytes, grid.grids, 'zip'));
 * console.log(`.nvdb: ${raw.length} bytes raw, ${zip.length} bytes zipped`);
 * // a writer encoding one grid after another reuses one output buffer
 * const again = unwrap(encodeNvdb(bytes, grid.grids, 'zip', new Uint8Array(zip.length)));
 * console.log(`written into the given buffer: ${again.length === zip.length}`);
 * grid.dispose();
 * ```
 */
export function encodeNvdb(bytes: Uint8Array, grids: readonly GridMetadata[], codec: NvdbCodec = 'none', into?: Uint8Array): Result<Uint8Array> {
  if (codec === 'blosc') return err(ErrorCode.NotSupported, 'encodeNvdb: blosc is written by writeNvdbAsync (a WebAssembly codec loaded on demand); use zip or none here');
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
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridAccessor, GridType, HostResource, decodeNvdb, encodeNvdb, voxelsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const grid = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array([1, 2, 3]), values: new Float32Array([4.5]) }, { gridType: GridType.Float }));
 * const file = unwrap(encodeNvdb(unwrap(grid.hostBytes()), grid.grids, 'zip')); // e.g. read from disk or the network
 * grid.dispose();
 * const segments = decodeNvdb(file); // every header checked, every grid validated
 * if (!segments.ok) throw segments.error;
 * for (const { bytes, grids } of segments.value) {
 *   for (const metadata of grids) console.log(`${GridType[metadata.gridType]} grid, value at (1,2,3): ${new GridAccessor(bytes, metadata).getValue(1, 2, 3)}`);
 * }
 * const truncated = decodeNvdb(file.subarray(0, 100));
 * if (!truncated.ok) console.log(truncated.error.message); // a typed error naming the field
 * ```
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
  const headers = readSegmentHeaders(file, start, index);
  if (!headers.ok) return headers;
  const metas = headers.value.grids;
  const total = metas.reduce((n, m) => n + m.gridSize, 0);
  if (total > MAX_GRID_SIZE) return tooLargeForHost(`.nvdb segment ${index}`, total);
  const bytes = new Uint8Array(total);
  let into = 0;
  for (const [g, m] of metas.entries()) {
    const decoded = decodePayload(file, headers.value, g, bytes.subarray(into, into + m.gridSize), index, start);
    if (!decoded.ok) return decoded;
    into += m.gridSize;
  }
  const grids = validateGrids(bytes);
  if (!grids.ok) return errWithContext(grids.error, `.nvdb segment ${index}`);
  const mismatch = metadataMismatch(metas, grids.value, index, start);
  if (mismatch !== null) return mismatch;
  return ok({ segment: { bytes, grids: grids.value }, end: headers.value.end });
}

/**
 * Decodes one grid of a `.nvdb` file, inflating only its payload: `which` is its position among all the file's grids
 * (segments in order, from 0) or its name (the first grid of that name). The grid is renumbered as the only one of its
 * buffer (gridIndex 0, gridCount 1, the head checksum recomputed when one is stored), as NanoVDB's `readGrid` does,
 * and then validated. Returns a one-grid segment.
 *
 * Errors: InvalidArgument when `file` is not a Uint8Array or `which` is neither a non-negative integer nor a string,
 * or for a bad header or grid (naming the field, as `decodeNvdb`; a FileMetaData whose gridSize, type or name is not the
 * grid's included); NotFound when no grid has that position or name
 * (naming how many and which the file holds); NotSupported for a blosc payload or a grid type without a layout.
 * Spec: NANOVDB-FORMAT.md ".nvdb files" (io::readGrid by index and by name); issue 23 item 3.
 *
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridAccessor, GridType, HostResource, decodeNvdbGrid, voxelsToGrid, writeNvdb } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const coords = new Int32Array([0, 0, 0]);
 * const density = unwrap(voxelsToGrid(backend, host, { coords, values: new Float32Array([0.25]) }, { gridType: GridType.Float, name: 'density' }));
 * const temperature = unwrap(voxelsToGrid(backend, host, { coords, values: new Float32Array([300]) }, { gridType: GridType.Float, name: 'temperature' }));
 * const file = unwrap(writeNvdb([density, temperature], 'zip'));
 * const byName = unwrap(decodeNvdbGrid(file, 'temperature')); // inflates only that grid's payload
 * const byPosition = unwrap(decodeNvdbGrid(file, 0));
 * const [metadata] = byName.grids;
 * if (metadata !== undefined) console.log(`temperature ${new GridAccessor(byName.bytes, metadata).getValue(0, 0, 0)}, grid 0 '${byPosition.grids[0]?.name}'`);
 * const missing = decodeNvdbGrid(file, 'velocity');
 * if (!missing.ok) console.log(missing.error.code); // NotFound, naming the grids the file holds
 * density.dispose();
 * temperature.dispose();
 * ```
 */
export function decodeNvdbGrid(file: Uint8Array, which: number | string): Result<NvdbSegment> {
  const notBytes = bytesArgumentProblem('decodeNvdbGrid', file);
  if (notBytes !== null) return notBytes;
  if (typeof which !== 'string' && !(Number.isSafeInteger(which) && which >= 0)) {
    return err(ErrorCode.InvalidArgument, `decodeNvdbGrid: which must be a grid position (a non-negative integer) or a grid name, got ${String(which)}`);
  }
  const listed = readNvdbMetadata(file);
  if (!listed.ok) return listed;
  const all = listed.value;
  const n = typeof which === 'string' ? all.findIndex((g) => g.name === which) : which;
  const info = all[n];
  if (info === undefined) {
    const names = all.map((g) => JSON.stringify(g.name)).join(', ');
    return err(ErrorCode.NotFound, `decodeNvdbGrid: no grid ${typeof which === 'string' ? `named ${JSON.stringify(which)}` : `at position ${which}`}; the file holds ${all.length}: ${names}`);
  }
  if (info.gridSize > MAX_GRID_SIZE) return tooLargeForHost(`decodeNvdbGrid: grid ${n}`, info.gridSize);
  const bytes = new Uint8Array(info.gridSize);
  const magic = new DataView(file.buffer, file.byteOffset, Math.min(8, file.length)).getBigUint64(0, true);
  let segmentStart: number | null = null; // where the grid's segment starts; null for a raw grid buffer
  if (magic === GRID_MAGIC || magic === LEGACY_GRID_MAGIC) {
    const start = all.slice(0, n).reduce((at, g) => at + g.gridSize, 0);
    bytes.set(file.subarray(start, start + info.gridSize));
  } else {
    const decoded = decodeListed(file, all, n, bytes);
    if (!decoded.ok) return decoded;
    segmentStart = decoded.value;
  }
  renumberAsOnlyGrid(bytes);
  const grids = validateGrids(bytes);
  if (!grids.ok) return errWithContext(grids.error, `.nvdb segment ${info.segment} grid ${info.index}`);
  // A segment's listing is its FileMetaData, found by name or position: it must describe the grid it led to.
  const [grid] = grids.value as [GridMetadata];
  if (segmentStart !== null && (grid.gridSize !== info.gridSize || grid.gridType !== info.gridType || grid.name !== info.name)) {
    return segmentFault(info.segment, segmentStart, `meta[${info.index}]`, 'gridSize, gridType or name differs from the grid it describes');
  }
  return ok({ bytes, grids: grids.value });
}

/** Decodes listed grid `n` (of a file of segments) into `into`; returns the byte where its segment starts. */
function decodeListed(file: Uint8Array, all: readonly NvdbGridInfo[], n: number, into: Uint8Array): Result<number> {
  const info = all[n] as NvdbGridInfo;
  let start = 0;
  for (let segment = 0; ; segment++) {
    const headers = readSegmentHeaders(file, start, segment);
    if (!headers.ok) return headers;
    if (segment === info.segment) {
      const decoded = decodePayload(file, headers.value, info.index, into, segment, start);
      return decoded.ok ? ok(start) : decoded;
    }
    start = headers.value.end;
  }
}

/** Sets gridIndex 0 and gridCount 1 and, when a checksum is stored, recomputes its head (NanoVDB's updateGridCount). */
function renumberAsOnlyGrid(bytes: Uint8Array): void {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  if (v.getUint32(Grid.gridIndex, true) === 0 && v.getUint32(Grid.gridCount, true) === 1) return;
  v.setUint32(Grid.gridIndex, 0, true);
  v.setUint32(Grid.gridCount, 1, true);
  if (v.getUint32(Grid.checksum, true) !== CHECKSUM_NONE) v.setUint32(Grid.checksum, computeChecksum(bytes, bytes.length, 'partial').head, true);
}

/** NanoVDB's name key: `h = h * 67 + c + (h >> 56)` over the name's bytes, in u64 arithmetic. */
function nameKey(name: Uint8Array): bigint {
  let h = 0n;
  for (const c of name) h = (h * 67n + BigInt(c) + (h >> 56n)) & 0xffffffffffffffffn;
  return h;
}
