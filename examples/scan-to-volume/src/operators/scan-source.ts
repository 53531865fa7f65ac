import { type ExecutionContext, Operator, type OperatorSpec, type OutputPort, Rate } from '@hs/compiler';
import { ErrorCode, HsError, MemoryKind, OK_VOID, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';
import type { ScanSweep } from '../scan-split.js';

/** Fastest accepted scan rate, in Hz. */
export const MAX_SCAN_RATE_HZ = 100_000;

/** Options of `ScanSource`. */
export interface ScanSourceOptions {
  /** The scans of one sweep, emitted in order. */
  readonly sweep: ScanSweep;
  /** Sweeps to emit (the scans again, in the same order, each time); a positive integer. */
  readonly sweeps: number;
  /** Nominal scan rate in Hz, an integer from 1 to `MAX_SCAN_RATE_HZ`. */
  readonly rateHz: number;
}

/**
 * Host-only source: emits the sweep's scans as float64 tensors `[n, 3]` (x, y, z per point, world units)
 * from a runtime pool in pinned host memory, `sweeps` times over, then finishes. Each slot is filled by
 * the host (`write(null)`, a copy through `mutableHostView()`, `commit()`), so consumers have nothing to
 * wait for. The output declares its nominal rate (`Rate.hz(rateHz)`), which the plan's queue sizing and
 * every `follows()` downstream derive from.
 *
 * Pacing: scan k is due at `t0 + k / rateHz`; after each scan the source asks not to be activated before
 * the next due time (`ctx.deferUntil`). When backpressure held it past a due time, the next scan is due
 * one period after the late one (no burst to catch up).
 *
 * Spec: "Size queue entries from nominal rates", "Emit: commit records readiness" (host-pool path).
 */
export class ScanSource extends Operator {
  /** Output port `scans`: pinnedHost float64 `[n, 3]`, slots of `maxScanPoints * 24` bytes. */
  scans!: OutputPort;
  private readonly shapes: readonly (readonly number[])[];
  /** Each scan's bytes, viewed once. */
  private readonly scanBytes: readonly Uint8Array[];
  private readonly periodNs: bigint;
  private emitted = 0;
  private nextDueNs = -1n;

  /**
   * @throws HsError InvalidArgument when the sweep has no scans or no points, `sweeps` is not a positive
   *   integer, or `rateHz` is not an integer from 1 to `MAX_SCAN_RATE_HZ`.
   */
  constructor(
    name: string,
    private readonly options: ScanSourceOptions,
  ) {
    super(name);
    const { sweep, sweeps, rateHz } = options;
    if (sweep.scans.length === 0 || sweep.maxScanPoints < 1) throw new HsError(ErrorCode.InvalidArgument, `${name}: the sweep holds no points`);
    if (!Number.isSafeInteger(sweeps) || sweeps < 1) throw new HsError(ErrorCode.InvalidArgument, `${name}: sweeps must be a positive integer, got ${sweeps}`);
    if (!Number.isSafeInteger(rateHz) || rateHz < 1 || rateHz > MAX_SCAN_RATE_HZ) {
      throw new HsError(ErrorCode.InvalidArgument, `${name}: rateHz must be an integer from 1 to ${MAX_SCAN_RATE_HZ}, got ${rateHz}`);
    }
    this.shapes = sweep.scans.map((scan) => Object.freeze([scan.length / 3, 3]));
    this.scanBytes = sweep.scans.map((scan) => new Uint8Array(scan.buffer, scan.byteOffset, scan.byteLength));
    this.periodNs = BigInt(Math.round(1e9 / rateHz));
  }

  /** Scans this source emits in total (`sweep.scans.length * sweeps`). */
  get frames(): number {
    return this.options.sweep.scans.length * this.options.sweeps;
  }

  setup(spec: OperatorSpec): void {
    this.scans = spec
      .output('scans')
      .producesTensor({
        representation: { memoryKind: MemoryKind.PinnedHost, dtype: DType.float64, rank: 2 },
        bounds: { maxByteSpan: this.options.sweep.maxScanPoints * 24, maxRank: 2 },
        storage: 'runtimePool',
      })
      .nominalRate(Rate.hz(this.options.rateHz));
  }

  compute(ctx: ExecutionContext): Result<void> {
    const index = this.emitted % this.options.sweep.scans.length;
    const loan = ctx.allocateTensor(this.scans, { shape: this.shapes[index]!, dtype: DType.float64 });
    if (!loan.ok) {
      if (loan.error.code !== ErrorCode.ResourceExhausted) return loan;
      // Every slot still held downstream: this tick is dropped (the pool counts it) and the same frame goes out
      // on the next one. Allocation never waits, and compute() never retries in place.
      this.deferToNextTick(ctx);
      return OK_VOID;
    }
    const guard = loan.value.write(null);
    if (!guard.ok) return guard;
    const view = guard.value.tensor.mutableHostView();
    if (!view.ok) return view;
    view.value.set(this.scanBytes[index]!);
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    const published = ctx.emit(this.scans, loan.value);
    if (!published.ok) return published;

    this.emitted += 1;
    if (this.emitted === this.frames) {
      ctx.finish();
      return OK_VOID;
    }
    this.deferToNextTick(ctx);
    return OK_VOID;
  }

  /** Defers the next activation to the next period boundary after this one (late ticks are not run as a burst). */
  private deferToNextTick(ctx: ExecutionContext): void {
    const now = ctx.activationTime;
    const due = this.nextDueNs < 0n ? now : this.nextDueNs;
    this.nextDueNs = due + this.periodNs > now ? due + this.periodNs : now + this.periodNs;
    ctx.deferUntil(this.nextDueNs);
  }
}
