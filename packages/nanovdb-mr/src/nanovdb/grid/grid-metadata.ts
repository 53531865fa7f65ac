import { GRID_DATA_SIZE, GRID_NAME_SIZE, Grid, ROOT_OFFSET, Tree, valueLayoutOf, type GridClass, type GridType, type ValueLayout } from './grid-layout.js';
import type { GridMetadata } from './grid-validation.js';

/**
 * The metadata of the grid at the start of `v` from its GridData, TreeData and root headers alone (`layout` its value
 * layout, `name` its whole name): what `validateOne` returns once the grid passed, and what a host builder's own grid
 * is described by without a second read of its nodes (`builtGridMetadata`).
 */
export function headerMetadata(v: DataView, layout: ValueLayout, byteOffset: number, name: string, checksum: GridMetadata['checksum']): GridMetadata {
  const tree = GRID_DATA_SIZE;
  const root = ROOT_OFFSET;
  const u32x3 = (at: number): [number, number, number] => [v.getUint32(at, true), v.getUint32(at + 4, true), v.getUint32(at + 8, true)];
  const i32x3 = (at: number): [number, number, number] => [v.getInt32(at, true), v.getInt32(at + 4, true), v.getInt32(at + 8, true)];
  const f64x3 = (at: number): [number, number, number] => [v.getFloat64(at, true), v.getFloat64(at + 8, true), v.getFloat64(at + 16, true)];
  return {
    byteOffset,
    gridSize: Number(v.getBigUint64(Grid.gridSize, true)),
    gridIndex: v.getUint32(Grid.gridIndex, true),
    gridCount: v.getUint32(Grid.gridCount, true),
    gridType: v.getUint32(Grid.gridType, true) as GridType,
    gridClass: v.getUint32(Grid.gridClass, true) as GridClass,
    version: v.getUint32(Grid.version, true),
    flags: v.getUint32(Grid.flags, true),
    name,
    nodeCount: u32x3(tree + Tree.nodeCount),
    tileCount: u32x3(tree + Tree.tileCount),
    voxelCount: Number(v.getBigUint64(tree + Tree.voxelCount, true)),
    valueCount: layout.isIndex ? Number(v.getBigUint64(Grid.data1, true)) : 0,
    indexBBox: { min: i32x3(root), max: i32x3(root + 12) },
    worldBBox: { min: f64x3(Grid.worldBBox), max: f64x3(Grid.worldBBox + 24) },
    voxelSize: f64x3(Grid.voxelSize),
    checksum,
    blindMetadataCount: v.getUint32(Grid.blindMetadataCount, true),
  };
}

/**
 * The metadata of one grid that hs's own host builder has just written into `bytes` (its first gridSize bytes), read
 * from the headers without the node walk of `validateGrids`: the builder writes every node, count and offset it
 * declares, so a second read of every mask would only find what it wrote (NanoVDB's `createNanoGrid` does not
 * validate its output either). Internal: only builders call it, on bytes no one else has had; bytes from anywhere
 * else go through `validateGrids`. Tests hold the builders to `validateGrids` explicitly.
 */
export function builtGridMetadata(bytes: Uint8Array): GridMetadata {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const layout = valueLayoutOf(v.getUint32(Grid.gridType, true)) as ValueLayout;
  const nameBytes = bytes.subarray(Grid.gridName, Grid.gridName + GRID_NAME_SIZE);
  const name = new TextDecoder().decode(nameBytes.subarray(0, nameBytes.indexOf(0)));
  return headerMetadata(v, layout, 0, name, { head: v.getUint32(Grid.checksum, true), tail: v.getUint32(Grid.checksum + 4, true) });
}
