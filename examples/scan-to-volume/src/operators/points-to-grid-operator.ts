import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, type OutputPort, RateRatio } from '@hs/compiler';
import { ResourceBuffer, GridType, pointsToGrid, type GridAccessor, type SyncResource } from '@hs/nanovdb-mr';
import { type Backend, ErrorCode, HsError, MemoryKind, OK_VOID, err, errWithContext, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';

/** Options of `PointsToGridOperator`. */
export interface PointsToGridOperatorOptions {
  /**
   * Makes the resource every byte of the build goes through (builder scratch, each grid, the
   * accumulated voxel list), once, from the session's backend at the first scan. It must be
   * host-accessible (the builder runs on the host). Kept until `stop()`.
   */
  readonly resource: (backend: Backend) => SyncResource;
  /** World units per voxel, a positive finite number. */
  readonly voxelSize: number;
  /** Points in the whole cloud: no accumulated grid has more voxels. */
  readonly maxPoints: number;
  /** Points in the largest scan: no scan adds more voxels to the list before they merge. */
  readonly maxScanPoints: number;
  /** Bytes of the largest grid the run produces (see `sizeVolume`); sizes the output slots. */
  readonly maxGridBytes: number;
  /** Grid name written into every grid. */
  readonly gridName: string;
}

/** What the last build produced. */
export interface AccumulatedGridState {
  /** Scans received so far. */
  readonly scans: number;
  /** Points received so far, over all scans. */
  readonly points: number;
  /** Active voxels of the last grid emitted. */
  readonly voxelCount: number;
  /** Bytes of the last grid emitted. */
  readonly gridBytes: number;
}

/**
 * PointsToGrid as an operator: receives scans (pinnedHost float64 `[n, 3]`, world units) and emits, for
 * every scan, the OnIndex NanoVDB grid of **all points received so far** (pinnedHost uint8 `[gridBytes]`,
 * the grid's bytes from offset 0, full checksum), so the volume grows as the sweep goes round and a later
 * sweep over the same points changes nothing. World points map to voxels as `pointsToGrid` maps them.
 *
 * Accumulation without rebuilding from every point: the operator keeps the previous grid's active voxels
 * (index coordinates); for a new scan it builds the scan's own grid, appends that grid's voxels, builds
 * the merged grid from the index points (duplicates collapse) and keeps the merged grid's voxels. A
 * scan costs O(voxels so far + its points), and the list never exceeds `maxPoints + maxScanPoints` voxels.
 *
 * Every byte (builder scratch, both grids, the voxel list) comes from the injected resource; the grid is
 * then copied into the output slot and its buffers returned, so the resource holds only the voxel list
 * between scans and nothing after `stop()`. The builder is the host one; the operator is host-only.
 *
 * Errors: those of `pointsToGrid` (InvalidArgument for a non-finite point or a voxel outside the 32-bit
 * index range) and of the resource (OutOfMemory), prefixed with the operator's name; ResourceExhausted
 * when a grid exceeds `maxGridBytes` (a sizing bug). Nothing stays allocated on failure.
 * Spec: nanovdb-memory-resources (PointsToGrid through an injected resource); "Sized cold, borrowed hot".
 */
export class PointsToGridOperator extends Operator {
  /** Input port `scans`: pinnedHost float64 rank 2. */
  scans!: InputPort;
  /** Output port `grid`: pinnedHost uint8 rank 1, one grid per scan (`follows(scans, 1/1)`). */
  grid!: OutputPort;
  private resource: SyncResource | null = null;
  private voxels: ResourceBuffer<SyncResource, Int32ArrayConstructor> | null = null;
  private coords = new Int32Array(0);
  private voxelsKept = 0;
  private appendAt = 0;
  private readonly shape = [0];
  private state: AccumulatedGridState = { scans: 0, points: 0, voxelCount: 0, gridBytes: 0 };
  /** Appends one active voxel to `coords` at `appendAt`; built once, so visiting allocates nothing. */
  private readonly append = (x: number, y: number, z: number): void => {
    const at = this.appendAt;
    this.coords[at] = x;
    this.coords[at + 1] = y;
    this.coords[at + 2] = z;
    this.appendAt = at + 3;
  };

  /** @throws HsError InvalidArgument for a non-function `resource` or a size that is not a positive integer. */
  constructor(
    name: string,
    private readonly options: PointsToGridOperatorOptions,
  ) {
    super(name);
    if (typeof options.resource !== 'function') throw new HsError(ErrorCode.InvalidArgument, `${name}: resource must be a function (backend) => SyncResource`);
    for (const [what, value] of [['maxPoints', options.maxPoints], ['maxScanPoints', options.maxScanPoints], ['maxGridBytes', options.maxGridBytes]] as const) {
      if (!Number.isSafeInteger(value) || value < 1) throw new HsError(ErrorCode.InvalidArgument, `${name}: ${what} must be a positive integer, got ${value}`);
    }
  }

  /** Scans, points, voxels and bytes of the last grid emitted. */
  get accumulated(): AccumulatedGridState {
    return this.state;
  }

  setup(spec: OperatorSpec): void {
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
    const ready = this.ensureVoxelList(ctx.backend);
    if (!ready.ok) return errWithContext(ready.error, this.name);
    const bytes = scan.hostView();
    if (!bytes.ok) return bytes;
    const points = scan.shape[0]!;
    const { voxelSize, gridName } = this.options;
    const backend = ctx.backend;
    const resource = this.resource!;

    this.appendAt = 3 * this.voxelsKept;
    if (points > 0) {
      const positions = new Float64Array(bytes.value.buffer, bytes.value.byteOffset, 3 * points);
      const scanGrid = pointsToGrid(backend, resource, { space: 'world', positions }, { gridType: GridType.OnIndex, voxelSize, checksum: 'disabled' });
      if (!scanGrid.ok) return errWithContext(scanGrid.error, this.name);
      const visited = visitVoxels(scanGrid.value.accessor(), this.append);
      scanGrid.value.dispose();
      if (!visited.ok) return visited;
    }
    const merged = pointsToGrid(backend, resource, { space: 'index', coords: this.coords.subarray(0, this.appendAt) }, { gridType: GridType.OnIndex, voxelSize, name: gridName });
    if (!merged.ok) return errWithContext(merged.error, this.name);
    const handle = merged.value;
    try {
      this.appendAt = 0;
      const visited = visitVoxels(handle.accessor(), this.append);
      if (!visited.ok) return visited;
      this.voxelsKept = this.appendAt / 3;
      const gridBytes = handle.hostBytes();
      if (!gridBytes.ok) return gridBytes;
      if (gridBytes.value.byteLength > this.options.maxGridBytes) {
        return err(ErrorCode.ResourceExhausted, `${this.name}: a ${gridBytes.value.byteLength}-byte grid exceeds the ${this.options.maxGridBytes}-byte slots sized for the whole cloud`);
      }
      this.shape[0] = gridBytes.value.byteLength;
      const loan = ctx.allocateTensor(this.grid, { shape: this.shape, dtype: DType.uint8 });
      if (!loan.ok) return loan;
      const guard = loan.value.write(null);
      if (!guard.ok) return guard;
      const view = guard.value.tensor.mutableHostView();
      if (!view.ok) return view;
      view.value.set(gridBytes.value);
      const committed = guard.value.commit();
      if (!committed.ok) return committed;
      const emitted = ctx.emit(this.grid, loan.value);
      if (!emitted.ok) return emitted;
      this.state = { scans: this.state.scans + 1, points: this.state.points + points, voxelCount: this.voxelsKept, gridBytes: gridBytes.value.byteLength };
      return OK_VOID;
    } finally {
      handle.dispose();
    }
  }

  /** Returns the voxel list to the resource. */
  override stop(): void {
    this.voxels?.dispose();
    this.voxels = null;
    this.coords = new Int32Array(0);
    this.resource = null;
  }

  /** Makes the resource and the voxel list (3 int32 per voxel, `maxPoints + maxScanPoints` voxels) on the first scan. */
  private ensureVoxelList(backend: Backend): Result<void> {
    if (this.voxels !== null) return OK_VOID;
    const resource = this.options.resource(backend);
    const made = ResourceBuffer.allocate(backend, resource, 3 * (this.options.maxPoints + this.options.maxScanPoints), { element: Int32Array });
    if (!made.ok) return made;
    const view = made.value.hostView();
    if (!view.ok) {
      made.value.dispose();
      return err(ErrorCode.NotSupported, 'the injected resource gives memory the host cannot read; PointsToGrid builds on the host, inject a host, pinned or managed resource', view.error);
    }
    this.resource = resource;
    this.voxels = made.value;
    this.coords = view.value;
    this.voxelsKept = 0;
    return OK_VOID;
  }
}

/** Runs `visit` over every active voxel of an opened grid. */
function visitVoxels(accessor: Result<GridAccessor>, visit: (x: number, y: number, z: number) => void): Result<void> {
  if (!accessor.ok) return accessor;
  accessor.value.forEachActiveVoxel(visit);
  return OK_VOID;
}
