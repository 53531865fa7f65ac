import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { GRID_DATA_SIZE, GRID_MAGIC, GRID_NAME_SIZE, Grid, LEGACY_GRID_MAGIC, ROOT_OFFSET, Tree, type GridClass, type GridType } from '../grid/grid-layout.js';
import { bytesArgumentProblem } from '../grid/grid-validation.js';
import { readSegmentHeaders, type NvdbGridInfo } from './nvdb-segment.js';

/**
 * Lists every grid of a `.nvdb` file from its headers alone, inflating and validating nothing: per grid its segment
 * and position, name, grid type and class, codec, decoded and stored sizes, voxel count, index and world bounding
 * boxes, voxel size, node and tile counts, blind-data count and version (NanoVDB's `readGridMetaData`). Blosc files
 * are listed too. A file of raw grid buffers back to back is listed from each GridData and TreeData (codec `none`).
 * The grids are not checked: `decodeNvdb` or `decodeNvdbGrid` validate what they decode.
 *
 * Errors: InvalidArgument when `file` is not a Uint8Array, or naming the segment and field of a bad or truncated
 * header (`.nvdb segment 0 at byte 0: meta[1].nameSize: …`, `raw grid 2 at byte 1024: gridSize: …`), or for an empty file.
 * Spec: NANOVDB-FORMAT.md ".nvdb files"; issue 23 item 3 (metadata-only reads).
 *
 * @example
 * ```ts
 * import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, pointsToGrid, readNvdbMetadata, writeNvdb } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const smoke = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords: new Int32Array([0, 0, 0, 9, 0, 0]) }, { gridType: GridType.Float, name: 'smoke' }));
 * const dir = mkdtempSync(join(tmpdir(), 'nvdb-'));
 * writeFileSync(join(dir, 'smoke.nvdb'), unwrap(writeNvdb(smoke, 'zip')));
 * smoke.dispose();
 * // list the grids from the headers alone: nothing is inflated or validated
 * const grids = unwrap(readNvdbMetadata(readFileSync(join(dir, 'smoke.nvdb'))));
 * for (const g of grids) console.log(`${g.name}: ${GridType[g.gridType]}, ${g.voxelCount} voxels, ${g.gridSize} bytes (${g.fileSize} stored, ${g.codec})`);
 * rmSync(dir, { recursive: true });
 * ```
 */
export function readNvdbMetadata(file: Uint8Array): Result<NvdbGridInfo[]> {
  const notBytes = bytesArgumentProblem('readNvdbMetadata', file);
  if (notBytes !== null) return notBytes;
  if (file.length === 0) return err(ErrorCode.InvalidArgument, 'readNvdbMetadata: the file is empty');
  const v = new DataView(file.buffer, file.byteOffset, file.length);
  const magic = file.length >= 8 ? v.getBigUint64(0, true) : 0n;
  if (magic === GRID_MAGIC || magic === LEGACY_GRID_MAGIC) return rawGridInfo(file, v);
  const grids: NvdbGridInfo[] = [];
  for (let at = 0, segment = 0; at < file.length; segment++) {
    const headers = readSegmentHeaders(file, at, segment);
    if (!headers.ok) return headers;
    grids.push(...headers.value.grids);
    at = headers.value.end;
  }
  return ok(grids);
}

function rawGridInfo(file: Uint8Array, v: DataView): Result<NvdbGridInfo[]> {
  const grids: NvdbGridInfo[] = [];
  for (let at = 0, g = 0; at < file.length; g++) {
    const bad = (field: string, problem: string): Result<never> => err(ErrorCode.InvalidArgument, `raw grid ${g} at byte ${at}: ${field}: ${problem}`);
    if (file.length - at < ROOT_OFFSET + 24) return bad('gridSize', `only ${file.length - at} bytes remain, fewer than the grid, tree and root headers (truncated)`);
    const magic = v.getBigUint64(at + Grid.magic, true);
    if (magic !== GRID_MAGIC && magic !== LEGACY_GRID_MAGIC) return bad('magic', 'expected "NanoVDB1" (or the older "NanoVDB0")');
    const gridSize = v.getBigUint64(at + Grid.gridSize, true);
    if (gridSize < BigInt(ROOT_OFFSET) || gridSize % 32n !== 0n || gridSize > BigInt(file.length - at)) {
      return bad('gridSize', `${gridSize} is not a multiple of 32 from ${ROOT_OFFSET} to the ${file.length - at} bytes that remain`);
    }
    const nameField = file.subarray(at + Grid.gridName, at + Grid.gridName + GRID_NAME_SIZE);
    const nul = nameField.indexOf(0);
    const i32x3 = (o: number): [number, number, number] => [v.getInt32(o, true), v.getInt32(o + 4, true), v.getInt32(o + 8, true)];
    const f64x3 = (o: number): [number, number, number] => [v.getFloat64(o, true), v.getFloat64(o + 8, true), v.getFloat64(o + 16, true)];
    const u32x3 = (o: number): [number, number, number] => [v.getUint32(o, true), v.getUint32(o + 4, true), v.getUint32(o + 8, true)];
    const tree = at + GRID_DATA_SIZE;
    grids.push({
      segment: 0,
      index: g,
      name: new TextDecoder().decode(nameField.subarray(0, nul < 0 ? GRID_NAME_SIZE : nul)),
      gridType: v.getUint32(at + Grid.gridType, true) as GridType,
      gridClass: v.getUint32(at + Grid.gridClass, true) as GridClass,
      codec: 'none',
      gridSize: Number(gridSize),
      fileSize: Number(gridSize),
      voxelCount: Number(v.getBigUint64(tree + Tree.voxelCount, true)),
      indexBBox: { min: i32x3(at + ROOT_OFFSET), max: i32x3(at + ROOT_OFFSET + 12) },
      worldBBox: { min: f64x3(at + Grid.worldBBox), max: f64x3(at + Grid.worldBBox + 24) },
      voxelSize: f64x3(at + Grid.voxelSize),
      nodeCount: u32x3(tree + Tree.nodeCount),
      tileCount: u32x3(tree + Tree.tileCount),
      blindDataCount: v.getUint32(at + Grid.blindMetadataCount, true),
      version: v.getUint32(at + Grid.version, true),
    });
    at += Number(gridSize);
  }
  return ok(grids);
}
