import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, type OutputPort } from '@hs/compiler';
import { MemoryKind, OK_VOID, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';
import type { ImageBounds } from '../image-input.js';
import { ImageKernelLaunch, downscale2x } from '../kernels.js';
import { checkPackedImage } from './packed-image.js';
import { ShapeCache } from './shape-cache.js';

/**
 * CUDA-active operator: receives a grey uint8 image `[H, W]` in CUDA device memory and emits its 2x2
 * box downscale `[floor(H/2), floor(W/2)]` (uint8) from a runtime pool in CUDA device memory, computed
 * by the `hs.downscale2x` kernel on the operator's compute stream. Nothing here waits.
 *
 * Spec: "Emit: commit records readiness", "Receive: the tensor arrives pre-ordered".
 */
export class Downscale extends Operator {
  /** Input port `gray`: cudaDevice uint8 rank 2 (`[H, W]`). */
  gray!: InputPort;
  /** Output port `small`: cudaDevice uint8 rank 2 (`[H/2, W/2]`), slots of `floor(maxWidth/2) * floor(maxHeight/2)` bytes. */
  small!: OutputPort;
  private readonly shape = new ShapeCache();
  /** One launch record refilled per frame (the backend captures it at launch). */
  private readonly launch = new ImageKernelLaunch();

  constructor(
    name: string,
    /** Largest source image accepted; sizes the output pool's slots. */
    private readonly bounds: ImageBounds,
  ) {
    super(name);
  }

  setup(spec: OperatorSpec): void {
    this.gray = spec.input('gray', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 });
    this.small = spec.output('small').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 },
      bounds: { maxByteSpan: (this.bounds.maxWidth >> 1) * (this.bounds.maxHeight >> 1), maxRank: 2 },
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const gray = ctx.receive(this.gray);
    if (gray === undefined) return OK_VOID;
    const layout = checkPackedImage(gray, this.gray, 1);
    if (!layout.ok) return layout;
    const height = gray.shape[0]!;
    const width = gray.shape[1]!;

    const loan = ctx.allocateTensor(this.small, { shape: this.shape.of(height >> 1, width >> 1), dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const stream = ctx.cudaStream();
    const guard = loan.value.write(stream);
    if (!guard.ok) return guard;
    const launched = ctx.backend.launchKernel(stream, downscale2x(gray.data(), guard.value.range, width, height, this.launch));
    if (!launched.ok) return launched;
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    return ctx.emit(this.small, loan.value);
  }
}
