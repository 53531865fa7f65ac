import type { MissedTickPolicy, Rate } from '@hs/compiler';

const NS_PER_SECOND = 1_000_000_000;

/**
 * The tick arithmetic of a clock trigger at `rate` = n/d Hz: tick k (k = 1, 2, ...) falls at
 * t0 + k·d/n s, exactly. The due time of the next tick is kept in integer nanoseconds, rounded up, as an
 * integer part plus a remainder in units of 1/n ns, advanced by one period per tick without
 * multiplying (so it stays exact and allocates nothing while the time fits 2^53 ns, about 104 days);
 * only a late turn, which must find how many ticks it missed, divides in BigInt.
 * Policy `skip` (Holoscan's PeriodicCondition no-catch-up): an activation runs for the latest due tick
 * and every earlier tick not run is counted in `skipped`. Policy `catchUp`: every tick runs in turn.
 * Spec: "Size queue entries from nominal rates" (the trigger's period is the accumulation horizon).
 */
export class ClockTrigger {
  /** Ticks missed (the operator was busy or blocked, or the loop was late) and not run. */
  skipped = 0;
  /** Ticks run. */
  ran = 0;
  readonly #policy: MissedTickPolicy;
  /** Period in ns = #periodWhole + #periodRemainder / #n. */
  readonly #n: number;
  readonly #d: bigint;
  readonly #periodWhole: number;
  readonly #periodRemainder: number;
  #t0 = 0;
  /** Index of the next tick not run yet, and its exact time as #dueWhole + #dueRemainder / #n ns past t0. */
  #next = 1;
  #dueWhole = 0;
  #dueRemainder = 0;

  constructor(rate: Rate, policy: MissedTickPolicy) {
    this.#policy = policy;
    const n = rate.hz.n;
    const periodTimesN = rate.hz.d * BigInt(NS_PER_SECOND);
    this.#n = Number(n);
    this.#d = rate.hz.d;
    this.#periodWhole = Number(periodTimesN / n);
    this.#periodRemainder = Number(periodTimesN % n);
  }

  /** Starts the tick sequence at `t0Ns` (integer ns): tick 1 falls one period later. */
  start(t0Ns: number): void {
    this.#t0 = t0Ns;
    this.#seek(1);
  }

  /** Time (integer ns, rounded up) of the next tick not run yet. */
  get nextDueNs(): number {
    return this.#t0 + this.#dueWhole + (this.#dueRemainder > 0 ? 1 : 0);
  }

  /**
   * Accounts an activation at `nowNs` (at or after `nextDueNs`): under `skip` the latest due tick runs
   * and the ticks before it that never ran are counted as skipped; under `catchUp` the next tick runs.
   */
  fire(nowNs: number): void {
    this.ran += 1;
    if (this.#policy === 'catchUp') {
      this.#advance();
      return;
    }
    this.#advance();
    if (nowNs < this.nextDueNs) return;
    // Late: find the latest due tick m = floor((now - t0) · n / (d · 1e9)) and skip to it.
    const latest = (BigInt(nowNs - this.#t0) * BigInt(this.#n)) / (this.#d * BigInt(NS_PER_SECOND));
    const m = Number(latest);
    this.skipped += m - this.#next + 1;
    this.#seek(m + 1);
  }

  #advance(): void {
    this.#next += 1;
    this.#dueWhole += this.#periodWhole;
    this.#dueRemainder += this.#periodRemainder;
    if (this.#dueRemainder >= this.#n) {
      this.#dueWhole += 1;
      this.#dueRemainder -= this.#n;
    }
  }

  /** Sets the next tick to `k` (cold: a start or a late turn). */
  #seek(k: number): void {
    const total = BigInt(k) * this.#d * BigInt(NS_PER_SECOND);
    const n = BigInt(this.#n);
    this.#next = k;
    this.#dueWhole = Number(total / n);
    this.#dueRemainder = Number(total % n);
  }
}
