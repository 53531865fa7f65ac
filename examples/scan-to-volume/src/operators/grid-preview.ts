import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, type OutputPort, RateRatio } from '@hs/compiler';
import { ErrorCode, HsError, MemoryKind, OK_VOID, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';
import { GridPreviewLaunch, gridPreview, type PreviewCamera } from '../grid-preview-kernel.js';

/** The preview runs on one grid in this many (a quarter of the scan rate). */
export const PREVIEW_EVERY = 4;

/** True when grid `index` (0-based) of a run of `frames` grids gets a preview: every fourth, and the last. */
export function isPreviewFrame(index: number, frames: number): boolean {
  return (index + 1) % PREVIEW_EVERY === 0 || index === frames - 1;
}

/**
 * CUDA-active operator: renders every fourth grid it receives (and the last) into a depth-shaded
 * preview, uint8 grey `[height, width]` in CUDA device memory, with the `hs.gridPreview` kernel on its
 * compute stream (see `gridPreview`; on the host backend the kernel's host implementation runs in stream
 * order). The kernel reads the grid where it lies, in pinned host memory. Its output declares
 * `follows(grid, 1/4)`, so the plan sizes the preview edge for a quarter of the grid rate.
 * Nothing here waits: the received grid is ordered on the stream, the commit records readiness.
 * Spec: "Size queue entries from nominal rates" (follows), "Receive: the tensor arrives pre-ordered".
 */
export class GridPreview extends Operator {
  /** Input port `grid`: pinnedHost uint8 rank 1 (a NanoVDB OnIndex grid's bytes). */
  grid!: InputPort;
  /** Output port `preview`: cudaDevice uint8 `[height, width]`. */
  preview!: OutputPort;
  private readonly launch = new GridPreviewLaunch();
  private readonly shape: readonly number[];
  private received = 0;
  private rendered = 0;

  /**
   * @param camera the fixed camera (`previewCamera` of the final volume's box).
   * @param frames grids the run will deliver; the last one is always rendered.
   * @throws HsError InvalidArgument when `frames` is not a positive integer.
   */
  constructor(
    name: string,
    private readonly camera: PreviewCamera,
    private readonly frames: number,
  ) {
    super(name);
    if (!Number.isSafeInteger(frames) || frames < 1) throw new HsError(ErrorCode.InvalidArgument, `${name}: frames must be a positive integer, got ${frames}`);
    this.shape = Object.freeze([camera.height, camera.width]);
  }

  /** Previews rendered so far. */
  get previews(): number {
    return this.rendered;
  }

  setup(spec: OperatorSpec): void {
    this.grid = spec.input('grid', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 });
    this.preview = spec
      .output('preview')
      .producesTensor({
        representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 },
        bounds: { maxByteSpan: this.camera.width * this.camera.height, maxRank: 2 },
        storage: 'runtimePool',
      })
      .follows(this.grid, new RateRatio(1, PREVIEW_EVERY));
  }

  compute(ctx: ExecutionContext): Result<void> {
    const grid = ctx.receive(this.grid);
    if (grid === undefined) return OK_VOID;
    const index = this.received++;
    if (!isPreviewFrame(index, this.frames)) return OK_VOID;
    const loan = ctx.allocateTensor(this.preview, { shape: this.shape, dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const stream = ctx.cudaStream();
    const guard = loan.value.write(stream);
    if (!guard.ok) return guard;
    const launched = ctx.backend.launchKernel(stream, gridPreview(grid.data(), guard.value.range, this.camera, this.launch));
    if (!launched.ok) return launched;
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    this.rendered += 1;
    return ctx.emit(this.preview, loan.value);
  }
}
