import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, type OutputPort, RateRatio } from '@hs/compiler';
import type { RootTilePartition } from '@hs/nanovdb-mr';
import { ErrorCode, HsError, MemoryKind, OK_VOID, err, type Result } from '@hs/streams';
import type { TensorLoan, WriteGuard } from '@hs/pool';
import { DType } from '@hs/tensor';

/** Options of `ScanPartition`. */
export interface ScanPartitionOptions {
  /** The split by space (`planRootTilePartition` of the whole cloud, at the builders' voxel size). */
  readonly partition: RootTilePartition;
  /** Points of the largest scan (`ScanSweep.maxScanPoints`). */
  readonly maxScanPoints: number;
  /** Per part, the most points of one scan that fall in it: sizes that part's output slots. */
  readonly maxPartScanPoints: readonly number[];
}

/**
 * Host operator of the split by space: receives scans (pinnedHost float64 `[n, 3]`, world units) and emits,
 * for every scan, one pinnedHost float64 `[n_i, 3]` tensor per part holding the scan's points whose root tile
 * the part owns (`RootTilePartition.partOf`), in scan order; a part none of whose tiles the scan touches gets
 * an empty `[0, 3]` tensor, so every part's builder sees every frame. Output `part-i` follows `scans` 1/1.
 *
 * Nothing is allocated per scan: the slots come from the pools (sized from `maxPartScanPoints`), the
 * per-point part list is made once for `maxScanPoints`. Errors: InvalidArgument for a point that maps to no
 * voxel (the builder would refuse it too), ResourceExhausted for a scan larger than the slots (a sizing bug).
 */
export class ScanPartition extends Operator {
  /** Input port `scans`: pinnedHost float64 rank 2. */
  scans!: InputPort;
  /** Output ports `part-0` … `part-(k-1)`: pinnedHost float64 rank 2. */
  readonly parts: OutputPort[] = [];
  private readonly owner: Int32Array;
  private readonly counts: Int32Array;
  private readonly filled: Int32Array;
  private readonly shapes: number[][];
  private readonly views: (Float64Array | null)[];
  private readonly guards: (WriteGuard | null)[];
  private readonly loans: (TensorLoan | null)[];
  private received = 0;
  private points = 0;

  /** @throws HsError InvalidArgument for a size that is not a positive integer or a part list of another length than the partition's. */
  constructor(
    name: string,
    private readonly options: ScanPartitionOptions,
  ) {
    super(name);
    const { partition, maxScanPoints, maxPartScanPoints } = options;
    if (!Number.isSafeInteger(maxScanPoints) || maxScanPoints < 1) throw new HsError(ErrorCode.InvalidArgument, `${name}: maxScanPoints must be a positive integer, got ${maxScanPoints}`);
    if (!Array.isArray(maxPartScanPoints) || maxPartScanPoints.length !== partition.partCount) {
      throw new HsError(ErrorCode.InvalidArgument, `${name}: maxPartScanPoints must hold one count per part (${partition.partCount})`);
    }
    for (const m of maxPartScanPoints) if (!Number.isSafeInteger(m) || m < 0) throw new HsError(ErrorCode.InvalidArgument, `${name}: maxPartScanPoints must be integers from 0, got ${m}`);
    const k = partition.partCount;
    this.owner = new Int32Array(maxScanPoints);
    this.counts = new Int32Array(k);
    this.filled = new Int32Array(k);
    this.shapes = Array.from({ length: k }, () => [0, 3]);
    this.views = new Array<Float64Array | null>(k).fill(null);
    this.guards = new Array<WriteGuard | null>(k).fill(null);
    this.loans = new Array<TensorLoan | null>(k).fill(null);
  }

  /** Scans and points received so far. */
  get accumulated(): { readonly scans: number; readonly points: number } {
    return { scans: this.received, points: this.points };
  }

  setup(spec: OperatorSpec): void {
    this.scans = spec.input('scans', { memoryKind: MemoryKind.PinnedHost, dtype: DType.float64, rank: 2 });
    for (let p = 0; p < this.options.partition.partCount; p++) {
      this.parts.push(
        spec
          .output(`part-${p}`)
          .producesTensor({
            representation: { memoryKind: MemoryKind.PinnedHost, dtype: DType.float64, rank: 2 },
            bounds: { maxByteSpan: 24 * Math.max(1, this.options.maxPartScanPoints[p]!), maxRank: 2 },
            storage: 'runtimePool',
          })
          .follows(this.scans, new RateRatio(1, 1)),
      );
    }
  }

  compute(ctx: ExecutionContext): Result<void> {
    const scan = ctx.receive(this.scans);
    if (scan === undefined) return OK_VOID;
    const n = scan.shape[0]!;
    if (n > this.owner.length) return err(ErrorCode.ResourceExhausted, `a ${n}-point scan exceeds the ${this.owner.length} points sized for the largest scan`);
    const bytes = scan.hostView();
    if (!bytes.ok) return bytes;
    const src = new Float64Array(bytes.value.buffer, bytes.value.byteOffset, 3 * n);
    const { partition, maxPartScanPoints } = this.options;
    const k = partition.partCount;
    this.counts.fill(0);
    for (let i = 0; i < n; i++) {
      const p = partition.partOf(src[3 * i]!, src[3 * i + 1]!, src[3 * i + 2]!);
      if (p < 0) return err(ErrorCode.InvalidArgument, `scan point ${i} (${src[3 * i]}, ${src[3 * i + 1]}, ${src[3 * i + 2]}) maps to no voxel`);
      this.owner[i] = p;
      this.counts[p]! += 1;
    }
    for (let p = 0; p < k; p++) {
      if (this.counts[p]! > maxPartScanPoints[p]!) return err(ErrorCode.ResourceExhausted, `part ${p} got ${this.counts[p]} points of one scan, above the ${maxPartScanPoints[p]} its slots were sized for`);
    }
    try {
      for (let p = 0; p < k; p++) {
        const shape = this.shapes[p]!;
        shape[0] = this.counts[p]!;
        const loan = ctx.allocateTensor(this.parts[p]!, { shape, dtype: DType.float64 });
        if (!loan.ok) return loan;
        this.loans[p] = loan.value;
        const guard = loan.value.write(null);
        if (!guard.ok) return guard;
        this.guards[p] = guard.value;
        const view = guard.value.tensor.mutableHostView();
        if (!view.ok) return view;
        this.views[p] = new Float64Array(view.value.buffer, view.value.byteOffset, 3 * shape[0]!);
      }
      this.filled.fill(0);
      for (let i = 0; i < n; i++) {
        const p = this.owner[i]!;
        const at = 3 * this.filled[p]!;
        const into = this.views[p]!;
        into[at] = src[3 * i]!;
        into[at + 1] = src[3 * i + 1]!;
        into[at + 2] = src[3 * i + 2]!;
        this.filled[p]! += 1;
      }
      for (let p = 0; p < k; p++) {
        const committed = this.guards[p]!.commit();
        if (!committed.ok) return committed;
        this.guards[p] = null;
        const emitted = ctx.emit(this.parts[p]!, this.loans[p]!);
        if (!emitted.ok) return emitted;
      }
    } finally {
      // a loan not emitted (a failure part way) goes back to its pool; after emit() abandon does nothing
      for (const loan of this.loans) loan?.abandon();
      this.views.fill(null);
      this.guards.fill(null);
      this.loans.fill(null);
    }
    this.received += 1;
    this.points += n;
    return OK_VOID;
  }
}
