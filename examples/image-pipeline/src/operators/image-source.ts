import { type ExecutionContext, Operator, type OperatorSpec, type OutputPort } from '@hs/compiler';
import { ErrorCode, HsError, MemoryKind, OK_VOID, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';
import type { ImageBounds, RgbaImage } from '../image-input.js';

/** Slowest accepted source rate, in Hz (one frame every 1000 s). */
export const MIN_RATE_HZ = 0.001;
/** Fastest accepted source rate, in Hz (one frame every microsecond). */
export const MAX_RATE_HZ = 1e6;

/** Options of `ImageSource`. */
export interface ImageSourceOptions {
  /** Decoded images, emitted round-robin; at least one, each within `bounds`. */
  readonly images: readonly RgbaImage[];
  /** Frames to emit before finishing; a positive integer. */
  readonly frames: number;
  /** Nominal emission rate in Hz (frames per second), from `MIN_RATE_HZ` to `MAX_RATE_HZ`. */
  readonly rateHz: number;
  /** Largest image the pipeline accepts; sizes the output pool's slots (`maxWidth * maxHeight * 4` bytes). */
  readonly bounds: ImageBounds;
}

/**
 * Host-only source: emits the decoded images round-robin as RGBA uint8 tensors `[H, W, 4]` from a
 * runtime pool in pinned host memory, filled by the host, then finishes after `frames` frames. The
 * host writer path: `write(null)`, then the bytes are copied into the slot through
 * `tensor.mutableHostView()` (the backend's host view, the write declared to it with `noteHostAccess`),
 * then `commit()` marks the tensor host-complete, so consumers have nothing to wait for.
 *
 * Pacing: the source never sleeps. Frame `k` is due at `t0 + k / rateHz` seconds, where `t0` is the
 * first activation; after each frame the source asks the runtime not to activate it before the next
 * due time (`ctx.deferUntil`). When it falls behind (backpressure held it past a due time), the next
 * frame is due one period after the late one: the schedule re-bases instead of bursting to catch up.
 *
 * Spec: "Emit: commit records readiness" (host-pool path), "Pinned-host readiness follows the writer".
 */
export class ImageSource extends Operator {
  /** Output port `frames`: pinnedHost uint8 `[H, W, 4]`. */
  frames!: OutputPort;
  private readonly options: ImageSourceOptions;
  private readonly periodNs: bigint;
  /** One shape per image, built once, handed to every allocation of that image. */
  private readonly shapes: readonly (readonly number[])[];
  private emitted = 0;
  /** Activation time (ns) the next frame is due; -1 before the first frame. */
  private nextDueNs = -1n;

  /**
   * @throws HsError `ErrorCode.InvalidArgument` when `images` is empty, `frames` is not a positive
   *   integer, `rateHz` is outside `MIN_RATE_HZ`..`MAX_RATE_HZ` (or not a number), or an image lies
   *   outside `bounds`.
   */
  constructor(name: string, options: ImageSourceOptions) {
    super(name);
    if (options.images.length === 0) throw new HsError(ErrorCode.InvalidArgument, `${name}: at least one image is needed`);
    if (!Number.isSafeInteger(options.frames) || options.frames <= 0) {
      throw new HsError(ErrorCode.InvalidArgument, `${name}: frames must be a positive integer, got ${options.frames}`);
    }
    if (!(options.rateHz >= MIN_RATE_HZ && options.rateHz <= MAX_RATE_HZ)) {
      throw new HsError(ErrorCode.InvalidArgument, `${name}: rateHz must be from ${MIN_RATE_HZ} to ${MAX_RATE_HZ} Hz, got ${options.rateHz}`);
    }
    const { minWidth, minHeight, maxWidth, maxHeight } = options.bounds;
    for (const image of options.images) {
      if (image.width > maxWidth || image.height > maxHeight || image.width < minWidth || image.height < minHeight) {
        throw new HsError(
          ErrorCode.InvalidArgument,
          `${name}: image '${image.name}' (${image.width}x${image.height}) is outside the bounds ${minWidth}x${minHeight} to ${maxWidth}x${maxHeight}`,
        );
      }
    }
    this.options = options;
    this.periodNs = BigInt(Math.round(1e9 / options.rateHz));
    this.shapes = options.images.map((image) => Object.freeze([image.height, image.width, 4]));
  }

  setup(spec: OperatorSpec): void {
    const { maxWidth, maxHeight } = this.options.bounds;
    this.frames = spec.output('frames').producesTensor({
      representation: { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 3 },
      bounds: { maxByteSpan: maxWidth * maxHeight * 4, maxRank: 3 },
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const index = this.emitted % this.options.images.length;
    const image = this.options.images[index]!;

    const loan = ctx.allocateTensor(this.frames, { shape: this.shapes[index]!, dtype: DType.uint8 });
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
    view.value.set(image.data);
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    const published = ctx.emit(this.frames, loan.value);
    if (!published.ok) return published;

    this.emitted += 1;
    if (this.emitted === this.options.frames) {
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
