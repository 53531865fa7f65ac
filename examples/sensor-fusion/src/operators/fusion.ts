import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, type OutputPort, type Rate } from '@hs/compiler';
import { ErrorCode, MemoryKind, OK_VOID, type Result, err } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';
import { FrameStamp, FusionResult, ImuSample } from '../tensor-layouts.js';

/** Options of `Fusion`. */
export interface FusionOptions {
  /** The camera's frame rate: the nominal rate of the results (one per frame). */
  readonly frameRate: Rate;
  /** The IMU's sample rate: its period is the time step of the first sample, which has no predecessor. */
  readonly imuRate: Rate;
  /** Entries of the IMU window: at least the IMU edge's queue depth, so a frame takes every queued sample. */
  readonly imuWindowEntries: number;
}

const RESULT_SHAPE = Object.freeze([FusionResult.length]);

/**
 * Camera-triggered fusion. Its temporal contract: the `frames` input triggers each activation, and a
 * window on `imu` hands it every IMU sample queued since the previous frame (up to
 * `imuWindowEntries`), consumed at once and released at the end of the activation. It integrates the
 * window's gyro readings to the orientation change over the frame, `sum(omega_j * dt_j)` per axis
 * (rad; dt_j = t_j - t_(j-1) from the samples' own times, the IMU period for the very first sample), and
 * emits one host float64 `[8]` result (`FusionResult`) per frame. A result whose pool is empty is dropped
 * (`droppedResults`) rather than waited for.
 * Spec: "Size queue entries from nominal rates" (the multi-rate camera and IMU example).
 */
export class Fusion extends Operator {
  /** Trigger input `frames`: pinnedHost uint8 `[H + 1, W, 4]` with the `FrameStamp` line. */
  frames!: InputPort;
  /** Window input `imu`: host float64 `[8]` samples (`ImuSample`). */
  imu!: InputPort;
  /** Output port `results`: host float64 `[8]` (`FusionResult`). */
  results!: OutputPort;
  /** Results dropped because the result pool had no free slot. */
  droppedResults = 0;
  /** Yaw integrated over every frame so far, rad. */
  totalYaw = 0;
  /** Time the integrated samples span, s: the sum of every sample's dt. */
  integratedSeconds = 0;
  private readonly imuPeriodNs: number;
  private lastSampleNs = -1;
  private readonly stamp = new Float64Array(FrameStamp.values);
  private readonly stampBytes = new Uint8Array(this.stamp.buffer);
  private readonly sample = new Float64Array(ImuSample.length);
  private readonly sampleBytes = new Uint8Array(this.sample.buffer);
  private readonly result = new Float64Array(FusionResult.length);
  private readonly resultBytes = new Uint8Array(this.result.buffer);

  constructor(
    name: string,
    private readonly options: FusionOptions,
  ) {
    super(name);
    this.imuPeriodNs = Number((options.imuRate.hz.d * 1_000_000_000n) / options.imuRate.hz.n);
  }

  setup(spec: OperatorSpec): void {
    this.frames = spec.input('frames', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 3 });
    this.imu = spec.input('imu', { memoryKind: MemoryKind.Host, dtype: DType.float64, rank: 1 });
    this.results = spec
      .output('results')
      .producesTensor({
        representation: { memoryKind: MemoryKind.Host, dtype: DType.float64, rank: 1 },
        bounds: { maxByteSpan: FusionResult.length * 8, maxRank: 1 },
        storage: 'runtimePool',
      })
      .nominalRate(this.options.frameRate);
    spec.temporalContract({ trigger: { input: this.frames }, windows: [{ input: this.imu, entries: this.options.imuWindowEntries }] });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const frame = ctx.receive(this.frames);
    if (frame === undefined) return err(ErrorCode.InvalidState, `operator ${this.name}: activated without a frame on its trigger input 'frames'`);
    const read = readInto(frame, this.stampBytes);
    if (!read.ok) return read;
    const out = this.result;
    out.fill(0);
    out[FusionResult.frame] = this.stamp[FrameStamp.index]!;
    out[FusionResult.timeNs] = this.stamp[FrameStamp.timeNs]!;
    const samples = ctx.receiveWindow(this.imu);
    for (let i = 0; i < samples.length; i++) {
      const copied = readInto(samples.at(i), this.sampleBytes);
      if (!copied.ok) return copied;
      const s = this.sample;
      const t = s[ImuSample.timeNs]!;
      const dt = (this.lastSampleNs < 0 ? this.imuPeriodNs : t - this.lastSampleNs) / 1e9;
      this.lastSampleNs = t;
      this.integratedSeconds += dt;
      out[FusionResult.roll]! += s[ImuSample.gyro]! * dt;
      out[FusionResult.pitch]! += s[ImuSample.gyro + 1]! * dt;
      out[FusionResult.yaw]! += s[ImuSample.gyro + 2]! * dt;
      if (i === 0) out[FusionResult.firstSample] = s[ImuSample.index]!;
      out[FusionResult.lastSample] = s[ImuSample.index]!;
    }
    out[FusionResult.samples] = samples.length;
    this.totalYaw += out[FusionResult.yaw]!;

    const loan = ctx.allocateTensor(this.results, { shape: RESULT_SHAPE, dtype: DType.float64 });
    if (!loan.ok) {
      if (loan.error.code !== ErrorCode.ResourceExhausted) return loan;
      this.droppedResults += 1;
      return OK_VOID;
    }
    const guard = loan.value.write(null);
    if (!guard.ok) return guard;
    const view = guard.value.tensor.mutableHostView();
    if (!view.ok) return view;
    view.value.set(this.resultBytes);
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    return ctx.emit(this.results, loan.value);
  }
}

/** Copies the first `into.byteLength` bytes of a host-accessible tensor into `into` (no allocation). */
export function readInto(tensor: Tensor, into: Uint8Array): Result<void> {
  const view = tensor.hostView();
  if (!view.ok) return view;
  const bytes = view.value;
  for (let i = 0; i < into.byteLength; i++) into[i] = bytes[i]!;
  return OK_VOID;
}
