import { type ExecutionContext, Operator, type OperatorSpec, type OutputPort, type Rate } from '@hs/compiler';
import { ErrorCode, MemoryKind, OK_VOID, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';
import type { ImuModel } from '../imu-model.js';
import { ImuSample } from '../tensor-layouts.js';

/** Options of `ImuSource`. */
export interface ImuSourceOptions {
  /** Where the readings come from. */
  readonly model: ImuModel;
  /** Sample rate (the clock trigger's rate and the output's nominal rate): `Rate.hz(1000)`. */
  readonly rate: Rate;
  /** Samples to emit before finishing; a positive integer. */
  readonly samples: number;
}

const SAMPLE_SHAPE = Object.freeze([ImuSample.length]);

/**
 * An IMU on a clock trigger: at every tick it takes the model's next reading and emits it as one
 * host-memory float64 `[8]` tensor (`ImuSample`: index, time in session-clock ns, gyro, accel) from its
 * runtime pool; it finishes after `samples` samples. Float64 rather than float32 so that the index and
 * the nanosecond time travel exactly in the same tensor as the reading. An empty pool drops the tick
 * (`dropped`; the pool counts `exhaustions`) without consuming a reading.
 * Spec: "Exhaustion fails fast", "Size queue entries from nominal rates".
 */
export class ImuSource extends Operator {
  /** Output port `samples`: host float64 `[8]`. */
  samples!: OutputPort;
  /** Samples emitted. */
  sent = 0;
  /** Ticks dropped because the pool had no free slot. */
  dropped = 0;
  private readonly sample = new Float64Array(ImuSample.length);
  private readonly sampleBytes = new Uint8Array(this.sample.buffer);
  private readonly reading = this.sample.subarray(ImuSample.gyro);

  constructor(
    name: string,
    private readonly options: ImuSourceOptions,
  ) {
    super(name);
  }

  setup(spec: OperatorSpec): void {
    this.samples = spec
      .output('samples')
      .producesTensor({
        representation: { memoryKind: MemoryKind.Host, dtype: DType.float64, rank: 1 },
        bounds: { maxByteSpan: ImuSample.length * 8, maxRank: 1 },
        storage: 'runtimePool',
      })
      .nominalRate(this.options.rate);
    spec.temporalContract({ trigger: { clock: this.options.rate } });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.samples, { shape: SAMPLE_SHAPE, dtype: DType.float64 });
    if (!loan.ok) {
      if (loan.error.code !== ErrorCode.ResourceExhausted) return loan;
      this.dropped += 1;
      return OK_VOID;
    }
    const guard = loan.value.write(null);
    if (!guard.ok) return guard;
    const view = guard.value.tensor.mutableHostView();
    if (!view.ok) return view;
    this.sample[ImuSample.index] = this.sent + 1;
    this.sample[ImuSample.timeNs] = Number(ctx.activationTime);
    this.options.model.next(this.reading);
    view.value.set(this.sampleBytes);
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    this.sent += 1;
    if (this.sent === this.options.samples) ctx.finish();
    return ctx.emit(this.samples, loan.value);
  }
}
