import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, type OutputPort } from '@hs/compiler';
import { MemoryKind, OK_VOID, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';
import type { ImageBounds } from '../image-input.js';
import { ImageKernelLaunch, rgbaToGray } from '../kernels.js';
import { checkPackedImage } from './packed-image.js';
import { ShapeCache } from './shape-cache.js';

/**
 * CUDA-active operator: receives an RGBA uint8 image `[H, W, 4]` in pinned host memory and emits its
 * grey version `[H, W]` (uint8) from a runtime pool in CUDA device memory, computed by the
 * `hs.rgbaToGray` kernel on the operator's compute stream. The received tensor is already ordered on
 * that stream and the commit records readiness on it: nothing here waits.
 *
 * Spec: "Emit: commit records readiness", "Receive: the tensor arrives pre-ordered".
 */
export class Grayscale extends Operator {
  /** Input port `rgba`: pinnedHost uint8 rank 3 (`[H, W, 4]`). */
  rgba!: InputPort;
  /** Output port `gray`: cudaDevice uint8 rank 2 (`[H, W]`), slots of `maxWidth * maxHeight` bytes. */
  gray!: OutputPort;
  private readonly shape = new ShapeCache();
  /** One launch record refilled per frame (the backend captures it at launch). */
  private readonly launch = new ImageKernelLaunch();

  constructor(
    name: string,
    /** Largest image accepted; sizes the output pool's slots. */
    private readonly bounds: ImageBounds,
  ) {
    super(name);
  }

  setup(spec: OperatorSpec): void {
    this.rgba = spec.input('rgba', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 3 });
    this.gray = spec.output('gray').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 },
      bounds: { maxByteSpan: this.bounds.maxWidth * this.bounds.maxHeight, maxRank: 2 },
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const rgba = ctx.receive(this.rgba);
    if (rgba === undefined) return OK_VOID;
    const layout = checkPackedImage(rgba, this.rgba, 4);
    if (!layout.ok) return layout;
    const height = rgba.shape[0]!;
    const width = rgba.shape[1]!;

    const loan = ctx.allocateTensor(this.gray, { shape: this.shape.of(height, width), dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const stream = ctx.cudaStream();
    const guard = loan.value.write(stream);
    if (!guard.ok) return guard;
    const launched = ctx.backend.launchKernel(stream, rgbaToGray(rgba.data(), guard.value.range, width, height, this.launch));
    if (!launched.ok) return launched;
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    return ctx.emit(this.gray, loan.value);
  }
}
