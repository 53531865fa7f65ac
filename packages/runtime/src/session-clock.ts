/**
 * The time source a `RunSession` schedules by: clock triggers, `deferUntil()` and
 * `ExecutionContext.activationTime` all read it. Inject one (`RunSessionOptions.clock`) to make
 * scheduling exact in tests: `ManualClock` moves only when told to.
 * Spec: "Size queue entries from nominal rates" (a clock trigger ticks at its nominal rate).
 * @example
 * // A clock that runs at half speed (say, to watch a demo): now() and timers on a scaled time base.
 * const start = process.hrtime.bigint();
 * const slow: SessionClock = {
 *   now: () => (process.hrtime.bigint() - start) / 2n,
 *   setTimer: (atNs, callback) => setTimeout(callback, Math.max(0, Number(atNs * 2n + start - process.hrtime.bigint()) / 1e6)),
 *   clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout),
 * };
 * const session = unwrap(RunSession.create(plan, { clock: slow }));
 */
export interface SessionClock {
  /** Monotonic time in integer nanoseconds. */
  now(): bigint;
  /**
   * Calls `callback` once, on the JS thread, when `now()` has reached `atNs` (at once, on a later
   * turn, when it already has). Never calls it synchronously from inside `setTimer()`.
   * @returns a handle for `clearTimer()`.
   */
  setTimer(atNs: bigint, callback: () => void): unknown;
  /** Cancels a timer `setTimer()` returned; a fired or cancelled one is ignored. */
  clearTimer(timer: unknown): void;
}

/** Longest delay Node timers accept (ms); a later wake re-arms from there. @internal */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The default clock: `process.hrtime.bigint()` and Node timers (`setTimeout`, rounded up to whole
 * milliseconds, so a timer never fires early; the scheduler re-arms when a timer fires before its time).
 */
export const monotonicClock: SessionClock = {
  now: () => process.hrtime.bigint(),
  setTimer(atNs: bigint, callback: () => void): unknown {
    const delayNs = atNs - process.hrtime.bigint();
    const delayMs = delayNs <= 0n ? 0 : Math.min(MAX_TIMER_MS, Math.ceil(Number(delayNs) / 1e6));
    return setTimeout(callback, delayMs);
  },
  clearTimer(timer: unknown): void {
    clearTimeout(timer as NodeJS.Timeout);
  },
};
