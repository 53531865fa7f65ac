/**
 * IndexToGrid on the host (issue 24 item 2): an Index or OnIndex grid and one of its channels become a grid of the
 * channel's value type with the same nodes, each value taken from the channel at the index the source stores there,
 * as NanoVDB's `tools::cuda::IndexToGrid` converts. Spec: NANOVDB-FORMAT.md (node layouts); NanoVDB's IndexToGrid.
 */
import { ErrorCode, HsError, err, type Backend, type Result } from '@hs/streams';
import type { ResourceBuffer } from '../../resource-buffer.js';
import { isResource, type SyncResource } from '../../resource.js';
import { GridHandle, type GridStorage } from '../grid/grid-handle.js';
import { computeChecksum, writeChecksum, type ChecksumMode } from '../grid/grid-checksum.js';
import {
  BlindDataClass,
  GRID_CLASS_END,
  GRID_DATA_SIZE,
  Grid,
  GridClass,
  GridFlags,
  GridType,
  Internal,
  LeafKind,
  Leaf,
  ROOT_OFFSET,
  Root,
  Tile,
  Tree,
  gridClassFitsType,
  valueLayoutOf,
  type InternalLevel,
  type ValueLayout,
} from '../grid/grid-layout.js';
import { writeGridStatistics } from '../grid/grid-statistics.js';
import { blindDataBytes, writeBlindData, type BlindItem } from './blind-data-writer.js';
import { allocateHostGrid } from './host-grid-buffer.js';
import { gridChannel, indexGridOf, type ChannelType } from './grid-channels.js';

/** Grid types `indexToGrid` writes: the channel types that have a grid layout with plain values. */
export type IndexToGridType = Exclude<ChannelType, GridType.Vec3u8 | GridType.Vec3u16>;

/** Options of `indexToGrid`. */
export interface IndexToGridOptions {
  /** Which grid of the handle (default 0). */
  readonly grid?: number;
  /** The value type written; default the channel's type, which it must equal (the values are copied, not converted). */
  readonly gridType?: IndexToGridType;
  /** Grid class; default the source's when it fits the type, else Unknown (an index grid's IndexGrid class fits no value type). */
  readonly gridClass?: GridClass;
  /** Store NanoVDB's statistics in every node (as `voxelsToGrid({ statistics: true })`); default false. */
  readonly statistics?: boolean;
  /** Checksum: `full` (default), `partial` or `disabled`. */
  readonly checksum?: ChecksumMode;
}

const VALUE_TYPES: readonly number[] = [
  GridType.Float, GridType.Double, GridType.Int16, GridType.Int32, GridType.Int64, GridType.UInt32, GridType.UInt8,
  GridType.Vec3f, GridType.Vec3d, GridType.Vec4f, GridType.Vec4d, GridType.RGBA8,
];

/**
 * Converts an Index or OnIndex grid and one of its sidecar channels (by name or record position; see `gridChannel`)
 * into a grid of the channel's value type with the same topology: the same root tiles, nodes, masks, bounding boxes,
 * node flags, map, name and voxel count, breadth-first; every root, tile, table and leaf value is the channel value at
 * the index the source holds there (inactive OnIndex voxels and tiles hold index 0, so they read the channel's slot 0,
 * the background), and the root's background is the value at the source's background index (0), as NanoVDB's
 * IndexToGrid does. Child tiles keep an unused value field of 0 (NanoVDB writes the background there; no reader looks).
 * The source's blind data are not carried over, except a long grid name (GridName record). Statistics with
 * `statistics: true` (the code of `voxelsToGrid`); otherwise none (the flags cleared). The grid's class is kept when it
 * fits the value type, else Unknown. The result equals, byte for byte, `voxelsToGrid` of the same voxels and values
 * with the channel's background (the test checks this).
 *
 * One allocation through `resource` (host-accessible): the new grid. Errors: InvalidArgument for a grid that is not
 * Index or OnIndex, a channel whose type is not an `IndexToGridType` or differs from `gridType`, a channel whose value
 * count is not the grid's (naming both), a class that does not fit, or a stored index past the channel (naming the
 * node); NotFound for an unknown channel; NotSupported for a grid in device memory or a resource the host cannot read;
 * the resource's `OutOfMemory`. Nothing is left allocated on failure.
 * @throws HsError InvalidArgument when `resource` is not a resource or `handle` not a GridHandle.
 * @example
 * ```ts
 * import { GridType, HostResource, attachChannels, channelValues, indexToGrid, pointsToGrid } from '@hs/nanovdb-mr';
 * import { HostBackend, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const resource = new HostResource(backend);
 * const coords = new Int32Array([1, 2, 3, 40, 0, 0]);
 * const onIndex = unwrap(pointsToGrid(backend, resource, { space: 'index', coords }, { gridType: GridType.OnIndex }));
 * // a density per voxel as the sidecar channel 'density', laid out in the grid's index order
 * const values = unwrap(channelValues(onIndex, { coords, values: [0.25, 0.75] }, GridType.Float));
 * const withDensity = unwrap(attachChannels(backend, resource, onIndex, [{ name: 'density', type: GridType.Float, values }]));
 * const density = unwrap(indexToGrid(backend, resource, withDensity, 'density', { statistics: true }));
 * console.log(`${GridType[density.grid()?.gridType ?? -1]} grid: density at (40,0,0) = ${unwrap(density.accessor()).getValue(40, 0, 0)}`);
 * for (const g of [onIndex, withDensity, density]) g.dispose();
 * ```
 */
export function indexToGrid(
  backend: Backend,
  resource: SyncResource,
  handle: GridHandle<GridStorage>,
  channel: string | number,
  options: IndexToGridOptions = {},
): Result<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>> {
  const who = 'indexToGrid';
  if (!isResource(resource)) throw new HsError(ErrorCode.InvalidArgument, `${who}: resource must be a resource (allocate and deallocate)`);
  const n = options.grid ?? 0;
  const found = indexGridOf(who, handle, n);
  if (!found.ok) return found;
  const metadata = found.value;
  const record = gridChannel(handle, channel, n);
  if (!record.ok) return record;
  const ch = record.value;
  const gridType = options.gridType ?? ch.dataType;
  const layout = VALUE_TYPES.includes(gridType) ? valueLayoutOf(gridType) : undefined;
  if (layout === undefined || layout.leafKind !== LeafKind.Values) {
    return err(ErrorCode.InvalidArgument, `${who}: gridType ${GridType[gridType] ?? String(gridType)} is not one it writes (Float, Double, Int16, Int32, Int64, UInt32, UInt8, Vec3f, Vec3d, Vec4f, Vec4d, RGBA8)`);
  }
  if (ch.dataType !== gridType || ch.valueSize !== layout.valueSize) {
    return err(ErrorCode.InvalidArgument, `${who}: channel '${ch.name}' holds ${GridType[ch.dataType] ?? String(ch.dataType)} values of ${ch.valueSize} bytes; a ${GridType[gridType]} grid takes ${GridType[gridType]} values of ${layout.valueSize} bytes`);
  }
  if (ch.valueCount !== metadata.valueCount) {
    return err(ErrorCode.InvalidArgument, `${who}: channel '${ch.name}' holds ${ch.valueCount} values; grid ${n} indexes ${metadata.valueCount} (background slot 0 included)`);
  }
  const gridClass = options.gridClass ?? (gridClassFitsType(metadata.gridClass, gridType) ? metadata.gridClass : GridClass.Unknown);
  if (!Number.isInteger(gridClass) || gridClass < 0 || gridClass >= GRID_CLASS_END || !gridClassFitsType(gridClass, gridType)) {
    return err(ErrorCode.InvalidArgument, `${who}: gridClass ${String(gridClass)} does not fit grid type ${GridType[gridType]}`);
  }
  const checksum = options.checksum ?? 'full';
  if (checksum !== 'full' && checksum !== 'partial' && checksum !== 'disabled') return err(ErrorCode.InvalidArgument, `${who}: checksum must be 'full', 'partial' or 'disabled'`);
  const source = handle.hostBytes();
  if (!source.ok) return err(ErrorCode.NotSupported, `${who}: the grid is in ${handle.memoryKind} memory; copyTo the host first`, source.error);
  const src = source.value.subarray(metadata.byteOffset, metadata.byteOffset + metadata.gridSize);
  const sv = new DataView(src.buffer, src.byteOffset, src.byteLength);
  const S = valueLayoutOf(metadata.gridType) as ValueLayout;

  const [leaves, lowers, uppers] = metadata.nodeCount;
  const tiles = sv.getUint32(ROOT_OFFSET + Root.tableSize, true);
  const srcStart = (level: number): number => GRID_DATA_SIZE + Number(sv.getBigInt64(GRID_DATA_SIZE + Tree.nodeOffset + 8 * level, true));
  const srcUpper = uppers > 0 ? srcStart(2) : 0;
  const srcLower = lowers > 0 ? srcStart(1) : 0;
  const srcLeaf = leaves > 0 ? srcStart(0) : 0;
  const upperStart = ROOT_OFFSET + layout.rootDataSize + tiles * layout.tileSize;
  const lowerStart = upperStart + uppers * layout.upper.size;
  const leafStart = lowerStart + lowers * layout.lower.size;
  const nodesEnd = leafStart + leaves * layout.leafSize;
  const longName = (metadata.flags & GridFlags.HasLongGridName) !== 0 ? handle.blindMetadata(n).find((r) => r.dataClass === BlindDataClass.GridName) : undefined;
  const blind: BlindItem[] =
    longName === undefined
      ? []
      : [{ ...longName, write: (v, at) => new Uint8Array(v.buffer, v.byteOffset + at, longName.valueCount * longName.valueSize).set(src.subarray(longName.dataOffset, longName.dataOffset + longName.valueCount * longName.valueSize)) }];
  const gridSize = nodesEnd + blindDataBytes(blind);

  const values = src.subarray(ch.dataOffset, ch.dataOffset + ch.valueCount * ch.valueSize);
  const size = layout.valueSize;
  let bad: string | null = null;
  const made = allocateHostGrid(who, backend, resource, gridSize);
  if (!made.ok) return made;
  const { buffer, bytes } = made.value;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  /** Writes the channel value at the u64 index stored at `from` of the source to `to`. */
  const put = (to: number, from: number, where: string): void => {
    const index = sv.getBigUint64(from, true);
    if (index >= BigInt(ch.valueCount)) {
      bad ??= `${where} holds index ${index}, past the ${ch.valueCount} values of channel '${ch.name}'`;
      return;
    }
    const at = Number(index) * size;
    bytes.set(values.subarray(at, at + size), to);
  };
  const putIndex = (to: number, index: number): void => {
    bytes.set(values.subarray(index * size, index * size + size), to);
  };

  // GridData: the source's, with the new type, class, size and flags; TreeData: counts as they are, new offsets
  bytes.set(src.subarray(0, ROOT_OFFSET));
  dv.setBigUint64(Grid.checksum, 0n, true);
  dv.setBigUint64(Grid.gridSize, BigInt(gridSize), true);
  dv.setUint32(Grid.gridIndex, 0, true);
  dv.setUint32(Grid.gridCount, 1, true);
  dv.setUint32(Grid.gridType, gridType, true);
  dv.setUint32(Grid.gridClass, gridClass, true);
  dv.setUint32(Grid.flags, metadata.flags & ~(GridFlags.HasMinMax | GridFlags.HasAverage | GridFlags.HasStdDeviation) | GridFlags.IsBreadthFirst, true);
  dv.setBigInt64(Grid.blindMetadataOffset, BigInt(nodesEnd), true);
  dv.setUint32(Grid.blindMetadataCount, 0, true);
  dv.setBigUint64(Grid.data1, 0n, true);
  const rel = (start: number, count: number): bigint => (count === 0 ? 0n : BigInt(start - GRID_DATA_SIZE));
  dv.setBigInt64(GRID_DATA_SIZE + Tree.nodeOffset, rel(leafStart, leaves), true);
  dv.setBigInt64(GRID_DATA_SIZE + Tree.nodeOffset + 8, rel(lowerStart, lowers), true);
  dv.setBigInt64(GRID_DATA_SIZE + Tree.nodeOffset + 16, rel(upperStart, uppers), true);

  // Root: bbox and table size, the background from the source's background index, then the tiles
  bytes.set(src.subarray(ROOT_OFFSET + Root.bbox, ROOT_OFFSET + Root.tableSize + 4), ROOT_OFFSET + Root.bbox);
  put(ROOT_OFFSET + layout.rootBackground, ROOT_OFFSET + S.rootBackground, 'root.background');
  for (let t = 0; t < tiles; t++) {
    const from = ROOT_OFFSET + S.rootDataSize + t * S.tileSize;
    const to = ROOT_OFFSET + layout.rootDataSize + t * layout.tileSize;
    bytes.set(src.subarray(from + Tile.key, from + Tile.key + 8), to + Tile.key);
    const child = Number(sv.getBigInt64(from + Tile.child, true));
    if (child !== 0) {
      const k = (ROOT_OFFSET + child - srcUpper) / S.upper.size;
      if (!(Number.isInteger(k) && k >= 0 && k < uppers)) bad ??= `root tile ${t}: child offset ${child} is not one of the ${uppers} upper nodes`;
      dv.setBigInt64(to + Tile.child, BigInt(upperStart + k * layout.upper.size - ROOT_OFFSET), true);
    } else {
      dv.setUint32(to + 16, sv.getUint32(from + 16, true), true); // state
      put(to + layout.tileValue, from + S.tileValue, `root tile ${t}`);
    }
  }

  // Internal nodes: bbox, flags and masks as they are; child offsets re-based; every other entry a channel value
  const internal = (count: number, srcFirst: number, dstFirst: number, from: InternalLevel, to: InternalLevel, srcChild: number, srcChildSize: number, dstChild: number, dstChildSize: number, childCount: number, label: string): void => {
    for (let i = 0; i < count; i++) {
      const s = srcFirst + i * from.size;
      const d = dstFirst + i * to.size;
      bytes.set(src.subarray(s + Internal.bbox, s + Internal.valueMask + 2 * from.maskBytes), d + Internal.bbox);
      for (let e = 0; e < 1 << (3 * from.log2Dim); e++) {
        const isChild = ((src[s + from.childMask + (e >> 3)] as number) >> (e & 7)) & 1;
        if (isChild === 1) {
          const k = (s + Number(sv.getBigInt64(s + from.table + 8 * e, true)) - srcChild) / srcChildSize;
          if (!(Number.isInteger(k) && k >= 0 && k < childCount)) bad ??= `${label}[${i}].table[${e}]: the child offset is not one of the ${childCount} nodes below`;
          putIndex(d + to.table + to.tableStride * e, 0); // as hs's builders: the background under the offset (bytes 8+ of a wide entry keep it)
          dv.setBigInt64(d + to.table + to.tableStride * e, BigInt(dstChild + k * dstChildSize - d), true);
        } else put(d + to.table + to.tableStride * e, s + from.table + from.tableStride * e, `${label}[${i}].table[${e}]`);
      }
    }
  };
  internal(uppers, srcUpper, upperStart, S.upper, layout.upper, srcLower, S.lower.size, lowerStart, layout.lower.size, lowers, 'upper');
  internal(lowers, srcLower, lowerStart, S.lower, layout.lower, srcLeaf, S.leafSize, leafStart, layout.leafSize, leaves, 'lower');

  // Leaves: bbox, flags and mask as they are; voxel n reads the channel at the index NanoVDB's getValue gives
  const onIndex = metadata.gridType === GridType.OnIndex;
  for (let i = 0; i < leaves; i++) {
    const s = srcLeaf + i * S.leafSize;
    const d = leafStart + i * layout.leafSize;
    bytes.set(src.subarray(s, s + Leaf.valueMask + 64), d);
    bytes[d + Leaf.flags] = (src[s + Leaf.flags] as number) & ~0xf0; // bit 4: index statistics, 5-7: FpN width; neither applies
    const offset = Number(sv.getBigUint64(s + S.leafValues, true));
    const last = offset + (onIndex ? popcountMask(src, s + Leaf.valueMask) : 512) - 1;
    if (last >= ch.valueCount) {
      bad ??= `leaf[${i}] indexes values up to ${last}, past the ${ch.valueCount} values of channel '${ch.name}'`;
      continue;
    }
    let active = 0;
    for (let m = 0; m < 512; m++) {
      const on = ((src[s + Leaf.valueMask + (m >> 3)] as number) >> (m & 7)) & 1;
      const index = onIndex ? (on === 1 ? offset + active++ : 0) : offset + m;
      putIndex(d + layout.leafValues + m * size, index);
    }
  }
  if (bad !== null) {
    buffer.dispose();
    return err(ErrorCode.InvalidArgument, `${who}: grid ${n}: ${bad as string}`);
  }
  writeBlindData(bytes, nodesEnd, blind);
  if (options.statistics === true) writeGridStatistics(bytes.subarray(0, gridSize), gridType);
  writeChecksum(bytes, computeChecksum(bytes, gridSize, checksum));
  const result = GridHandle.fromHostBytes(backend, buffer, { checksum: false });
  if (!result.ok) buffer.dispose();
  return result;
}

function popcountMask(bytes: Uint8Array, at: number): number {
  let count = 0;
  for (let b = 0; b < 64; b++) {
    let x = bytes[at + b] as number;
    while (x !== 0) {
      x &= x - 1;
      count++;
    }
  }
  return count;
}
