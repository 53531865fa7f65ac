import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, type OutputPort, RateRatio } from '@hs/compiler';
import {
  BoundedPointsToGrid,
  ResourceBuffer,
  BufferView,
  GridType,
  isAsyncResource,
  type AsyncResource,
  type BoundedBuildReport,
  type PointsToGridCapacity,
  type SyncResource,
} from '@hs/nanovdb-mr';
import { type Backend, type Device, ErrorCode, HsError, MemoryKind, OK_VOID, err, ok, type MemoryRange, type Result, type Stream } from '@hs/streams';
import { DType } from '@hs/tensor';
import type { AccumulatedGridState } from './points-to-grid-operator.js';

/** Bytes of one world point (three float64). */
const POINT_BYTES = 24;
/** Alignment of the accumulated points and of the bounded build's region inside the one block. */
const BLOCK_ALIGNMENT = 256;

/** Options of `StreamPointsToGridOperator`. */
export interface StreamPointsToGridOperatorOptions {
  /**
   * Makes the resource of the one up-front block (accumulated points, grid, build workspace), once, from
   * the session's backend and the operator's stream device at the first scan. It must be an async
   * (stream-ordered) resource, e.g. `DeviceResource`; kept until `stop()`.
   */
  readonly resource: (backend: Backend, device: Device) => SyncResource;
  /** World units per voxel, a positive finite number. */
  readonly voxelSize: number;
  /** Points of one sweep (the whole cloud): the accumulation buffer's and the build's point capacity. */
  readonly maxPoints: number;
  /** Node capacities of the build: those of the whole cloud's grid (see `sizeVolume`). */
  readonly nodes: Omit<PointsToGridCapacity, 'points'>;
  /** Bytes of the largest grid the run produces (see `sizeVolume`); sizes the output slots. */
  readonly maxGridBytes: number;
  /** Scans the run delivers; the build report is read after the last one. */
  readonly frames: number;
  /** Grid name written into every grid. */
  readonly gridName: string;
}

/**
 * PointsToGrid as a stream-ordered operator (the `stream` builder): receives scans (pinnedHost float64
 * `[n, 3]`, world units) and emits, for every scan, the OnIndex NanoVDB grid of **all points received so
 * far** (pinnedHost uint8 `[gridCapacityBytes]`: the grid from offset 0, its header's `gridSize` says how
 * many bytes it holds, full checksum), byte for byte the grid the host builder (`PointsToGridOperator`)
 * emits for the same points. Nothing here waits on the host and nothing is allocated after the first scan:
 *
 * - at the first scan, ONE block is allocated in stream order from the injected resource: the
 *   accumulated points (24 bytes per point, `maxPoints` points) followed by a `BoundedPointsToGrid` over
 *   the rest (grid capacity from `nodes`, the build workspace for `maxPoints` points); its grid region
 *   is zeroed once, so the slot bytes past each grid are zeros;
 * - each scan's points are appended to the accumulated points by a stream-ordered copy, the bounded
 *   build is enqueued over all points so far, and the grid region is copied into the output slot, all on
 *   `ctx.cudaStream()`; the commit records readiness, so the GPU preview orders after it on its stream and
 *   the host-only `.nvdb` writer runs after the runtime's non-blocking readiness wait.
 *
 * On the CUDA backend the kernels run on the device (`DeviceResource` memory); on the host backend the
 * same launches run their host implementations. The scan source repeats one sweep, so points beyond
 * `maxPoints` are re-deliveries of points already held: they are not appended and the build runs over
 * the points held (the count is in `repeatedPoints`). After the last scan (`frames`), or in `stop()` when
 * the run ended before it, the 64-byte build report is read back asynchronously; `report` gives it after
 * the run, with any capacity overflow (the
 * capacities come from the whole cloud, so none is expected; a clamped grid would still be valid).
 *
 * Errors (the runtime prefixes them with the operator's name): NotSupported when the injected resource
 * is not an async one; the resource's (OutOfMemory) and the backend's; ResourceExhausted when the capacities' grid exceeds
 * `maxGridBytes` (a sizing bug). The block returns to the resource in `stop()`.
 * Spec: nanovdb-memory-resources (PointsToGrid through an injected resource), issue #4 item 7 (the
 * capacity-bounded, sync-free build); "Sized cold, borrowed hot".
 */
export class StreamPointsToGridOperator extends Operator {
  /** Input port `scans`: pinnedHost float64 rank 2. */
  scans!: InputPort;
  /** Output port `grid`: pinnedHost uint8 rank 1, one grid per scan (`follows(scans, 1/1)`). */
  grid!: OutputPort;
  private block: ResourceBuffer<AsyncResource, Uint8ArrayConstructor> | null = null;
  private build: BoundedPointsToGrid | null = null;
  private positions: BufferView<Float64ArrayConstructor> | null = null;
  private gridRegion: MemoryRange | null = null;
  private held = 0;
  private repeated = 0;
  private received = 0;
  private readonly shape = [0];
  /** The stream of the last build, where a run that ends early reads its report in `stop()`. */
  private lastStream: Stream | null = null;
  /** The report read in flight, as a Result (its rejection is caught at once, so it cannot go unhandled). */
  private pendingReport: Promise<Result<BoundedBuildReport>> | null = null;
  private lastReport: Result<BoundedBuildReport> | null = null;
  private state: AccumulatedGridState = { scans: 0, points: 0, voxelCount: 0, gridBytes: 0 };

  /** @throws HsError InvalidArgument for a non-function `resource` or a size or capacity that is not a positive integer. */
  constructor(
    name: string,
    private readonly options: StreamPointsToGridOperatorOptions,
  ) {
    super(name);
    if (typeof options.resource !== 'function') throw new HsError(ErrorCode.InvalidArgument, `${name}: resource must be a function (backend, device) => AsyncResource`);
    const sizes = [
      ['maxPoints', options.maxPoints],
      ['maxGridBytes', options.maxGridBytes],
      ['frames', options.frames],
      ['nodes.uppers', options.nodes?.uppers],
      ['nodes.lowers', options.nodes?.lowers],
      ['nodes.leaves', options.nodes?.leaves],
    ] as const;
    for (const [what, value] of sizes) {
      if (!Number.isSafeInteger(value) || (value as number) < 1) throw new HsError(ErrorCode.InvalidArgument, `${name}: ${what} must be a positive integer, got ${String(value)}`);
    }
  }

  /**
   * Scans and points received; after the run (the report read in `stop()`), voxels and bytes of the last
   * grid built, also when the run ended before its last scan (Ctrl-C). While running, `voxelCount` and
   * `gridBytes` are 0 (no report is read during the run).
   */
  get accumulated(): AccumulatedGridState {
    return this.state;
  }

  /** The build's capacities: `maxPoints` points and the node capacities given. */
  get capacity(): PointsToGridCapacity {
    return { points: this.options.maxPoints, ...this.options.nodes };
  }

  /** Points received beyond the first `maxPoints` (later sweeps re-deliver them); not appended. */
  get repeatedPoints(): number {
    return this.repeated;
  }

  /**
   * The build report of the last grid, read after the last scan (or in `stop()` when the run ended
   * before it): the counts, and which capacity overflowed if any. `null` before the run ended and when no
   * scan was built; the backend's error when the read-back failed.
   */
  get report(): Result<BoundedBuildReport> | null {
    return this.lastReport;
  }

  setup(spec: OperatorSpec): void {
    spec.requireCudaStream();
    this.scans = spec.input('scans', { memoryKind: MemoryKind.PinnedHost, dtype: DType.float64, rank: 2 });
    this.grid = spec
      .output('grid')
      .producesTensor({
        representation: { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 },
        bounds: { maxByteSpan: this.options.maxGridBytes, maxRank: 1 },
        storage: 'runtimePool',
      })
      .follows(this.scans, new RateRatio(1, 1));
  }

  compute(ctx: ExecutionContext): Result<void> {
    const scan = ctx.receive(this.scans);
    if (scan === undefined) return OK_VOID;
    const stream = ctx.cudaStream();
    const ready = this.ensureBlock(ctx.backend, stream);
    if (!ready.ok) return ready;
    const build = this.build!;
    const points = scan.shape[0]!;
    const backend = ctx.backend;

    const appended = Math.min(points, this.options.maxPoints - this.held);
    if (appended > 0) {
      const into = this.positions!.data!;
      const copied = backend.memcpyAsync(
        stream,
        { memory: into.memory, byteOffset: into.byteOffset + POINT_BYTES * this.held, byteLength: POINT_BYTES * appended, label: `${this.name}.points` },
        { ...scan.data(), byteLength: POINT_BYTES * appended },
      );
      if (!copied.ok) return copied;
      this.held += appended;
    }
    this.repeated += points - appended;
    const built = build.encode(stream, { space: 'world', positions: this.positions! }, this.held);
    if (!built.ok) return built;

    this.shape[0] = build.gridCapacityBytes;
    const loan = ctx.allocateTensor(this.grid, { shape: this.shape, dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const guard = loan.value.write(stream);
    if (!guard.ok) return guard;
    const copied = backend.memcpyAsync(stream, guard.value.range, this.gridRegion!);
    if (!copied.ok) return copied;
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    const emitted = ctx.emit(this.grid, loan.value);
    if (!emitted.ok) return emitted;
    this.received += 1;
    this.lastStream = stream;
    this.state = { ...this.state, scans: this.state.scans + 1, points: this.state.points + points };
    // The one host read of the run, after the last scan's build; it settles in stop() at the latest.
    if (this.received === this.options.frames) this.pendingReport = reportOutcome(build.readReport(stream));
    return OK_VOID;
  }

  /**
   * Settles the report read after the last scan (a run that ended early, e.g. on Ctrl-C, reads the report
   * of its last build here, so `accumulated` and `report` describe the grid actually built), then returns
   * the block to the resource.
   */
  override async stop(): Promise<Result<void>> {
    if (this.pendingReport === null && this.build !== null && this.lastStream !== null) this.pendingReport = reportOutcome(this.build.readReport(this.lastStream));
    this.lastStream = null;
    if (this.pendingReport !== null) {
      const report = await this.pendingReport;
      this.pendingReport = null;
      this.lastReport = report;
      if (report.ok) this.state = { ...this.state, voxelCount: report.value.counts.voxels, gridBytes: report.value.gridSize };
    }
    this.build?.dispose();
    this.build = null;
    this.positions = null;
    this.gridRegion = null;
    this.block?.dispose();
    this.block = null;
    return OK_VOID;
  }

  /** Allocates the one block on the first scan and prepares the bounded build inside it. */
  private ensureBlock(backend: Backend, stream: Stream): Result<void> {
    if (this.block !== null) return OK_VOID;
    const { maxPoints, voxelSize, gridName, maxGridBytes } = this.options;
    const resource = this.options.resource(backend, stream.device);
    if (!isAsyncResource(resource)) {
      return err(ErrorCode.NotSupported, 'the stream builder allocates in stream order: inject an async resource (DeviceResource, or AsyncFromSync over a sync one), or use --builder host');
    }
    const capacity = this.capacity;
    const buildBytes = BoundedPointsToGrid.requiredBytes(backend, capacity, GridType.OnIndex);
    if (!buildBytes.ok) return buildBytes;
    const pointBytes = Math.ceil((POINT_BYTES * maxPoints) / BLOCK_ALIGNMENT) * BLOCK_ALIGNMENT;
    const made = ResourceBuffer.allocateAsync(backend, stream, resource, pointBytes + buildBytes.value, { noInit: true, alignment: BLOCK_ALIGNMENT });
    if (!made.ok) return made;
    const block = made.value;
    const data = block.data!;
    const positions = BufferView.of(data, 3 * maxPoints, Float64Array);
    const region = BufferView.of({ ...data, byteOffset: data.byteOffset + pointBytes, byteLength: buildBytes.value }, buildBytes.value);
    const build = region.ok ? BoundedPointsToGrid.create(backend, stream, region.value, capacity, { gridType: GridType.OnIndex, voxelSize, name: gridName }) : region;
    if (!positions.ok || !build.ok) {
      block.dispose();
      return positions.ok ? (build as Extract<typeof build, { ok: false }>) : positions;
    }
    if (build.value.gridCapacityBytes > maxGridBytes) {
      build.value.dispose();
      block.dispose();
      return err(ErrorCode.ResourceExhausted, `a ${build.value.gridCapacityBytes}-byte grid capacity exceeds the ${maxGridBytes}-byte slots sized for the whole cloud`);
    }
    // Zero the grid region once: a slot's bytes past the grid (its header's gridSize) are then zeros,
    // never uninitialized memory copied on every scan.
    const gridRegion = build.value.grid.data!;
    const zeroed = backend.memsetAsync(stream, gridRegion, 0);
    if (!zeroed.ok) {
      build.value.dispose();
      block.dispose();
      return zeroed;
    }
    this.block = block;
    this.build = build.value;
    this.positions = positions.value;
    this.gridRegion = gridRegion;
    this.held = 0;
    this.repeated = 0;
    this.received = 0;
    return OK_VOID;
  }
}

/**
 * A report read (which rejects with an `HsError`) as the `Result` that `report` keeps: read in `compute()`
 * and awaited only in `stop()`, the promise must never reject unhandled in between.
 */
function reportOutcome(read: Promise<BoundedBuildReport>): Promise<Result<BoundedBuildReport>> {
  return read.then(
    (report) => ok(report),
    (error: unknown) => ({ ok: false, error: error as HsError }),
  );
}
