import type { ExecutionContext, ExecutionPlan, MissedTickPolicy, OperatorSpec, OutputPort, Rate } from '@hs/compiler';
import { Operator } from '@hs/compiler';
import type { TensorLoan, TensorRequest } from '@hs/pool';
import { ErrorCode, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';
import { RunSession, type RunMetrics, type RunSessionOptions } from '../src/index.js';
import { ManualClock } from '../src/index.js';

export const MS = 1_000_000n;
export const SECOND = 1_000_000_000n;

/** Clock-triggered test operators and a manual-clock run loop, shared by the scheduling tests. */

/** One uint32 sample per tensor, in host memory. */
export const SAMPLE = { representation: { memoryKind: MemoryKind.Host, dtype: DType.uint32, rank: 1 }, bounds: { maxByteSpan: 4 }, storage: 'runtimePool' } as const;

export function valueOf(tensor: Tensor): number {
  const bytes = unwrap(tensor.hostView());
  return new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
}

/** A clock-triggered source emitting 1, 2, ... `count`; records each activation time and each exhaustion. */
export class ClockSource extends Operator {
  out!: OutputPort;
  sent = 0;
  exhausted = 0;
  readonly at: bigint[] = [];
  protected request: TensorRequest = { shape: [1], dtype: DType.uint32 };
  constructor(
    name: string,
    readonly rate: Rate,
    readonly count: number,
    private readonly missedTicks: MissedTickPolicy = 'skip',
  ) {
    super(name);
  }
  setup(spec: OperatorSpec): void {
    this.out = spec.output('out').producesTensor(SAMPLE).nominalRate(this.rate);
    spec.temporalContract({ trigger: { clock: this.rate, missedTicks: this.missedTicks } });
  }
  compute(ctx: ExecutionContext): Result<void> {
    this.at.push(ctx.activationTime);
    const loan = ctx.allocateTensor(this.out, this.request);
    if (!loan.ok) {
      if (loan.error.code !== ErrorCode.ResourceExhausted) return loan;
      this.exhausted += 1; // drop this tick's sample; the next tick runs on time
      return OK_VOID;
    }
    this.fill(ctx, loan.value, ++this.sent);
    if (this.sent === this.count) ctx.finish();
    return ctx.emit(this.out, loan.value);
  }
  /** Writes sample `value` into the loan and commits it. */
  protected fill(_ctx: ExecutionContext, loan: TensorLoan, value: number): void {
    const guard = unwrap(loan.write(null));
    const bytes = unwrap(guard.tensor.mutableHostView());
    new DataView(bytes.buffer, bytes.byteOffset, 4).setUint32(0, value, true);
    unwrap(guard.commit());
  }
}

/** A clock-triggered source of 64-byte device frames (frame i filled with i), written on its stream. */
export class DeviceClockSource extends ClockSource {
  protected override request: TensorRequest = { shape: [64], dtype: DType.uint8 };
  override setup(spec: OperatorSpec): void {
    this.out = spec
      .output('out')
      .producesTensor({ representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 }, bounds: { maxByteSpan: 64 }, storage: 'runtimePool' })
      .nominalRate(this.rate);
    spec.temporalContract({ trigger: { clock: this.rate } });
  }
  protected override fill(ctx: ExecutionContext, loan: TensorLoan, value: number): void {
    const guard = unwrap(loan.write(ctx.cudaStream()));
    unwrap(ctx.backend.memsetAsync(ctx.cudaStream(), guard.range, value));
    unwrap(guard.commit());
  }
}

export const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** How a manual-clock loop moves time: `late` jumps to a later time than a timer's (a late loop), `step` observes each turn. */
export interface ClockTurns {
  late?: (next: bigint) => bigint | null;
  step?: (now: bigint) => void;
}

/**
 * Runs `session` on its manual `clock`: fires each clock timer at its exact time (or, with `late`, jumps
 * there as a late loop would) and lets the graph settle after each, until the run ends.
 */
export async function runSessionOnClock(session: RunSession, clock: ManualClock, { late, step }: ClockTurns = {}): Promise<RunMetrics> {
  let done = false;
  const running = session.run().finally(() => {
    done = true;
  });
  for (let turns = 0; !done && turns < 100_000; turns++) {
    const next = clock.nextTimerAt;
    if (next !== null) {
      const jump = late?.(next) ?? null;
      if (jump === null) clock.advanceTo(next);
      else clock.lateTo(jump);
    }
    step?.(clock.now());
    await settle();
  }
  return running;
}

/** Creates a host session for `plan` on a new manual clock, runs it with `runSessionOnClock`, and disposes it. */
export async function runOnClock(plan: ExecutionPlan, options: Omit<RunSessionOptions, 'clock'> & ClockTurns = {}): Promise<RunMetrics> {
  const clock = new ManualClock();
  const { late, step, ...sessionOptions } = options;
  const session = unwrap(RunSession.create(plan, { backend: 'host', ...sessionOptions, clock }));
  const metrics = await runSessionOnClock(session, clock, { late, step });
  session.dispose();
  return metrics;
}

export function operator(metrics: RunMetrics, name: string): RunMetrics['operators'][number] {
  return metrics.operators.find((o) => o.name === name)!;
}

