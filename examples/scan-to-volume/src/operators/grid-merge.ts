import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, type OutputPort, RateRatio } from '@hs/compiler';
import { mergeRootTileGrids } from '@hs/nanovdb-mr';
import { ErrorCode, HsError, MemoryKind, OK_VOID, errWithContext, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';

/** Options of `GridMerge`. */
export interface GridMergeOptions {
  /** How many parts (inputs `part-0` … `part-(k-1)`), at least 2. */
  readonly parts: number;
  /** Bytes of the merged grid of the whole cloud (`sizeVolume`): the output slots' size and every grid's shape. */
  readonly gridBytes: number;
}

/**
 * Host operator of the split by space: receives, for every frame, one grid per part (pinnedHost uint8, each the
 * OnIndex grid of the points so far in that part's root tiles, from any device: the inputs are cross-device)
 * and emits their merge (`mergeRootTileGrids`, full checksum): byte for byte the grid one build of all the
 * points so far writes. The output (pinnedHost uint8 `[gridBytes]`, the grid from offset 0, zeros after it,
 * as the stream builder's slots) follows `part-0` 1/1. A part none of whose points arrived yet merges as no
 * tiles. Nothing is allocated per frame beyond the pool slot; no host wait (the runtime runs it after the
 * parts' readiness without blocking).
 *
 * Errors: the merge's InvalidArgument (parts that overlap or differ in header: a partition bug), prefixed with
 * the operator's name by the runtime.
 */
export class GridMerge extends Operator {
  /** Input ports `part-0` … : pinnedHost uint8 rank 1, cross-device. */
  readonly parts: InputPort[] = [];
  /** Output port `grid`: pinnedHost uint8 rank 1, one merged grid per frame. */
  grid!: OutputPort;
  private readonly bytes: Uint8Array[];
  private static readonly NONE = new Uint8Array(0);
  private readonly shape: number[];
  private merged = 0;
  private lastBytes = 0;

  /** @throws HsError InvalidArgument for fewer than 2 parts or a size that is not a positive integer. */
  constructor(
    name: string,
    private readonly options: GridMergeOptions,
  ) {
    super(name);
    if (!Number.isSafeInteger(options.parts) || options.parts < 2) throw new HsError(ErrorCode.InvalidArgument, `${name}: parts must be an integer from 2, got ${String(options.parts)}`);
    if (!Number.isSafeInteger(options.gridBytes) || options.gridBytes < 1) throw new HsError(ErrorCode.InvalidArgument, `${name}: gridBytes must be a positive integer, got ${String(options.gridBytes)}`);
    this.bytes = new Array<Uint8Array>(options.parts).fill(GridMerge.NONE);
    this.shape = [options.gridBytes];
  }

  /** Frames merged, and the bytes of the last merged grid. */
  get accumulated(): { readonly frames: number; readonly gridBytes: number } {
    return { frames: this.merged, gridBytes: this.lastBytes };
  }

  setup(spec: OperatorSpec): void {
    for (let p = 0; p < this.options.parts; p++) {
      this.parts.push(spec.input(`part-${p}`, { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 }, { crossDevice: true }));
    }
    this.grid = spec
      .output('grid')
      .producesTensor({
        representation: { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 },
        bounds: { maxByteSpan: this.options.gridBytes, maxRank: 1 },
        storage: 'runtimePool',
      })
      .follows(this.parts[0]!, new RateRatio(1, 1));
  }

  compute(ctx: ExecutionContext): Result<void> {
    for (let p = 0; p < this.parts.length; p++) {
      const part = ctx.receive(this.parts[p]!);
      if (part === undefined) return OK_VOID;
      const view = part.hostView();
      if (!view.ok) return view;
      this.bytes[p] = view.value;
    }
    const loan = ctx.allocateTensor(this.grid, { shape: this.shape, dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const guard = loan.value.write(null);
    if (!guard.ok) return guard;
    const out = guard.value.tensor.mutableHostView();
    if (!out.ok) return out;
    const size = mergeRootTileGrids(this.bytes, out.value, 'full');
    this.bytes.fill(GridMerge.NONE); // keep no view of the parts' slots past this activation
    if (!size.ok) {
      loan.value.abandon();
      return errWithContext(size.error, `frame ${this.merged}`);
    }
    out.value.fill(0, size.value);
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    const emitted = ctx.emit(this.grid, loan.value);
    if (!emitted.ok) return emitted;
    this.merged += 1;
    this.lastBytes = size.value;
    return OK_VOID;
  }
}
