import { ErrorCode, HsError } from '@hs/streams';
import type { SessionClock } from './session-clock.js';

interface ManualTimer {
  readonly atNs: bigint;
  readonly order: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/**
 * A `SessionClock` that moves only when told to, so a test of clock triggers is exact: nothing
 * depends on how fast the machine is. `advanceTo(t)` fires every timer due by `t` in time order (ties
 * in the order they were set), with `now()` reading each timer's own time while its callback runs; a
 * timer a callback sets for a time already reached fires in the same advance. Inject it with
 * `RunSessionOptions.clock`. Spec: "Size queue entries from nominal rates".
 * @example
 * ```ts
 * import { ManualClock } from '@hs/runtime';
 *
 * const clock = new ManualClock(); // inject it: RunSession.create(plan, { clock })
 * const fired: bigint[] = [];
 * clock.setTimer(2_000_000n, () => fired.push(clock.now()));
 * clock.setTimer(1_000_000n, () => fired.push(clock.now()));
 * const count = clock.advanceTo(5_000_000n); // t = 5 ms: both timers fire, in time order, each at its own time
 * console.log(`${count} timers fired at ${fired.join(', ')} ns; next timer: ${clock.nextTimerAt}`);
 * ```
 */
export class ManualClock implements SessionClock {
  #now: bigint;
  #timers: ManualTimer[] = [];
  #order = 0;

  /** @param startNs the initial time in integer nanoseconds (default 0). */
  constructor(startNs: bigint = 0n) {
    this.#now = startNs;
  }

  now(): bigint {
    return this.#now;
  }

  setTimer(atNs: bigint, callback: () => void): unknown {
    const timer: ManualTimer = { atNs, order: this.#order++, callback, cancelled: false };
    this.#timers.push(timer);
    return timer;
  }

  clearTimer(timer: unknown): void {
    if (typeof timer === 'object' && timer !== null && 'cancelled' in timer) (timer as ManualTimer).cancelled = true;
  }

  /** Time of the earliest pending timer, or `null` when none is pending. */
  get nextTimerAt(): bigint | null {
    return this.#next()?.atNs ?? null;
  }

  /**
   * Moves time forward to `timeNs`, firing each timer due by then, earliest first.
   * @returns the number of timers fired.
   * @throws HsError `InvalidArgument` when `timeNs` is before `now()` (a monotonic clock never goes back).
   */
  advanceTo(timeNs: bigint): number {
    if (timeNs < this.#now) throw new HsError(ErrorCode.InvalidArgument, `ManualClock.advanceTo(${timeNs}): time ${this.#now} ns has passed; a monotonic clock never goes back`);
    let fired = 0;
    for (let timer = this.#next(); timer !== undefined && timer.atNs <= timeNs; timer = this.#next()) {
      timer.cancelled = true;
      if (timer.atNs > this.#now) this.#now = timer.atNs;
      fired += 1;
      timer.callback();
    }
    this.#now = timeNs;
    return fired;
  }

  /**
   * A loop that was late: moves time to `timeNs` at once, then fires every timer due by then, each
   * reading `now() === timeNs` (what a clock trigger sees when the event loop ran late).
   * @returns the number of timers fired.
   * @throws HsError `InvalidArgument` when `timeNs` is before `now()`.
   */
  lateTo(timeNs: bigint): number {
    if (timeNs < this.#now) throw new HsError(ErrorCode.InvalidArgument, `ManualClock.lateTo(${timeNs}): time ${this.#now} ns has passed; a monotonic clock never goes back`);
    this.#now = timeNs;
    return this.advanceTo(timeNs);
  }

  /** `advanceTo(now() + deltaNs)`. */
  advanceBy(deltaNs: bigint): number {
    return this.advanceTo(this.#now + deltaNs);
  }

  #next(): ManualTimer | undefined {
    this.#timers = this.#timers.filter((t) => !t.cancelled);
    let best: ManualTimer | undefined;
    for (const t of this.#timers) if (best === undefined || t.atNs < best.atNs || (t.atNs === best.atNs && t.order < best.order)) best = t;
    return best;
  }
}
