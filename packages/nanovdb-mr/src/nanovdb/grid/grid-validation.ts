import { ErrorCode, err, ok, type Err, type Result } from '@hs/streams';
import { popcount8 } from './bit-mask.js';
import { CHECKSUM_NONE, computeChecksum, type ChecksumMode } from './grid-checksum.js';
import {
  BLIND_METADATA_SIZE,
  DATA_ALIGNMENT,
  FORMAT_MAJOR,
  GRID_DATA_SIZE,
  GRID_MAGIC,
  GRID_NAME_SIZE,
  Grid,
  Internal,
  LOWER,
  Leaf,
  ROOT_OFFSET,
  ROOT_TILE_SIZE,
  Tree,
  UPPER,
  valueLayoutOf,
  GridType,
  type GridClass,
  type InternalLevel,
  type ValueLayout,
} from './grid-layout.js';

/** An axis-aligned box: `min` and `max` corners (inclusive for index boxes). */
export interface Box3 {
  /** Lower corner, x y z. */
  readonly min: readonly [number, number, number];
  /** Upper corner, x y z. */
  readonly max: readonly [number, number, number];
}

/** What validation learned about one grid of a buffer; everything a handle needs without re-reading bytes. */
export interface GridMetadata {
  /** Byte offset of this grid in the buffer. */
  readonly byteOffset: number;
  /** Bytes of this grid (GridData.gridSize). */
  readonly gridSize: number;
  /** Position of this grid in its chain, from 0 (GridData.gridIndex). */
  readonly gridIndex: number;
  /** Grids in the chain (GridData.gridCount). */
  readonly gridCount: number;
  /** Value type of the grid. */
  readonly gridType: GridType;
  /** Meaning of the values. */
  readonly gridClass: GridClass;
  /** Format version (`major << 21 | minor << 10 | patch`). */
  readonly version: number;
  /** Bit set of `GridFlags`. */
  readonly flags: number;
  /** Grid name (UTF-8, at most 255 bytes in the name field). */
  readonly name: string;
  /** Leaf, lower, upper node counts. */
  readonly nodeCount: readonly [number, number, number];
  /** Active tiles in lower, upper and root. */
  readonly tileCount: readonly [number, number, number];
  /** Active voxels (tiles counted by the voxels they cover). */
  readonly voxelCount: number;
  /** For index grids: values indexed, background slot 0 included (GridData.data1); 0 otherwise. */
  readonly valueCount: number;
  /** Index-space bounding box of the active values (the root's bbox). */
  readonly indexBBox: Box3;
  /** World-space bounding box. */
  readonly worldBBox: Box3;
  /** Voxel size per axis, world units. */
  readonly voxelSize: readonly [number, number, number];
  /** Checksum halves as stored; `0xffffffff` marks a half that was not computed. */
  readonly checksum: {
    /** CRC32 of the grid and tree headers after the checksum field (bytes 16 to 736). */
    readonly head: number;
    /** CRC32 of the per-4-KiB-block CRC32s of the rest of the grid (bytes 736 to gridSize). */
    readonly tail: number;
  };
  /** Blind-metadata records. */
  readonly blindMetadataCount: number;
}

/** Options of `validateGrids`. */
export interface ValidateOptions {
  /** Verify stored checksums (default true). */
  readonly checksum?: boolean;
}

class GridFault {
  constructor(
    readonly field: string,
    readonly problem: string,
    readonly code: ErrorCode = ErrorCode.InvalidArgument,
  ) {}
}

/**
 * Validates a buffer of one or more NanoVDB grids (the whole chain: each grid's gridIndex, gridCount and
 * gridSize place the next one) and returns their metadata. Every offset is checked to lie in its grid
 * before it is followed, so corrupted bytes never cause an out-of-bounds read. Checks, in order per grid:
 * size of the headers, magic, version, gridSize, gridIndex/gridCount, gridType, gridName, blind metadata,
 * tree node offsets and counts, root table, every child offset of every node, node counts, voxel count,
 * index-grid value offsets, and the checksum when one is stored.
 *
 * Errors: InvalidArgument when `bytes` is not a Uint8Array, or naming the grid and the first bad field (for
 * example `grid 0: tree.nodeOffset[1]: …`; a buffer shorter than its gridSize is reported as truncated); NotSupported for a grid type hs does not read (Float, Index and
 * OnIndex are supported). Spec: "handle construction from host bytes now validates the whole grid chain"
 * (Progress, #2301).
 */
export function validateGrids(bytes: Uint8Array, options: ValidateOptions = {}): Result<GridMetadata[]> {
  const notBytes = bytesArgumentProblem('validateGrids', bytes);
  if (notBytes !== null) return notBytes;
  const grids: GridMetadata[] = [];
  let offset = 0;
  let expectedCount = -1;
  do {
    const view = new DataView(bytes.buffer, bytes.byteOffset + offset, bytes.length - offset);
    const checked = validateOne(view, bytes.subarray(offset), offset, grids.length, expectedCount, options.checksum !== false);
    if (checked instanceof GridFault) {
      return err(checked.code, `NanoVDB grid ${grids.length} at byte ${offset}: ${checked.field}: ${checked.problem}`);
    }
    grids.push(checked);
    expectedCount = checked.gridCount;
    offset += checked.gridSize;
  } while (grids.length < expectedCount);
  return ok(grids);
}

/**
 * Null when `value` is a Uint8Array; otherwise the InvalidArgument for `who` to return, naming what was
 * passed (callers pass untrusted file contents, so a wrong type is reported, not thrown as a TypeError).
 */
export function bytesArgumentProblem(who: string, value: unknown): Err | null {
  if (value instanceof Uint8Array) return null;
  const got = value === null ? 'null' : typeof value === 'object' ? `a ${(value as object).constructor?.name ?? 'object'}` : `a ${typeof value}`;
  return err(ErrorCode.InvalidArgument, `${who}: expected the bytes as a Uint8Array (for example from fs.readFileSync), got ${got}`);
}

function validateOne(
  v: DataView,
  bytes: Uint8Array,
  byteOffset: number,
  index: number,
  expectedCount: number,
  verifyChecksum: boolean,
): GridMetadata | GridFault {
  if (v.byteLength < ROOT_OFFSET) {
    return new GridFault('gridSize', `only ${v.byteLength} bytes remain, fewer than the ${ROOT_OFFSET} of GridData and TreeData (truncated)`);
  }
  if (v.getBigUint64(Grid.magic, true) !== GRID_MAGIC) return new GridFault('magic', 'expected "NanoVDB1"');
  const version = v.getUint32(Grid.version, true);
  if (version >>> 21 !== FORMAT_MAJOR) return new GridFault('version', `major version ${version >>> 21}, hs reads ${FORMAT_MAJOR}`);
  const gridSizeBig = v.getBigUint64(Grid.gridSize, true);
  if (gridSizeBig < BigInt(ROOT_OFFSET) || gridSizeBig % BigInt(DATA_ALIGNMENT) !== 0n) {
    return new GridFault('gridSize', `${gridSizeBig} is not a multiple of 32 of at least ${ROOT_OFFSET} bytes`);
  }
  if (gridSizeBig > BigInt(v.byteLength)) {
    return new GridFault('gridSize', `the buffer is truncated: the grid is ${gridSizeBig} bytes, only ${v.byteLength} are available`);
  }
  const gridSize = Number(gridSizeBig);
  const gridIndex = v.getUint32(Grid.gridIndex, true);
  const gridCount = v.getUint32(Grid.gridCount, true);
  if (gridCount === 0 || (expectedCount >= 0 && gridCount !== expectedCount)) {
    return new GridFault('gridCount', `${gridCount}${expectedCount >= 0 ? `, but grid 0 declares ${expectedCount}` : ' (must be at least 1)'}`);
  }
  if (gridIndex !== index) return new GridFault('gridIndex', `${gridIndex}, expected ${index} (its position in the chain)`);
  const gridType = v.getUint32(Grid.gridType, true);
  const layout = valueLayoutOf(gridType);
  if (layout === undefined) return new GridFault('gridType', `type ${gridType} is not one hs reads (Float 1, Index 19, OnIndex 20)`, ErrorCode.NotSupported);
  const nameBytes = bytes.subarray(Grid.gridName, Grid.gridName + GRID_NAME_SIZE);
  const nul = nameBytes.indexOf(0);
  if (nul < 0) return new GridFault('gridName', 'not NUL-terminated within 256 bytes');
  const name = new TextDecoder().decode(nameBytes.subarray(0, nul));

  const blindOffset = v.getBigInt64(Grid.blindMetadataOffset, true);
  const blindCount = v.getUint32(Grid.blindMetadataCount, true);
  if (blindOffset < BigInt(ROOT_OFFSET) || blindOffset > gridSizeBig || blindOffset + BigInt(blindCount) * BigInt(BLIND_METADATA_SIZE) > gridSizeBig) {
    return new GridFault('blindMetadataOffset', `${blindOffset} with ${blindCount} records of ${BLIND_METADATA_SIZE} bytes does not fit in gridSize ${gridSize}`);
  }
  for (let b = 0; b < blindCount; b++) {
    const record = Number(blindOffset) + b * BLIND_METADATA_SIZE;
    const dataOffset = v.getBigInt64(record, true);
    const valueCount = v.getBigUint64(record + 8, true);
    const valueSize = v.getUint32(record + 16, true);
    const end = BigInt(record) + dataOffset + valueCount * BigInt(valueSize);
    if (BigInt(record) + dataOffset < BigInt(ROOT_OFFSET) || end > gridSizeBig) {
      return new GridFault(`blindMetadata[${b}].dataOffset`, `${dataOffset} with ${valueCount} values of ${valueSize} bytes leaves the grid`);
    }
  }

  const tree = GRID_DATA_SIZE;
  const nodeCount: [number, number, number] = [
    v.getUint32(tree + Tree.nodeCount, true),
    v.getUint32(tree + Tree.nodeCount + 4, true),
    v.getUint32(tree + Tree.nodeCount + 8, true),
  ];
  const tileCount: [number, number, number] = [
    v.getUint32(tree + Tree.tileCount, true),
    v.getUint32(tree + Tree.tileCount + 4, true),
    v.getUint32(tree + Tree.tileCount + 8, true),
  ];
  if (v.getBigInt64(tree + Tree.nodeOffset + 24, true) !== BigInt(ROOT_OFFSET - GRID_DATA_SIZE)) {
    return new GridFault('tree.nodeOffset[3]', `the root must follow TreeData (offset ${ROOT_OFFSET - GRID_DATA_SIZE})`);
  }
  const root = ROOT_OFFSET;
  const tableSize = v.getUint32(root + 24, true);
  const tilesEnd = root + layout.rootDataSize + tableSize * ROOT_TILE_SIZE;
  if (tilesEnd > gridSize) return new GridFault('root.tableSize', `${tableSize} tiles run past gridSize ${gridSize}`);
  const sizes = [layout.leafSize, LOWER.size, UPPER.size];
  const starts: number[] = [];
  for (let level = 0; level < 3; level++) {
    const rel = v.getBigInt64(tree + Tree.nodeOffset + 8 * level, true);
    const count = nodeCount[level] as number;
    if (count === 0) {
      starts.push(0);
      continue;
    }
    const start = BigInt(tree) + rel;
    if (start < BigInt(tilesEnd) || start % BigInt(DATA_ALIGNMENT) !== 0n || start + BigInt(count) * BigInt(sizes[level] as number) > gridSizeBig) {
      return new GridFault(`tree.nodeOffset[${level}]`, `${rel} with ${count} nodes of ${sizes[level]} bytes lies outside the node region of the grid`);
    }
    starts.push(Number(start));
  }
  const [leafStart, lowerStart, upperStart] = starts as [number, number, number];

  // Root tiles: each child must be an upper node; count children and active value tiles.
  let upperChildren = 0;
  let rootActive = 0;
  for (let t = 0; t < tableSize; t++) {
    const tile = root + layout.rootDataSize + t * ROOT_TILE_SIZE;
    const child = v.getBigInt64(tile + 8, true);
    if (child !== 0n) {
      const target = BigInt(root) + child;
      if (nodeCount[2] === 0 || target < BigInt(upperStart) || target >= BigInt(upperStart + nodeCount[2] * UPPER.size) || (target - BigInt(upperStart)) % BigInt(UPPER.size) !== 0n) {
        return new GridFault(`root.tile[${t}].child`, `${child} does not point at an upper node`);
      }
      upperChildren++;
    } else if (v.getUint32(tile + 16, true) !== 0) {
      rootActive++;
    }
  }
  if (upperChildren !== nodeCount[2]) return new GridFault('tree.nodeCount[2]', `${nodeCount[2]} upper nodes declared, ${upperChildren} root tiles point at one`);
  const upper = checkInternal(v, UPPER, upperStart, nodeCount[2], lowerStart, nodeCount[1], LOWER.size, 'upper');
  if (upper instanceof GridFault) return upper;
  if (upper.children !== nodeCount[1]) return new GridFault('tree.nodeCount[1]', `${nodeCount[1]} lower nodes declared, upper child masks hold ${upper.children}`);
  const lower = checkInternal(v, LOWER, lowerStart, nodeCount[1], leafStart, nodeCount[0], layout.leafSize, 'lower');
  if (lower instanceof GridFault) return lower;
  if (lower.children !== nodeCount[0]) return new GridFault('tree.nodeCount[0]', `${nodeCount[0]} leaves declared, lower child masks hold ${lower.children}`);
  if (tileCount[0] !== lower.active || tileCount[1] !== upper.active || tileCount[2] !== rootActive) {
    return new GridFault('tree.tileCount', `[${tileCount.join(', ')}] declared, the nodes hold [${lower.active}, ${upper.active}, ${rootActive}] active tiles`);
  }
  const leaves = checkLeaves(v, bytes, layout, leafStart, nodeCount[0], gridType, v.getBigUint64(Grid.data1, true));
  if (leaves instanceof GridFault) return leaves;
  const voxels = BigInt(leaves) + (BigInt(lower.active) << 9n) + (BigInt(upper.active) << 21n) + (BigInt(rootActive) << 36n);
  const voxelCount = v.getBigUint64(tree + Tree.voxelCount, true);
  if (voxelCount !== voxels) return new GridFault('tree.voxelCount', `${voxelCount} declared, the tree holds ${voxels} active voxels`);

  const head = v.getUint32(Grid.checksum, true);
  const tail = v.getUint32(Grid.checksum + 4, true);
  if (verifyChecksum && head !== CHECKSUM_NONE) {
    const mode: ChecksumMode = tail === CHECKSUM_NONE ? 'partial' : 'full';
    const actual = computeChecksum(bytes, gridSize, mode);
    if (actual.head !== head) return new GridFault('checksum.head', `stored 0x${head.toString(16)}, computed 0x${actual.head.toString(16)}`);
    if (mode === 'full' && actual.tail !== tail) return new GridFault('checksum.tail', `stored 0x${tail.toString(16)}, computed 0x${actual.tail.toString(16)}`);
  }

  const i32x3 = (at: number): [number, number, number] => [v.getInt32(at, true), v.getInt32(at + 4, true), v.getInt32(at + 8, true)];
  const f64x3 = (at: number): [number, number, number] => [v.getFloat64(at, true), v.getFloat64(at + 8, true), v.getFloat64(at + 16, true)];
  return {
    byteOffset,
    gridSize,
    gridIndex,
    gridCount,
    gridType: gridType as GridType,
    gridClass: v.getUint32(Grid.gridClass, true) as GridClass,
    version,
    flags: v.getUint32(Grid.flags, true),
    name,
    nodeCount,
    tileCount,
    voxelCount: Number(voxelCount),
    valueCount: layout.isIndex ? Number(v.getBigUint64(Grid.data1, true)) : 0,
    indexBBox: { min: i32x3(root), max: i32x3(root + 12) },
    worldBBox: { min: f64x3(Grid.worldBBox), max: f64x3(Grid.worldBBox + 24) },
    voxelSize: f64x3(Grid.voxelSize),
    checksum: { head, tail },
    blindMetadataCount: blindCount,
  };
}

interface InternalCounts {
  readonly children: number;
  readonly active: number;
}


function checkInternal(
  v: DataView,
  level: InternalLevel,
  start: number,
  count: number,
  childStart: number,
  childCount: number,
  childSize: number,
  name: string,
): InternalCounts | GridFault {
  let children = 0;
  let active = 0;
  const childEnd = childStart + childCount * childSize;
  for (let n = 0; n < count; n++) {
    const node = start + n * level.size;
    for (let byte = 0; byte < level.maskBytes; byte++) {
      const childBits = v.getUint8(node + level.childMask + byte);
      const valueBits = v.getUint8(node + Internal.valueMask + byte);
      active += popcount8(valueBits & ~childBits);
      if (childBits === 0) continue;
      for (let bit = 0; bit < 8; bit++) {
        if ((childBits & (1 << bit)) === 0) continue;
        const entry = byte * 8 + bit;
        const target = node + Number(v.getBigInt64(node + level.table + 8 * entry, true));
        if (childCount === 0 || target < childStart || target >= childEnd || (target - childStart) % childSize !== 0) {
          return new GridFault(`${name}[${n}].table[${entry}]`, 'child offset does not point at a node of the next level');
        }
        children++;
      }
    }
  }
  return { children, active };
}

/** Active voxels of all leaves, or the fault; for index grids, checks each leaf's value offset. */
function checkLeaves(v: DataView, bytes: Uint8Array, layout: ValueLayout, start: number, count: number, gridType: number, valueCount: bigint): number | GridFault {
  let voxels = 0;
  for (let n = 0; n < count; n++) {
    const leaf = start + n * layout.leafSize;
    let inLeaf = 0;
    const mask = leaf + Leaf.valueMask;
    for (let byte = 0; byte < 64; byte++) inLeaf += popcount8(bytes[mask + byte] as number);
    if (layout.isIndex) {
      const offset = BigInt(v.getUint32(leaf + layout.leafValues, true)) + (BigInt(v.getUint32(leaf + layout.leafValues + 4, true)) << 32n);
      const span = gridType === GridType.OnIndex ? BigInt(inLeaf) : 512n;
      if (inLeaf > 0 && (offset < 1n || offset + span > valueCount)) {
        return new GridFault(`leaf[${n}].offset`, `${offset} with ${span} values runs past the ${valueCount} values the grid indexes (data1)`);
      }
    }
    voxels += inLeaf;
  }
  return voxels;
}
