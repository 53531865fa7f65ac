import { type ExecutionContext, Operator, type OperatorSpec, type OutputPort, type Rate } from '@hs/compiler';
import { ErrorCode, MemoryKind, OK_VOID, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';
import type { Photo } from '../bundled-photo.js';
import { FrameStamp } from '../tensor-layouts.js';

/** Options of `CameraSource`. */
export interface CameraSourceOptions {
  /** The photo every frame carries. */
  readonly photo: Photo;
  /** Frame rate (the clock trigger's rate and the output's nominal rate), exact: `Rate.hz(60)`. */
  readonly rate: Rate;
  /** Frames to emit before finishing; a positive integer. */
  readonly frames: number;
}

/**
 * A camera on a clock trigger: at every tick (t0 + k/rate, exact in integer ns) it fills a pinned-host
 * pool slot with one frame, uint8 `[H + 1, W, 4]` (`FrameStamp`: an embedded-data line carrying the
 * frame index and capture time, then the photo), commits it (host writer) and emits it; it finishes
 * after `frames` frames. A tick whose pool is empty gets `ResourceExhausted` from `allocateTensor()`:
 * that frame is dropped (`dropped`, and the pool's `exhaustions`) and the next tick runs on time.
 * Spec: "Exhaustion fails fast", "Size queue entries from nominal rates".
 */
export class CameraSource extends Operator {
  /** Output port `frames`: pinnedHost uint8 `[H + 1, W, 4]`. */
  frames!: OutputPort;
  /** Frames emitted. */
  sent = 0;
  /** Ticks dropped because the pool had no free slot. */
  dropped = 0;
  private readonly shape: readonly number[];
  private readonly stamp = new Float64Array(FrameStamp.values);
  private readonly stampBytes = new Uint8Array(this.stamp.buffer);

  constructor(
    name: string,
    private readonly options: CameraSourceOptions,
  ) {
    super(name);
    this.shape = Object.freeze([options.photo.height + 1, options.photo.width, 4]);
  }

  setup(spec: OperatorSpec): void {
    const { width, height } = this.options.photo;
    this.frames = spec
      .output('frames')
      .producesTensor({
        representation: { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 3 },
        bounds: { maxByteSpan: (height + 1) * width * 4, maxRank: 3 },
        storage: 'runtimePool',
      })
      .nominalRate(this.options.rate);
    spec.temporalContract({ trigger: { clock: this.options.rate } });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.frames, { shape: this.shape, dtype: DType.uint8 });
    if (!loan.ok) {
      if (loan.error.code !== ErrorCode.ResourceExhausted) return loan;
      this.dropped += 1; // every slot is still held downstream: drop this frame, never wait
      return OK_VOID;
    }
    const guard = loan.value.write(null);
    if (!guard.ok) return guard;
    const view = guard.value.tensor.mutableHostView();
    if (!view.ok) return view;
    this.stamp[FrameStamp.index] = this.sent + 1;
    this.stamp[FrameStamp.timeNs] = Number(ctx.activationTime);
    view.value.set(this.stampBytes, 0);
    view.value.set(this.options.photo.data, this.options.photo.width * 4);
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    this.sent += 1;
    if (this.sent === this.options.frames) ctx.finish();
    return ctx.emit(this.frames, loan.value);
  }
}
