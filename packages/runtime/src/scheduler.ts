import { type Result, ErrorCode, OK_VOID, err } from '@hs/streams';
import type { Channel } from './channel.js';
import type { OperatorRunner } from './operator-runner.js';
import type { SessionClock } from './session-clock.js';
import type { SessionResources } from './session-resources.js';
import { latencyNowMs } from './latency-clock.js';

/** Idle turns spent polling with `setImmediate` before backing off to a 1 ms timer. */
const SPIN_TURNS = 64;

/**
 * The turn budget: sweeps over the operators within one turn while they make progress, at most this
 * many (amortizes the macrotask hop and the per-turn bookkeeping over hundreds of frames)...
 */
const MAX_SWEEPS_PER_TURN = 1024;

/** ...and at most this long (latency clock, ms), so timers, I/O and boundary callbacks still run every quarter millisecond. */
const TURN_BUDGET_MS = 0.25;

/** Sweeps between two reads of the latency clock for the turn budget (one read amortized over them). */
const SWEEPS_PER_BUDGET_CHECK = 32;

/**
 * The JS-thread scheduler: each turn retires pool slots (one batched event query per pool), then
 * activates every operator its temporal contract makes ready (`OperatorRunner.isReady`: a due clock
 * tick or an arrived trigger entry, required inputs held, `block` edges with room; never a free pool
 * slot), and retries every operator holding a pending loan once the refusing edges of that output have
 * room. Time comes from the session clock: when only time can make progress (a clock tick, a
 * `deferUntil()`), the turn waits on one clock timer at the earliest such time; otherwise it polls
 * with `setImmediate`, backing off to 1 ms. Nothing here blocks or busy-waits: waits are event polls
 * between turns. Spec: "Exhaustion fails fast", "Sized cold, borrowed hot", "Size queue entries from
 * nominal rates" (the temporal contract is the only scheduling authority).
 */
export class Scheduler {
  private stopping = false;
  private idleTurns = 0;
  private settle: ((outcome: Result<void>) => void) | null = null;
  private failure: Result<void> | null = null;
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  /** True when `timer` is a `setImmediate` (the next check phase), false for a back-off `setTimeout`. */
  private timerIsImmediate = false;

  private stopDeadline: NodeJS.Timeout | null = null;
  #abandoned = false;
  /** The armed session-clock timer and the time (ns) it fires at. */
  private clockTimer: unknown = null;
  private clockTimerAt = Infinity;
  /**
   * Latency-clock time (`latencyNowMs()`) the next activation of this turn starts at: the end of the
   * previous one; `NaN` when the previous activation read no clock (an unsampled one, see
   * `RunSessionOptions.latencySampleInterval`): an activation that samples reads its own start.
   */
  private stampMs = 0;
  /**
   * The end-of-input gate, per runner (plan order): the local producers of its connected inputs; a
   * consumer can only have reached its end of input once one of them finished, so the drain check runs
   * only then. `null`: always check (a subscribed input, or a channel without a local producer).
   */
  private readonly endGates: readonly (readonly OperatorRunner[] | null)[];

  constructor(
    private readonly clock: SessionClock,
    private readonly runners: readonly OperatorRunner[],
    private readonly resources: SessionResources,
    /** Channel -> the runner that produces into it. */
    private readonly producerOf: ReadonlyMap<Channel, OperatorRunner>,
    /** Milliseconds the graph gets to drain after a stop request before the run is abandoned. */
    private readonly stopTimeoutMs: number = Infinity,
  ) {
    this.endGates = runners.map((runner) => {
      if (runner.isSource) return [];
      const producers: OperatorRunner[] = [];
      for (const channel of runner.inputChannels()) {
        const producer = producerOf.get(channel);
        if (producer === undefined) return null;
        if (!producers.includes(producer)) producers.push(producer);
      }
      return producers;
    });
  }

  /**
   * Runs until every source finished, every queue drained and no activation is in flight, or a
   * failure. Slots may still be out (leases an operator keeps until its `stop()`, release events in
   * flight): `drainSlots()` waits for them.
   */
  run(): Promise<Result<void>> {
    return new Promise((resolve) => {
      this.settle = resolve;
      const t0 = Number(this.clock.now());
      for (const runner of this.runners) runner.startClock(t0);
      this.schedule(true);
    });
  }

  /** True once the run was abandoned at the stop bound (an activation never settled). */
  get abandoned(): boolean {
    return this.#abandoned;
  }

  /** Stops activating sources; the graph drains and the run settles once every slot is back. */
  requestStop(): void {
    if (!this.stopping && this.settle !== null && Number.isFinite(this.stopTimeoutMs)) {
      this.stopDeadline = setTimeout(this.abandon, this.stopTimeoutMs);
    }
    this.stopping = true;
    for (const runner of this.runners) if (runner.isSource) runner.finished = true;
    this.wake();
  }

  /**
   * Runs a turn at the next event-loop check, replacing a back-off or source-pacing timer that would run
   * it later. Every event that can make an operator ready comes through here: an asynchronous activation
   * settled, a stop request, a boundary callback (a descriptor or a release arrived). Arms nothing when a
   * turn is already due at the next check; never re-enters a turn.
   */
  wake(): void {
    if (this.settle === null) return;
    if (this.timer !== null && !this.timerIsImmediate) {
      clearTimeout(this.timer as NodeJS.Timeout);
      this.timer = null;
    }
    this.schedule(true);
  }

  /** The session-clock timer fired: run the turn now, in place of a pending poll. */
  private readonly onClock = (): void => {
    this.clockTimer = null;
    this.clockTimerAt = Infinity;
    this.clearPoll();
    this.turn();
  };

  private readonly turn = (): void => {
    this.timer = null;
    if (this.settle === null) return;
    this.resources.retire();
    const imported = this.resources.importFailure();
    if (imported !== null) this.fail(imported);
    const now = Number(this.clock.now());
    let progressed = false;
    const turnStartMs = latencyNowMs();
    this.stampMs = turnStartMs;
    // The turn budget (sweep count and time): one clock read per SWEEPS_PER_BUDGET_CHECK sweeps, none per activation.
    for (let pass = 0; pass < MAX_SWEEPS_PER_TURN && this.failure === null; pass++) {
      if (pass !== 0 && pass % SWEEPS_PER_BUDGET_CHECK === 0 && latencyNowMs() - turnStartMs >= TURN_BUDGET_MS) break;
      if (this.sweep(now)) {
        progressed = true;
        continue;
      }
      if (pass === 0 || this.resources.retire() === 0) break;
      // Retirement took its time (a batched event query): the next activation starts after it.
      this.stampMs = latencyNowMs();
      progressed = true;
    }
    if (this.failure !== null) {
      this.finishWhenIdle(this.failure);
      return;
    }
    if (this.isComplete()) {
      this.resolve(OK_VOID);
      return;
    }
    this.schedule(progressed);
  };

  /**
   * Activates every ready operator once, in plan order; returns true when any ran. The latency clock is
   * read once per activation: the end of one activation (`stampMs`, read at the turn's start and after
   * retirement) is the start of the next, so the readiness checks between two activations, tens of
   * nanoseconds, count in the latter's latency.
   */
  private sweep(now: number): boolean {
    let progressed = false;
    let startedMs = this.stampMs;
    const runners = this.runners;
    for (let i = 0; i < runners.length; i++) {
      if (this.failure !== null) break;
      const runner = runners[i] as OperatorRunner;
      if (!runner.isSource && !runner.busy && !runner.finished && runner.pendingCount === 0 && this.mayHaveEnded(i) && runner.inputsDrained(this.isProducerDone)) {
        runner.finishConsumer();
        continue;
      }
      if (!runner.isReady(now)) continue;
      const emittedBefore = runner.emitted;
      const outcome = runner.activate(now, startedMs);
      if (outcome instanceof Promise) {
        progressed = true;
        void outcome.then(this.onSettled);
        startedMs = runner.latency.interval === 1 ? latencyNowMs() : Number.NaN;
      } else {
        startedMs = runner.endedMs;
        if (!outcome.ok) this.fail(outcome);
        // An uncontracted source activation that neither emitted nor finished is idle polling, not
        // progress: let the scheduler back off to a timer instead of spinning the CPU. A clock tick is
        // never polling: it ran because its time came.
        if (!runner.isSource || runner.emitted !== emittedBefore || runner.finished || runner.clock !== null) progressed = true;
      }
    }
    this.stampMs = startedMs;
    return progressed;
  }

  /** The end-of-input gate of runner `index`: true when one of its inputs' producers finished (or one has none here). */
  private mayHaveEnded(index: number): boolean {
    const gate = this.endGates[index];
    if (gate === null || gate === undefined) return true;
    for (let i = 0; i < gate.length; i++) if ((gate[i] as OperatorRunner).finished) return true;
    return false;
  }

  private readonly onSettled = (settled: Result<void>): void => {
    if (!settled.ok) this.fail(settled);
    this.wake();
  };

  private readonly isProducerDone = (channel: Channel): boolean => {
    const producer = this.producerOf.get(channel);
    if (producer !== undefined) return producer.finished && !producer.busy && producer.pendingCount === 0;
    // A subscribed input: its producer is in another process; a stop request ends the import here.
    for (const imported of this.resources.imports.values()) {
      if (imported.channel === channel) return this.stopping || imported.subscription.ended || imported.subscription.failure !== null;
    }
    return true;
  };

  private fail(outcome: Result<void>): void {
    if (this.failure === null) this.failure = outcome;
    this.requestStop();
  }

  /**
   * After a failure: settle once no activation is in flight (in-flight promises must not outlive the
   * run), giving back the leases of every tensor still queued so their slots can return.
   */
  private finishWhenIdle(outcome: Result<void>): void {
    if (this.runners.some((r) => r.busy)) {
      this.schedule(false);
      return;
    }
    for (const runner of this.runners) runner.abandonPending();
    this.discardQueued();
    this.resolve(outcome);
  }

  private isComplete(): boolean {
    const runners = this.runners;
    for (let i = 0; i < runners.length; i++) {
      const runner = runners[i] as OperatorRunner;
      if (!runner.finished || runner.busy || runner.pendingCount > 0) return false;
    }
    return true;
  }

  /**
   * Polls retirement between event-loop turns (never blocking) until every pool slot is back. Called
   * after the operators' `stop()`, which releases leases they held (a retained history).
   * @returns false when slots are still out after `timeoutMs` milliseconds.
   */
  drainSlots(timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    return new Promise((resolve) => {
      let turns = 0;
      const poll = (): void => {
        this.resources.retire();
        if (this.resources.allSlotsReturned) {
          resolve(true);
          return;
        }
        if (performance.now() >= deadline) {
          resolve(false);
          return;
        }
        turns += 1;
        if (turns < SPIN_TURNS) setImmediate(poll);
        else setTimeout(poll, 1);
      };
      poll();
    });
  }

  /**
   * The graph did not drain within the stop bound (an activation waits on device work that never
   * completes, or a queue cannot empty because its consumer's pool never gets slots back): give back the
   * leases of every queued tensor and settle with InvalidState naming what was stuck.
   */
  private readonly abandon = (): void => {
    this.stopDeadline = null;
    if (this.settle === null) return;
    this.#abandoned = true;
    const busy = this.runners.filter((r) => r.busy || !r.finished).map((r) => r.name);
    for (const runner of this.runners) if (!runner.busy) runner.abandonPending();
    this.discardQueued();
    this.resolve(
      err(
        ErrorCode.InvalidState,
        `the graph did not drain within ${this.stopTimeoutMs} ms of the stop request (operators still active: ${busy.join(', ') || 'none'}); device work they wait on never completed`,
      ),
    );
  };

  /** Gives back the leases of every tensor still queued, so their slots can return after a failed or abandoned run. */
  private discardQueued(): void {
    for (const channel of this.resources.channels.values()) channel.discardAll();
  }

  private resolve(outcome: Result<void>): void {
    if (this.stopDeadline !== null) {
      clearTimeout(this.stopDeadline);
      this.stopDeadline = null;
    }
    const settle = this.settle;
    this.settle = null;
    this.clearPoll();
    this.armClock(Infinity);
    settle?.(outcome);
  }

  private clearPoll(): void {
    if (this.timer === null) return;
    if (this.timerIsImmediate) clearImmediate(this.timer as NodeJS.Immediate);
    else clearTimeout(this.timer as NodeJS.Timeout);
    this.timer = null;
  }

  /** Arms the session-clock timer at `atNs` (replacing one armed for another time); `Infinity` disarms it. */
  private armClock(atNs: number): void {
    if (atNs === this.clockTimerAt) return;
    if (this.clockTimer !== null) this.clock.clearTimer(this.clockTimer);
    this.clockTimer = atNs === Infinity ? null : this.clock.setTimer(BigInt(atNs), this.onClock);
    this.clockTimerAt = atNs;
  }

  private schedule(progressed: boolean): void {
    if (this.timer !== null || this.settle === null) return;
    this.idleTurns = progressed ? 0 : this.idleTurns + 1;
    const now = Number(this.clock.now());
    let earliest = Infinity;
    const runners = this.runners;
    for (let i = 0; i < runners.length; i++) earliest = Math.min(earliest, (runners[i] as OperatorRunner).nextWakeNs(now));
    // A wake already due is held back by something else (busy, a full edge): that one wakes the turn.
    const armed = !this.stopping && earliest > now && earliest !== Infinity;
    this.armClock(armed ? earliest : Infinity);
    if (armed && this.waitsOnTimeOnly(now)) return;
    if (this.idleTurns < SPIN_TURNS) {
      this.timerIsImmediate = true;
      this.timer = setImmediate(this.turn);
    } else {
      this.timerIsImmediate = false;
      this.timer = setTimeout(this.turn, 1);
    }
  }

  /**
   * True when nothing but time can make progress before the clock timer: not stopping, the last turn
   * idle, no activation in flight or ready, every slot back (no release event to poll for).
   */
  private waitsOnTimeOnly(now: number): boolean {
    if (this.stopping || this.idleTurns === 0) return false;
    for (const runner of this.runners) if (runner.busy || runner.isReady(now)) return false;
    return this.resources.allSlotsReturned;
  }
}
