import { type ExecutionContext, Graph, type MissedTickPolicy, Operator, type OperatorSpec, Rate, compile } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { OK_VOID, type Result, unwrap } from '@hs/streams';

/** Figures of one periodic run: what rate it achieved and how far each interval strayed from the period. */
export interface TickFigures {
  /** Activations per second of wall time, first to last. */
  readonly achievedHz: number;
  /** Median and 99th percentile of |interval - period| between consecutive activations, in ns. */
  readonly jitterP50Ns: number;
  readonly jitterP99Ns: number;
  /** Ticks the clock trigger skipped (hs only; `setInterval` has no such count). */
  readonly skippedTicks: number;
}

/** A source with a clock trigger and no ports: it records when each activation ran and finishes after `ticks`. */
class ClockTicker extends Operator {
  readonly at: bigint[] = [];
  constructor(
    private readonly rate: Rate,
    private readonly ticks: number,
    private readonly missedTicks: MissedTickPolicy,
  ) {
    super('ticker');
  }
  setup(spec: OperatorSpec): void {
    spec.temporalContract({ trigger: { clock: this.rate, missedTicks: this.missedTicks } });
  }
  compute(ctx: ExecutionContext): Result<void> {
    this.at.push(process.hrtime.bigint());
    if (this.at.length === this.ticks) ctx.finish();
    return OK_VOID;
  }
}

function figures(at: readonly bigint[], periodNs: number, skippedTicks: number): TickFigures {
  const jitter = at.slice(1).map((t, i) => Math.abs(Number(t - at[i]!) - periodNs)).sort((a, b) => a - b);
  const pick = (p: number): number => jitter[Math.min(jitter.length - 1, Math.floor((p / 100) * jitter.length))] ?? 0;
  const spanNs = Number(at[at.length - 1]! - at[0]!);
  return { achievedHz: ((at.length - 1) * 1e9) / spanNs, jitterP50Ns: pick(50), jitterP99Ns: pick(99), skippedTicks };
}

/**
 * A clock-triggered source at `hz` through a RunSession (host backend, the default monotonic clock), for
 * `ticks` activations, skipping late ticks (the default) or catching up on them.
 */
export async function measureClockSource(hz: number, ticks: number, missedTicks: MissedTickPolicy = 'skip'): Promise<TickFigures> {
  const graph = new Graph('bench-clock');
  const ticker = graph.add(new ClockTicker(Rate.hz(hz), ticks, missedTicks));
  const session = unwrap(RunSession.create(unwrap(compile(graph)), { backend: 'host' }));
  const metrics = await session.run();
  session.dispose();
  return figures(ticker.at, 1e9 / hz, metrics.operators[0]!.skippedTicks);
}

/** The same period with `setInterval` (Node timers, whole milliseconds), the baseline. */
export function measureSetInterval(hz: number, ticks: number): Promise<TickFigures> {
  return new Promise((resolve) => {
    const at: bigint[] = [];
    const timer = setInterval(() => {
      at.push(process.hrtime.bigint());
      if (at.length < ticks) return;
      clearInterval(timer);
      resolve(figures(at, 1e9 / hz, 0));
    }, 1000 / hz);
  });
}
