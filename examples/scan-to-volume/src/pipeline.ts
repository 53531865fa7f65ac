import { join } from 'node:path';
import { type CompileOptions, Graph } from '@hs/compiler';
import type { PointCloud } from '@hs/example-point-cloud-input';
import {
  DeviceResource,
  GridType,
  HostResource,
  PinnedResource,
  StatisticsResource,
  currentDeviceResource,
  gridByteSize,
  planRootTilePartition,
  type NvdbCodec,
  type RootTilePartition,
  type SyncResource,
} from '@hs/nanovdb-mr';
import type { PoolResourceBindings } from '@hs/runtime';
import { type Backend, Device, ErrorCode, HsError, MemoryKind, err, ok, unwrap, type Result } from '@hs/streams';
import { previewCamera, type PreviewCamera } from './grid-preview-kernel.js';
import { GridMerge } from './operators/grid-merge.js';
import { GridPreview } from './operators/grid-preview.js';
import { NvdbWriter } from './operators/nvdb-writer.js';
import { PointsToGridOperator } from './operators/points-to-grid-operator.js';
import { PreviewPngWriter } from './operators/preview-png-writer.js';
import { ScanPartition } from './operators/scan-partition.js';
import { ScanSource } from './operators/scan-source.js';
import { StreamPointsToGridOperator } from './operators/stream-points-to-grid-operator.js';
import { splitIntoScans, type ScanSweep } from './scan-split.js';
import { sizeVolume, type VolumeSizing } from './volume-sizing.js';

/** File name of the volume inside the output folder. */
export const VOLUME_FILE = 'volume.nvdb';
/** File name of the latest preview inside the output folder. */
export const PREVIEW_FILE = 'preview.png';

/** Options of `buildScanToVolumeGraph`. */
export interface ScanToVolumeOptions {
  /** The cloud to stream, world units. */
  readonly cloud: PointCloud;
  /** World units per voxel, a positive finite number. */
  readonly voxelSize: number;
  /** Scans per sweep (azimuth sectors, see `splitIntoScans`). */
  readonly scans: number;
  /** Sweeps to stream (the grid stops growing after the first; later sweeps re-deliver the same points). */
  readonly sweeps: number;
  /** Nominal scan rate in Hz (an integer, see `ScanSource`). */
  readonly rateHz: number;
  /** Output folder for `VOLUME_FILE` and `PREVIEW_FILE`; it must exist when the run starts. */
  readonly outDir: string;
  /** `.nvdb` codec; default `zip`. */
  readonly codec?: NvdbCodec;
  /**
   * The most bytes the volume's grid may take (`--max-grid-bytes`), checked from the points' node counts
   * before any grid is built; default `DEFAULT_MAX_GRID_BYTES` (256 MiB).
   */
  readonly maxGridBytes?: number;
  /**
   * Which PointsToGrid builder the graph uses (default `stream`): `stream` builds every grid in stream
   * order on the operator's stream with a capacity-bounded build over all points so far
   * (`StreamPointsToGridOperator`: CUDA kernels on the CUDA backend, their host implementations on the
   * host backend); `host` merges the previous grid's voxels with each scan's on the host
   * (`PointsToGridOperator`). Both emit the same grid bytes.
   */
  readonly builder?: GridBuilderKind;
  /**
   * The upstream resource the PointsToGrid operator allocates from, made from the session's backend and
   * the operator's device (`Device.cpu()` for the host builder) at the first scan; default
   * `new DeviceResource(backend, device)` for the stream builder (it needs an async resource) and
   * `new HostResource(backend)` for the host builder (it needs host-accessible memory). It is always
   * wrapped in a `StatisticsResource`.
   */
  readonly upstream?: (backend: Backend, device: Device) => SyncResource;
  /**
   * The upstream resource of the graph's pools of each memory kind (the scan and grid slots are
   * pinnedHost, the preview slots cudaDevice on `Device.cuda(0)`), made from the session's backend when
   * the session is created (`ScanToVolumeGraph.poolResources`); default `new PinnedResource(backend)` and
   * the current device resource of `Device.cuda(0)` (`currentDeviceResource`). The cudaDevice one must be
   * stream-ordered: on a device without memory pools pass `new AsyncFromSync(backend, new
   * MallocResource(backend, Device.cuda(0)))`. Each is wrapped in a `StatisticsResource`.
   */
  readonly poolUpstream?: (backend: Backend, memoryKind: FlagshipPoolMemoryKind) => SyncResource;
  /**
   * The CUDA devices the volume is built on (`--devices`; default `[Device.cuda(0)]`, today's one-builder
   * graph). With two or more, the build is split by space: the whole cloud's root tiles are cut, in build
   * order, into one contiguous run per entry with about equal point counts (`planRootTilePartition`), a
   * `ScanPartition` hands each scan's points to the part owning their tile, one builder per part runs bound
   * to its device (the stream builder; the host builder splits the same way on the host) and a `GridMerge`
   * merges the parts' grids of every frame: byte for byte the one-device grid of that frame. A device may
   * repeat (`[Device.cuda(0), Device.cuda(0)]`: two builders on two streams of one GPU). The preview stays
   * on `Device.cuda(0)`. A device the backend lacks is refused when the session is created.
   */
  readonly devices?: readonly Device[];
}

/** Most entries of `ScanToVolumeOptions.devices` (`--devices`). */
export const MAX_SPLIT_PARTS = 16;

/** One part of a build split by space (`ScanToVolumeOptions.devices` with two or more devices). */
export interface ScanToVolumePart {
  /** The device its builder is bound to (the stream builder; the host builder runs on the host). */
  readonly device: Device;
  /** Its PointsToGrid operator, `points-to-grid-<i>`. */
  readonly builder: PointsToGridOperator | StreamPointsToGridOperator;
  /** The sizing of the whole cloud's points in its root tiles (an empty part: the empty grid's). */
  readonly sizing: VolumeSizing;
  /** Points of the whole cloud in its root tiles. */
  readonly points: number;
  /** Root tiles of the whole cloud it owns. */
  readonly tiles: number;
  /** The statistics adaptor its builder allocates through, once the run made it (`null` before). */
  readonly statistics: () => StatisticsResource<SyncResource> | null;
}

/** The operators and figures of a build split by space. */
export interface ScanToVolumeSplit {
  readonly partition: RootTilePartition;
  readonly scanPartition: ScanPartition;
  readonly merge: GridMerge;
  readonly parts: readonly ScanToVolumePart[];
}

/** The memory kinds of the flagship's pools: the scan and grid slots (pinnedHost) and the preview slots (cudaDevice). */
export type FlagshipPoolMemoryKind = MemoryKind.PinnedHost | MemoryKind.CudaDevice;

const FLAGSHIP_POOL_MEMORY_KINDS: readonly FlagshipPoolMemoryKind[] = [MemoryKind.PinnedHost, MemoryKind.CudaDevice];

/** The PointsToGrid builders the flagship offers (see `ScanToVolumeOptions.builder`). */
export type GridBuilderKind = 'stream' | 'host';

/** The flagship graph, uncompiled, with the operators and figures callers read after a run. */
export interface ScanToVolumeGraph {
  readonly graph: Graph;
  /** Binds the preview output (and the stream builder) to `Device.cuda(0)` (emulated on the host backend). */
  readonly compileOptions: CompileOptions;
  readonly source: ScanSource;
  /** The PointsToGrid operator of the chosen builder (a split build: part 0's, see `split`). */
  readonly builder: PointsToGridOperator | StreamPointsToGridOperator;
  /** The devices the volume is built on (`ScanToVolumeOptions.devices`). */
  readonly devices: readonly Device[];
  /** The split by space of a build on two or more devices; `null` for one device (today's graph). */
  readonly split: ScanToVolumeSplit | null;
  readonly preview: GridPreview;
  readonly nvdbWriter: NvdbWriter;
  readonly pngWriter: PreviewPngWriter;
  readonly sweep: ScanSweep;
  readonly sizing: VolumeSizing;
  readonly camera: PreviewCamera;
  /** Scans the source emits (`scans * sweeps`, `RunMetrics.frames` of a complete run). */
  readonly frames: number;
  /** The statistics adaptor the builder (a split build: part 0's) allocates through, once the run made it (`null` before). */
  readonly statistics: () => StatisticsResource<SyncResource> | null;
  /**
   * `RunSessionOptions.resources` for this graph: every pool's backing through a `StatisticsResource` per
   * memory kind over `ScanToVolumeOptions.poolUpstream`, made fresh for each session.
   * @throws HsError InvalidArgument when the default cudaDevice resource cannot be had on the backend (no
   *   `Device.cuda(0)`, or a current device resource of another backend).
   */
  readonly poolResources: (backend: Backend) => PoolResourceBindings;
  /** The pool statistics adaptors of the last session made with `poolResources`, by memory kind (empty before). */
  readonly poolStatistics: () => ReadonlyMap<FlagshipPoolMemoryKind, StatisticsResource<SyncResource>>;
}

/**
 * Builds the flagship graph:
 *
 * ```text
 * scan-source ──► points-to-grid ──┬──► nvdb-writer                   (volume.nvdb, every scan)
 * f64 [n,3]       u8 [gridBytes]    └──► grid-preview ──► png-writer   (preview.png, 1 scan in 4)
 * pinnedHost      pinnedHost             u8 [H,W] cudaDevice
 * Hz nominal      follows 1/1            follows 1/4
 * ```
 *
 * With two or more `devices` the build is split by space (see `ScanToVolumeOptions.devices`):
 *
 * ```text
 * scan-source ──► scan-partition ──► points-to-grid-0 (cuda:d0) ──► grid-merge ──┬──► nvdb-writer
 *                                └─► points-to-grid-1 (cuda:d1) ──┘  pinnedHost   └──► grid-preview ──► png-writer
 * ```
 *
 * Splits the cloud into scans, sizes the grid slots, the stream builder's capacities and the preview
 * camera from one host build of the whole cloud (`sizeVolume`), and creates the operators of the chosen
 * builder. Nothing is allocated on a device and no file is written here.
 * @returns the graph; InvalidArgument for an empty cloud, a grid above `maxGridBytes` (naming its size and
 *   suggesting a larger voxel size; nothing is built) or a cloud the builder rejects (a non-finite
 *   coordinate, or a voxel index outside the 32-bit range), naming the problem and where the point was
 *   read (`file:line` for XYZ files; see `sizeVolume`).
 * @throws HsError InvalidArgument for options outside their documented domains (see the operators), `devices`
 *   included (an empty list, more than `MAX_SPLIT_PARTS` entries, or an entry that is not a CUDA device).
 */
export function buildScanToVolumeGraph(options: ScanToVolumeOptions): Result<ScanToVolumeGraph> {
  const { cloud, voxelSize, outDir } = options;
  const devices = checkDevices(options.devices);
  if (cloud.positions.length === 0) return err(ErrorCode.InvalidArgument, `${cloud.source} holds no points`);
  const sizing = sizeVolume(cloud, voxelSize, 'scan-to-volume', options.maxGridBytes);
  if (!sizing.ok) return sizing;
  const sweep = splitIntoScans(cloud.positions, options.scans);
  const camera = previewCamera(sizing.value.indexBox);
  const builderKind = options.builder ?? 'stream';
  const upstream =
    options.upstream ?? (builderKind === 'stream' ? (backend: Backend, device: Device) => new DeviceResource(backend, device) : (backend: Backend) => new HostResource(backend));
  const poolUpstream =
    options.poolUpstream ??
    ((backend: Backend, kind: FlagshipPoolMemoryKind) => (kind === MemoryKind.PinnedHost ? new PinnedResource(backend) : unwrap(currentDeviceResource(backend, Device.cuda(0)))));
  let poolStatistics = new Map<FlagshipPoolMemoryKind, StatisticsResource<SyncResource>>();
  const poolResources = (backend: Backend): PoolResourceBindings => {
    poolStatistics = new Map(FLAGSHIP_POOL_MEMORY_KINDS.map((kind) => [kind, new StatisticsResource(poolUpstream(backend, kind))]));
    return { memoryKinds: Object.fromEntries(poolStatistics) };
  };

  const graph = new Graph('scan-to-volume');
  const source = graph.add(new ScanSource('scan-source', { sweep, sweeps: options.sweeps, rateHz: options.rateHz }));
  const gridName = 'scan-to-volume';
  /** One builder over `points` points (largest scan `maxScanPoints`) sized by `part`, with its own statistics adaptor. */
  const makeBuilder = (name: string, part: VolumeSizing, points: number, maxScanPoints: number) => {
    let statistics: StatisticsResource<SyncResource> | null = null;
    const resource = (backend: Backend, device: Device): SyncResource => (statistics = new StatisticsResource(upstream(backend, device)));
    const builder = graph.add(
      builderKind === 'stream'
        ? new StreamPointsToGridOperator(name, {
            resource,
            voxelSize,
            maxPoints: Math.max(1, points),
            nodes: part.nodes,
            maxGridBytes: Math.max(part.gridBytes, gridByteSize(GridType.OnIndex, part.nodes)),
            frames: source.frames,
            gridName,
          })
        : new PointsToGridOperator(name, {
            resource: (backend) => resource(backend, Device.cpu()),
            voxelSize,
            maxPoints: Math.max(1, points),
            maxScanPoints: Math.max(1, maxScanPoints),
            maxGridBytes: part.gridBytes,
            gridName,
          }),
    );
    return { builder, statistics: () => statistics };
  };
  const nvdbWriter = new NvdbWriter('nvdb-writer', join(outDir, VOLUME_FILE), options.codec ?? 'zip');
  const preview = new GridPreview('grid-preview', camera, source.frames);
  const pngWriter = new PreviewPngWriter('png-writer', join(outDir, PREVIEW_FILE), camera.width * camera.height);
  const bindOperatorDevice: Record<string, Device> = {};
  let builder: PointsToGridOperator | StreamPointsToGridOperator;
  let statistics: () => StatisticsResource<SyncResource> | null;
  let split: ScanToVolumeSplit | null = null;
  let grid: typeof source.scans;
  if (devices.length === 1) {
    const made = makeBuilder('points-to-grid', sizing.value, cloud.positions.length / 3, sweep.maxScanPoints);
    builder = made.builder;
    statistics = made.statistics;
    graph.addFlow(source.scans, builder.scans);
    if (builder instanceof StreamPointsToGridOperator) bindOperatorDevice[builder.name] = devices[0]!;
    grid = builder.grid;
  } else {
    const planned = splitBySpace(cloud, voxelSize, devices.length, sweep, options.maxGridBytes);
    if (!planned.ok) return planned;
    const { partition, partSizings, maxPartScanPoints } = planned.value;
    const scanPartition = graph.add(new ScanPartition('scan-partition', { partition, maxScanPoints: sweep.maxScanPoints, maxPartScanPoints }));
    const merge = graph.add(new GridMerge('grid-merge', { parts: devices.length, gridBytes: sizing.value.gridBytes }));
    graph.addFlow(source.scans, scanPartition.scans);
    const parts = devices.map((device, i): ScanToVolumePart => {
      const made = makeBuilder(`points-to-grid-${i}`, partSizings[i]!, partition.pointCounts[i]!, maxPartScanPoints[i]!);
      graph.addFlow(scanPartition.parts[i]!, made.builder.scans);
      graph.addFlow(made.builder.grid, merge.parts[i]!);
      if (made.builder instanceof StreamPointsToGridOperator) bindOperatorDevice[made.builder.name] = device;
      return { device, builder: made.builder, sizing: partSizings[i]!, points: partition.pointCounts[i]!, tiles: partition.tileCounts[i]!, statistics: made.statistics };
    });
    builder = parts[0]!.builder;
    statistics = parts[0]!.statistics;
    split = { partition, scanPartition, merge, parts };
    grid = merge.grid;
  }
  graph.add(nvdbWriter);
  graph.add(preview);
  graph.add(pngWriter);
  graph.addFlow(grid, nvdbWriter.grid);
  graph.addFlow(grid, preview.grid);
  graph.addFlow(preview.preview, pngWriter.preview);

  return ok({
    graph,
    compileOptions: {
      deployment: {
        bindTensorOutputDevice: { [preview.preview.key]: Device.cuda(0) },
        ...(Object.keys(bindOperatorDevice).length > 0 ? { bindOperatorDevice } : {}),
      },
    },
    source,
    builder,
    devices,
    split,
    preview,
    nvdbWriter,
    pngWriter,
    sweep,
    sizing: sizing.value,
    camera,
    frames: source.frames,
    statistics,
    poolResources,
    poolStatistics: () => poolStatistics,
  });
}

/** `ScanToVolumeOptions.devices` checked, or the default one device. */
function checkDevices(devices: readonly Device[] | undefined): readonly Device[] {
  if (devices === undefined) return [Device.cuda(0)];
  if (!Array.isArray(devices) || devices.length === 0 || devices.length > MAX_SPLIT_PARTS) {
    throw new HsError(ErrorCode.InvalidArgument, `scan-to-volume: devices must list 1 to ${MAX_SPLIT_PARTS} CUDA devices, got ${Array.isArray(devices) ? `${devices.length} entries` : String(devices)}`);
  }
  for (const device of devices) {
    if (!(device instanceof Device) || !device.isCuda) throw new HsError(ErrorCode.InvalidArgument, `scan-to-volume: devices must be CUDA devices (Device.cuda(n)), got ${String(device)}`);
  }
  return Object.freeze(devices.slice());
}

/** The split by space of the whole cloud: the partition, each part's sizing and its largest scan share. */
function splitBySpace(
  cloud: PointCloud,
  voxelSize: number,
  parts: number,
  sweep: ScanSweep,
  maxGridBytes: number | undefined,
): Result<{ partition: RootTilePartition; partSizings: VolumeSizing[]; maxPartScanPoints: number[] }> {
  const planned = planRootTilePartition(cloud.positions, parts, { voxelSize });
  if (!planned.ok) return planned;
  const partition = planned.value;
  const positions = partition.pointCounts.map((count) => new Float64Array(3 * count));
  const filled = new Array<number>(parts).fill(0);
  const all = cloud.positions;
  for (let i = 0; 3 * i < all.length; i++) {
    const p = partition.partOf(all[3 * i]!, all[3 * i + 1]!, all[3 * i + 2]!);
    positions[p]!.set(all.subarray(3 * i, 3 * i + 3), 3 * filled[p]!++);
  }
  const partSizings: VolumeSizing[] = [];
  for (let p = 0; p < parts; p++) {
    const sized = sizeVolume({ positions: positions[p]!, source: `${cloud.source} (part ${p} of the split by space)` }, voxelSize, 'scan-to-volume', maxGridBytes);
    if (!sized.ok) return sized;
    partSizings.push(sized.value);
  }
  const maxPartScanPoints = new Array<number>(parts).fill(0);
  const counts = new Array<number>(parts).fill(0);
  for (const scan of sweep.scans) {
    counts.fill(0);
    for (let i = 0; 3 * i < scan.length; i++) counts[partition.partOf(scan[3 * i]!, scan[3 * i + 1]!, scan[3 * i + 2]!)]! += 1;
    for (let p = 0; p < parts; p++) maxPartScanPoints[p] = Math.max(maxPartScanPoints[p]!, counts[p]!);
  }
  return ok({ partition, partSizings, maxPartScanPoints });
}
