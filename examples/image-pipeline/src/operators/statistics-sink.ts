import { type ExecutionContext, type InputPort, Operator, type OperatorSpec } from '@hs/compiler';
import { MemoryKind, OK_VOID, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';
import { checkPackedImage } from './packed-image.js';
import { StagingBuffer } from './staging-buffer.js';

/** Pixel statistics accumulated over every frame a `StatisticsSink` received. */
export interface FrameStatistics {
  /** Frames received. */
  readonly frames: number;
  /** Pixels summed over all frames. */
  readonly pixels: number;
  /** Mean pixel value (0..255); `NaN` before the first frame. */
  readonly mean: number;
  /** Smallest pixel value seen; 255 before the first frame. */
  readonly min: number;
  /** Largest pixel value seen; 0 before the first frame. */
  readonly max: number;
  /** 256 bins: `histogram[v]` counts the pixels equal to `v`. */
  readonly histogram: readonly number[];
}

/**
 * Sink: accumulates the mean, minimum, maximum and 256-bin histogram of every received grey uint8 frame
 * `[H, W]` (CUDA device memory). Each frame is read with `copyToHost` on the operator's compute stream
 * into a staging buffer allocated at construction, awaited inside `compute()` (the explicit host wait;
 * the JS thread does not block).
 *
 * Spec: "Host access: the only blocking calls".
 */
export class StatisticsSink extends Operator {
  /** Input port `frames`: cudaDevice uint8 rank 2. */
  frames!: InputPort;
  private readonly staging: StagingBuffer;
  private readonly histogram = new Float64Array(256);
  private frameCount = 0;
  private pixelCount = 0;
  private sum = 0;
  private min = 255;
  private max = 0;

  /** @param maxFrameBytes largest frame accepted, in bytes; sizes the staging buffer. */
  constructor(name: string, maxFrameBytes: number) {
    super(name);
    this.staging = new StagingBuffer(maxFrameBytes);
  }

  /** A snapshot of the statistics so far. */
  get statistics(): FrameStatistics {
    return {
      frames: this.frameCount,
      pixels: this.pixelCount,
      mean: this.pixelCount === 0 ? Number.NaN : this.sum / this.pixelCount,
      min: this.min,
      max: this.max,
      histogram: Array.from(this.histogram),
    };
  }

  setup(spec: OperatorSpec): void {
    this.frames = spec.input('frames', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 });
  }

  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const frame = ctx.receive(this.frames);
    if (frame === undefined) return OK_VOID;
    const layout = checkPackedImage(frame, this.frames, 1);
    if (!layout.ok) return layout;
    const pixels = this.staging.view(frame.byteSize, this.name);
    if (!pixels.ok) return pixels;
    await frame.copyToHost(pixels.value, ctx.cudaStream()); // a rejection (HsError) fails this activation

    const values = pixels.value;
    let sum = 0;
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      sum += v;
      this.histogram[v]! += 1;
      if (v < this.min) this.min = v;
      if (v > this.max) this.max = v;
    }
    this.sum += sum;
    this.pixelCount += values.length;
    this.frameCount += 1;
    return OK_VOID;
  }
}
