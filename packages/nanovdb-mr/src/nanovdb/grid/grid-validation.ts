import { ErrorCode, err, ok, type Err, type Result } from '@hs/streams';
import { popcount32, popcount8 } from './bit-mask.js';
import { CHECKSUM_NONE, computeChecksum, type ChecksumMode } from './grid-checksum.js';
import {
  BLIND_METADATA_SIZE,
  BlindDataClass,
  BlindMeta,
  DATA_ALIGNMENT,
  FORMAT_MAJOR,
  GRID_DATA_SIZE,
  GRID_CLASS_END,
  GRID_MAGIC,
  GRID_NAME_SIZE,
  GRID_TYPE_END,
  Grid,
  GridFlags,
  Internal,
  LEGACY_GRID_MAGIC,
  Leaf,
  LeafKind,
  ROOT_OFFSET,
  Tree,
  leafBytes,
  valueLayoutOf,
  GridType,
  GridClass,
  gridClassFitsType,
  type InternalLevel,
  type ValueLayout,
} from './grid-layout.js';
import { GridFault, blindRecordFault, longGridName } from './blind-metadata-validation.js';

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
  /** Grid name (UTF-8): the name field, or for a grid flagged HasLongGridName the whole name from its GridName blind data. */
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

/**
 * Validates a buffer of one or more NanoVDB grids (the whole chain: each grid's gridIndex, gridCount and
 * gridSize place the next one) and returns their metadata, for every grid type of NanoVDB 32.9 (Float to UInt8,
 * quantized Fp4/Fp8/Fp16/FpN, Mask, Boolean, index and PointIndex grids). Every offset is checked to lie in its grid
 * before it is followed, so corrupted bytes never cause an out-of-bounds read. Checks, in order per grid, with
 * NanoVDB's `isValid` at `CheckMode::Full` as the floor: size of the headers, magic ("NanoVDB1", or the older
 * "NanoVDB0"), version, gridSize, gridIndex/gridCount, grid class range, grid type, the class's fit with the type,
 * gridName, blind metadata, tree node offsets and counts, root table, every child offset of every node (it must
 * point at a node of the next level; in a breadth-first grid, the next one in buffer order; otherwise no node may be
 * pointed at twice), FpN code widths, node counts, voxel count, index-grid value offsets, and the checksum when one
 * is stored.
 *
 * Errors: InvalidArgument when `bytes` is not a Uint8Array, or naming the grid and the first bad field (for
 * example `grid 0: tree.nodeOffset[1]: …`, `lower[0].table[17]: child offset …`; a buffer shorter than its gridSize is
 * reported as truncated); NotSupported for a grid type code with no grid layout (Unknown, the retired 21 and 22, and
 * the blind-data-only Vec3u8 and Vec3u16). Spec: "handle construction from host bytes now validates the whole grid
 * chain" (Progress, #2301); issue 23 (value types, validation at NanoVDB's strength).
 *
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, pointsToGrid, validateGrids } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const grid = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords: new Int32Array([0, 0, 0, 9, 9, 9]) }, { gridType: GridType.Float }));
 * const bytes = unwrap(grid.hostBytes()).slice(); // e.g. bytes received from another process
 * const grids = validateGrids(bytes);
 * if (grids.ok) for (const g of grids.value) console.log(`${GridType[g.gridType]} grid, ${g.voxelCount} voxels`);
 * bytes[636] = 99; // corrupt the gridType field
 * const bad = validateGrids(bytes);
 * if (!bad.ok) console.log(bad.error.message); // names the grid and the first bad field
 * grid.dispose();
 * ```
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
  const magic = v.getBigUint64(Grid.magic, true);
  if (magic !== GRID_MAGIC && magic !== LEGACY_GRID_MAGIC) return new GridFault('magic', 'expected "NanoVDB1" (or the older "NanoVDB0")');
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
  const gridClass = v.getUint32(Grid.gridClass, true);
  if (gridClass >= GRID_CLASS_END) return new GridFault('gridClass', `${gridClass} is not a GridClass (0 to ${GRID_CLASS_END - 1})`);
  const gridType = v.getUint32(Grid.gridType, true);
  if (gridType >= GRID_TYPE_END) return new GridFault('gridType', `${gridType} is not a GridType (0 to ${GRID_TYPE_END - 1})`);
  const layout = valueLayoutOf(gridType);
  if (layout === undefined) {
    return new GridFault('gridType', `type ${gridType} (${GridType[gridType] ?? 'retired'}) has no grid layout: Unknown, retired or blind-data only`, ErrorCode.NotSupported);
  }
  if (!gridClassFitsType(gridClass, gridType)) {
    return new GridFault('gridClass', `${GridClass[gridClass]} (${gridClass}) does not go with grid type ${GridType[gridType]} (${gridType})`);
  }
  const flags = v.getUint32(Grid.flags, true);
  const breadthFirst = (flags & GridFlags.IsBreadthFirst) !== 0;
  if (gridType === GridType.FpN && !breadthFirst) return new GridFault('flags', 'FpN leaves vary in size, so they must be stored breadth-first (IsBreadthFirst)');
  const nameBytes = bytes.subarray(Grid.gridName, Grid.gridName + GRID_NAME_SIZE);
  const nul = nameBytes.indexOf(0);
  if (nul < 0) return new GridFault('gridName', 'not NUL-terminated within 256 bytes');
  let name = new TextDecoder().decode(nameBytes.subarray(0, nul));

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
    const fault = blindRecordFault(v, record, b);
    if (fault !== undefined) return fault;
  }
  if ((flags & GridFlags.HasLongGridName) !== 0) {
    const long = longGridName(v, bytes, Number(blindOffset), blindCount);
    if (long instanceof GridFault) return long;
    name = long;
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
  const tilesEnd = root + layout.rootDataSize + tableSize * layout.tileSize;
  if (tilesEnd > gridSize) return new GridFault('root.tableSize', `${tableSize} tiles run past gridSize ${gridSize}`);
  const sizes = [layout.leafSize, layout.lower.size, layout.upper.size];
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

  const levels = [nodeSpans(v, layout, leafStart, nodeCount[0], gridSize, 'leaf'), fixedSpans(lowerStart, nodeCount[1], layout.lower.size), fixedSpans(upperStart, nodeCount[2], layout.upper.size)];
  if (levels[0] instanceof GridFault) return levels[0];
  const [leafSpans, lowerSpans, upperSpans] = levels as [NodeSpans, NodeSpans, NodeSpans];

  // Root tiles: each child must be an upper node (the next one, when breadth-first); count active value tiles.
  const upperOrder = new ChildOrder(upperSpans, breadthFirst);
  let rootActive = 0;
  for (let t = 0; t < tableSize; t++) {
    const tile = root + layout.rootDataSize + t * layout.tileSize;
    const child = v.getBigInt64(tile + 8, true);
    if (child !== 0n) {
      const problem = upperOrder.take(BigInt(root) + child);
      if (problem !== null) return new GridFault(`root.tile[${t}].child`, `${child} ${problem}`);
    } else if (v.getUint32(tile + 16, true) !== 0) {
      rootActive++;
    }
  }
  if (upperOrder.taken !== nodeCount[2]) return new GridFault('tree.nodeCount[2]', `${nodeCount[2]} upper nodes declared, ${upperOrder.taken} root tiles point at one`);
  const upper = checkInternal(v, layout.upper, upperSpans, lowerSpans, breadthFirst, 'upper');
  if (upper instanceof GridFault) return upper;
  if (upper.children !== nodeCount[1]) return new GridFault('tree.nodeCount[1]', `${nodeCount[1]} lower nodes declared, upper child masks hold ${upper.children}`);
  const lower = checkInternal(v, layout.lower, lowerSpans, leafSpans, breadthFirst, 'lower');
  if (lower instanceof GridFault) return lower;
  if (lower.children !== nodeCount[0]) return new GridFault('tree.nodeCount[0]', `${nodeCount[0]} leaves declared, lower child masks hold ${lower.children}`);
  if (tileCount[0] !== lower.active || tileCount[1] !== upper.active || tileCount[2] !== rootActive) {
    return new GridFault('tree.tileCount', `[${tileCount.join(', ')}] declared, the nodes hold [${lower.active}, ${upper.active}, ${rootActive}] active tiles`);
  }
  const leaves = checkLeaves(v, bytes, layout, leafSpans, v.getBigUint64(Grid.data1, true));
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
    gridClass: gridClass as GridClass,
    version,
    flags,
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

/** Where the nodes of one level start: at a fixed stride, or (FpN leaves) listed one by one. */
interface NodeSpans {
  readonly count: number;
  /** Byte offset of node `i`. */
  at(i: number): number;
  /** Index of the node starting at `offset`, or -1 when no node starts there. */
  indexOf(offset: number): number;
}

function fixedSpans(start: number, count: number, size: number): NodeSpans {
  return {
    count,
    at: (i) => start + i * size,
    indexOf: (offset) => (offset >= start && offset < start + count * size && (offset - start) % size === 0 ? (offset - start) / size : -1),
  };
}

/** The leaves' spans; FpN leaves are walked one by one (each is 96 + 64 * bits bytes), checking each fits the grid. */
function nodeSpans(v: DataView, layout: ValueLayout, start: number, count: number, gridSize: number, name: string): NodeSpans | GridFault {
  if (layout.gridType !== GridType.FpN) return fixedSpans(start, count, layout.leafSize);
  const starts = new Float64Array(count);
  let at = start;
  for (let i = 0; i < count; i++) {
    if (at + layout.leafSize > gridSize) return new GridFault(`${name}[${i}]`, `starts at byte ${at}, past the end of the grid (gridSize ${gridSize})`);
    const code = v.getUint8(at + Leaf.flags) >> 5;
    if (code > 4) return new GridFault(`${name}[${i}].flags`, `FpN code width 2^${code} bits is not one of 1, 2, 4, 8, 16`);
    starts[i] = at;
    at += leafBytes(layout, v, at);
    if (at > gridSize) return new GridFault(`${name}[${i}].flags`, `its ${1 << code}-bit codes run past the end of the grid (gridSize ${gridSize})`);
  }
  return {
    count,
    at: (i) => starts[i] as number,
    indexOf: (offset) => {
      let lo = 0;
      let hi = count - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const s = starts[mid] as number;
        if (s === offset) return mid;
        if (s < offset) lo = mid + 1;
        else hi = mid - 1;
      }
      return -1;
    },
  };
}

/**
 * Checks the child pointers into one level as NanoVDB's validator does at CheckMode::Full: each must point at a
 * node of that level; in a breadth-first grid, children met in order (root tiles, then child masks node by node)
 * must be the level's nodes in buffer order; otherwise no node may be the child of two entries (aliasing).
 */
class ChildOrder {
  taken = 0;
  readonly #seen: Uint8Array | null;
  constructor(
    readonly spans: NodeSpans,
    readonly breadthFirst: boolean,
  ) {
    this.#seen = breadthFirst ? null : new Uint8Array(spans.count);
  }

  /** Null when `target` is acceptable as the next child, else the problem. */
  take(target: bigint): string | null {
    if (target < 0n || target > BigInt(Number.MAX_SAFE_INTEGER)) return 'does not point at a node of the next level';
    const i = this.spans.indexOf(Number(target));
    if (i < 0) return 'does not point at a node of the next level';
    if (this.breadthFirst && i !== this.taken) {
      return `points at node ${i} where node ${this.taken} comes next: the grid is flagged breadth-first, but its nodes are not stored in that order`;
    }
    if (this.#seen !== null) {
      if (this.#seen[i] !== 0) return `points at node ${i}, which another entry already points at (aliasing)`;
      this.#seen[i] = 1;
    }
    this.taken++;
    return null;
  }
}

function checkInternal(v: DataView, level: InternalLevel, nodes: NodeSpans, childNodes: NodeSpans, breadthFirst: boolean, name: string): InternalCounts | GridFault {
  let active = 0;
  const order = new ChildOrder(childNodes, breadthFirst);
  const words = (v.byteOffset & 3) === 0 && ((level.childMask | Internal.valueMask | level.maskBytes) & 3) === 0 ? new Uint32Array(v.buffer, v.byteOffset, v.byteLength >>> 2) : null;
  for (let n = 0; n < nodes.count; n++) {
    const node = nodes.at(n);
    if (words !== null && (node & 3) === 0) {
      // u32 mask words; in a breadth-first grid a child at the offset the next node lies at is taken without a BigInt
      const childAt = (node + level.childMask) >>> 2;
      const valueAt = (node + Internal.valueMask) >>> 2;
      for (let w = 0; w < level.maskBytes >>> 2; w++) {
        let childBits = words[childAt + w] as number;
        active += popcount32((words[valueAt + w] as number) & ~childBits);
        while (childBits !== 0) {
          const low = childBits & -childBits;
          const entry = 32 * w + 31 - Math.clz32(low);
          childBits = (childBits ^ low) >>> 0;
          const at = node + level.table + level.tableStride * entry;
          if (breadthFirst && order.taken < childNodes.count) {
            const target = node + v.getUint32(at, true) + v.getInt32(at + 4, true) * 4294967296;
            if (target === childNodes.at(order.taken)) {
              order.taken++;
              continue;
            }
          }
          const problem = order.take(BigInt(node) + v.getBigInt64(at, true));
          if (problem !== null) return new GridFault(`${name}[${n}].table[${entry}]`, `child offset ${problem}`);
        }
      }
      continue;
    }
    for (let byte = 0; byte < level.maskBytes; byte++) {
      const childBits = v.getUint8(node + level.childMask + byte);
      const valueBits = v.getUint8(node + Internal.valueMask + byte);
      active += popcount8(valueBits & ~childBits);
      if (childBits === 0) continue;
      for (let bit = 0; bit < 8; bit++) {
        if ((childBits & (1 << bit)) === 0) continue;
        const entry = byte * 8 + bit;
        const problem = order.take(BigInt(node) + v.getBigInt64(node + level.table + level.tableStride * entry, true));
        if (problem !== null) return new GridFault(`${name}[${n}].table[${entry}]`, `child offset ${problem}`);
      }
    }
  }
  return { children: order.taken, active };
}

/** Active voxels of all leaves, or the fault; for index grids, checks each leaf's value offset. */
function checkLeaves(v: DataView, bytes: Uint8Array, layout: ValueLayout, leaves: NodeSpans, valueCount: bigint): number | GridFault {
  let voxels = 0;
  const index = layout.leafKind === LeafKind.Index;
  const span512 = layout.gridType !== GridType.OnIndex;
  // the mask as u32 words when the leaves are 4-byte aligned in memory (always, for a grid at a 32-byte boundary)
  const words = (bytes.byteOffset & 3) === 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2) : null;
  const count = Number(valueCount); // exact below 2^53; a larger count takes the BigInt check below
  const exact = valueCount <= BigInt(Number.MAX_SAFE_INTEGER);
  for (let n = 0; n < leaves.count; n++) {
    const leaf = leaves.at(n);
    let inLeaf = 0;
    const mask = leaf + Leaf.valueMask;
    if (words !== null && (mask & 3) === 0) {
      for (let w = mask >>> 2, end = w + 16; w < end; w++) {
        const bits = words[w] as number;
        if (bits !== 0) inLeaf += popcount32(bits);
      }
    } else {
      for (let byte = 0; byte < 64; byte++) inLeaf += popcount8(bytes[mask + byte] as number);
    }
    if (index && inLeaf > 0) {
      const span = span512 ? 512 : inLeaf;
      const high = v.getUint32(leaf + layout.leafValues + 4, true);
      if (exact && high < 0x200000) {
        const offset = v.getUint32(leaf + layout.leafValues, true) + high * 4294967296;
        if (offset < 1 || offset + span > count) {
          return new GridFault(`leaf[${n}].offset`, `${offset} with ${span} values runs past the ${valueCount} values the grid indexes (data1)`);
        }
      } else {
        const offset = v.getBigUint64(leaf + layout.leafValues, true);
        if (offset < 1n || offset + BigInt(span) > valueCount) {
          return new GridFault(`leaf[${n}].offset`, `${offset} with ${span} values runs past the ${valueCount} values the grid indexes (data1)`);
        }
      }
    }
    voxels += inLeaf;
  }
  return voxels;
}
