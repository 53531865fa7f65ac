import { join } from 'node:path';
import { type CompileOptions, Graph } from '@hs/compiler';
import type { PointCloud } from '@hs/example-point-cloud-input';
import { DeviceResource, HostResource, PinnedResource, StatisticsResource, currentDeviceResource, type NvdbCodec, type SyncResource } from '@hs/nanovdb-mr';
import type { PoolResourceBindings } from '@hs/runtime';
import { type Backend, Device, ErrorCode, MemoryKind, err, ok, unwrap, type Result } from '@hs/streams';
import { previewCamera, type PreviewCamera } from './grid-preview-kernel.js';
import { GridPreview } from './operators/grid-preview.js';
import { NvdbWriter } from './operators/nvdb-writer.js';
import { PointsToGridOperator } from './operators/points-to-grid-operator.js';
import { PreviewPngWriter } from './operators/preview-png-writer.js';
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
  /** The PointsToGrid operator of the chosen builder. */
  readonly builder: PointsToGridOperator | StreamPointsToGridOperator;
  readonly preview: GridPreview;
  readonly nvdbWriter: NvdbWriter;
  readonly pngWriter: PreviewPngWriter;
  readonly sweep: ScanSweep;
  readonly sizing: VolumeSizing;
  readonly camera: PreviewCamera;
  /** Scans the source emits (`scans * sweeps`, `RunMetrics.frames` of a complete run). */
  readonly frames: number;
  /** The statistics adaptor the builder allocates through, once the run made it (`null` before). */
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
 * Splits the cloud into scans, sizes the grid slots, the stream builder's capacities and the preview
 * camera from one host build of the whole cloud (`sizeVolume`), and creates the operators of the chosen
 * builder. Nothing is allocated on a device and no file is written here.
 * @returns the graph; InvalidArgument for an empty cloud, a grid above `maxGridBytes` (naming its size and
 *   suggesting a larger voxel size; nothing is built) or a cloud the builder rejects (a non-finite
 *   coordinate, or a voxel index outside the 32-bit range), naming the problem and where the point was
 *   read (`file:line` for XYZ files; see `sizeVolume`).
 * @throws HsError InvalidArgument for options outside their documented domains (see the operators).
 */
export function buildScanToVolumeGraph(options: ScanToVolumeOptions): Result<ScanToVolumeGraph> {
  const { cloud, voxelSize, outDir } = options;
  if (cloud.positions.length === 0) return err(ErrorCode.InvalidArgument, `${cloud.source} holds no points`);
  const sizing = sizeVolume(cloud, voxelSize, 'scan-to-volume', options.maxGridBytes);
  if (!sizing.ok) return sizing;
  const sweep = splitIntoScans(cloud.positions, options.scans);
  const camera = previewCamera(sizing.value.indexBox);
  const builderKind = options.builder ?? 'stream';
  const upstream =
    options.upstream ?? (builderKind === 'stream' ? (backend: Backend, device: Device) => new DeviceResource(backend, device) : (backend: Backend) => new HostResource(backend));
  let statistics: StatisticsResource<SyncResource> | null = null;
  const resource = (backend: Backend, device: Device): SyncResource => (statistics = new StatisticsResource(upstream(backend, device)));
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
  const maxPoints = cloud.positions.length / 3;
  const gridName = 'scan-to-volume';
  const builder = graph.add(
    builderKind === 'stream'
      ? new StreamPointsToGridOperator('points-to-grid', {
          resource,
          voxelSize,
          maxPoints,
          nodes: sizing.value.nodes,
          maxGridBytes: sizing.value.gridBytes,
          frames: source.frames,
          gridName,
        })
      : new PointsToGridOperator('points-to-grid', {
          resource: (backend) => resource(backend, Device.cpu()),
          voxelSize,
          maxPoints,
          maxScanPoints: sweep.maxScanPoints,
          maxGridBytes: sizing.value.gridBytes,
          gridName,
        }),
  );
  const nvdbWriter = graph.add(new NvdbWriter('nvdb-writer', join(outDir, VOLUME_FILE), options.codec ?? 'zip'));
  const preview = graph.add(new GridPreview('grid-preview', camera, source.frames));
  const pngWriter = graph.add(new PreviewPngWriter('png-writer', join(outDir, PREVIEW_FILE), camera.width * camera.height));
  graph.addFlow(source.scans, builder.scans);
  graph.addFlow(builder.grid, nvdbWriter.grid);
  graph.addFlow(builder.grid, preview.grid);
  graph.addFlow(preview.preview, pngWriter.preview);

  return ok({
    graph,
    compileOptions: {
      deployment: {
        bindTensorOutputDevice: { [preview.preview.key]: Device.cuda(0) },
        ...(builder instanceof StreamPointsToGridOperator ? { bindOperatorDevice: { [builder.name]: Device.cuda(0) } } : {}),
      },
    },
    source,
    builder,
    preview,
    nvdbWriter,
    pngWriter,
    sweep,
    sizing: sizing.value,
    camera,
    frames: source.frames,
    statistics: () => statistics,
    poolResources,
    poolStatistics: () => poolStatistics,
  });
}
