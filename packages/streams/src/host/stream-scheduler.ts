import { ErrorCode, HsError } from '../errors.js';
import type { HostStream, SyncWaiter } from './host-stream.js';
import type { SeededRandom } from './seeded-random.js';
import { KernelArguments } from './kernel-arguments.js';
import type { HostOp, OpPool } from './stream-op.js';

/** `auto`: work runs in batches on later macrotasks; `manual`: only `step()`/`runUntilIdle()` run it. */
export type SchedulingMode = 'auto' | 'manual';

/** Most ops one automatic batch runs before yielding the event loop to other tasks. */
const BATCH_OPS = 65_536;
/**
 * Milliseconds between re-checks of value waits (`waitValue64`) that are blocked in auto mode: their
 * target may be written by the host or another process, which no queued op announces.
 */
export const VALUE_WAIT_POLL_MS = 1;

/** Callbacks the scheduler makes into its backend. */
export interface SchedulerHooks {
  /** A host wait completed; the host is now ordered after `clock` (ordering checker only). */
  joinHost(clock: number[]): void;
  /** An op threw; the stream records the fault. */
  fault(stream: HostStream, error: HsError): void;
}

/**
 * Executes queued stream work: never inside the enqueueing call. In `auto` mode one macrotask
 * (`setImmediate`) drains everything runnable across all streams; in `manual` mode nothing runs until
 * `step()` or `runUntilIdle()`. With a seeded generator, each op's stream is drawn at random from the
 * runnable ones, so a seed reproduces an interleaving; without one, streams run round-robin.
 */
export class StreamScheduler {
  /** Streams with queued work (possibly blocked on a wait). */
  private active: HostStream[] = [];
  private readonly scratch: HostStream[] = [];
  private cursor = 0;
  private immediate: NodeJS.Immediate | null = null;
  private running = false;
  private readonly kernelArgs = new KernelArguments();
  private readonly drainBound = (): void => this.drain();
  /** The one timer that re-checks blocked value waits (made on first need, then `refresh()`ed). */
  private valuePoll: NodeJS.Timeout | null = null;
  private valuePollArmed = false;
  private readonly valuePollBound = (): void => {
    this.valuePollArmed = false;
    if (this.immediate === null && !this.running) this.drain();
  };

  constructor(
    private readonly mode: SchedulingMode,
    private readonly random: SeededRandom | null,
    private readonly ops: OpPool,
    private readonly hooks: SchedulerHooks,
  ) {}

  /** True while a kernel or host function (or any op) is executing. */
  get executing(): boolean {
    return this.running;
  }

  /** Appends `op` to `stream` and arranges for it to run later. */
  enqueue(stream: HostStream, op: HostOp): void {
    if (stream.tail === null) stream.head = op;
    else stream.tail.next = op;
    stream.tail = op;
    stream.enqueued++;
    if (!stream.active) {
      stream.active = true;
      this.active.push(stream);
    }
    if (this.mode === 'auto' && this.immediate === null && !this.running) {
      this.immediate = setImmediate(this.drainBound);
    }
  }

  /**
   * Resolves when `stream.completed >= position`; rejects with the stream's fault (DeviceError) when an op
   * before `position` threw, and with the disposal error (InvalidState) when the backend is disposed first.
   */
  wait(stream: HostStream, position: number, clock: number[] | null): Promise<void> {
    if (stream.completed >= position) {
      const fault = this.settle(stream, position, clock);
      return fault === null ? Promise.resolve() : Promise.reject(fault);
    }
    return new Promise<void>((resolve, reject) => {
      stream.waiters.push({ position, resolve, reject, clock } satisfies SyncWaiter);
    });
  }

  /**
   * Runs one op: of `stream` when given (false when its next op is blocked or it has none), otherwise of a
   * runnable stream picked by the seed or round-robin (false when nothing is runnable).
   * @throws HsError InvalidState when called from inside a kernel or host function.
   */
  step(stream?: HostStream): boolean {
    this.assertNotExecuting('step');
    const next = stream ?? this.pick();
    if (next === null || next.head === null || !next.head.runnable) return false;
    this.runOne(next);
    this.scheduleLeftovers();
    return true;
  }

  /**
   * Runs ops until nothing is runnable; returns how many ran.
   * @throws HsError InvalidState when called from inside a kernel or host function.
   */
  runUntilIdle(): number {
    this.assertNotExecuting('runUntilIdle');
    const ran = this.runBatch(Number.POSITIVE_INFINITY);
    this.scheduleLeftovers();
    return ran;
  }

  /** In auto mode, makes sure work enqueued by ops run from `step()` gets a batch of its own. */
  private scheduleLeftovers(): void {
    if (this.mode === 'auto' && this.immediate === null && this.active.length > 0) {
      this.immediate = setImmediate(this.drainBound);
    }
  }

  /**
   * In auto mode, arms the poll timer when a stream's next op is a value wait that is still blocked; the
   * timer keeps the process alive while such a wait exists (as a pending device wait would).
   */
  private pollBlockedValueWaits(): void {
    if (this.mode !== 'auto' || this.valuePollArmed) return;
    const active = this.active;
    let blocked = false;
    for (let i = 0; i < active.length && !blocked; i++) {
      const head = (active[i] as HostStream).head;
      if (head !== null && head.blockedOnValue) blocked = true;
    }
    if (!blocked) return;
    this.valuePollArmed = true;
    if (this.valuePoll === null) this.valuePoll = setTimeout(this.valuePollBound, VALUE_WAIT_POLL_MS);
    else this.valuePoll.refresh();
  }

  /** Drops all queued work and settles every pending host wait with `error`. */
  dispose(error: HsError): void {
    if (this.immediate !== null) {
      clearImmediate(this.immediate);
      this.immediate = null;
    }
    if (this.valuePoll !== null) {
      clearTimeout(this.valuePoll);
      this.valuePoll = null;
      this.valuePollArmed = false;
    }
    for (const s of this.active) {
      for (let op = s.head; op !== null; ) {
        const next = op.next;
        this.ops.give(op);
        op = next;
      }
      s.head = s.tail = null;
      s.active = false;
      for (let i = s.waiterHead; i < s.waiters.length; i++) (s.waiters[i] as SyncWaiter).reject(error);
      s.waiters.length = 0;
      s.waiterHead = 0;
    }
    this.active = [];
  }

  private drain(): void {
    this.immediate = null;
    if (this.runBatch(BATCH_OPS) >= BATCH_OPS && this.immediate === null) {
      this.immediate = setImmediate(this.drainBound);
      return;
    }
    this.pollBlockedValueWaits();
  }

  private runBatch(budget: number): number {
    let ran = 0;
    if (this.random !== null) {
      for (let s = this.pick(); s !== null && ran < budget; s = ran < budget ? this.pick() : null) {
        this.runOne(s);
        ran++;
      }
      return ran;
    }
    let progress = true;
    while (progress && ran < budget) {
      progress = false;
      const active = this.active;
      for (let i = 0; i < active.length && ran < budget; i++) {
        const s = active[i] as HostStream;
        while (s.head !== null && s.head.runnable && ran < budget) {
          this.runOne(s);
          ran++;
          progress = true;
        }
      }
      this.compact();
    }
    return ran;
  }

  /** Next stream to run one op of, or null when nothing is runnable. */
  private pick(): HostStream | null {
    this.compact();
    const active = this.active;
    if (this.random === null) {
      for (let k = 0; k < active.length; k++) {
        const i = (this.cursor + k) % active.length;
        const s = active[i] as HostStream;
        if ((s.head as HostOp).runnable) {
          this.cursor = i + 1;
          return s;
        }
      }
      return null;
    }
    const runnable = this.scratch;
    runnable.length = 0;
    for (const s of active) if ((s.head as HostOp).runnable) runnable.push(s);
    if (runnable.length === 0) return null;
    return runnable[this.random.nextInt(runnable.length)] as HostStream;
  }

  /** Removes streams whose queues emptied, keeping the order of the others. */
  private compact(): void {
    const active = this.active;
    let w = 0;
    for (let r = 0; r < active.length; r++) {
      const s = active[r] as HostStream;
      if (s.head !== null) active[w++] = s;
      else s.active = false;
    }
    if (w !== active.length) active.length = w;
  }

  private runOne(stream: HostStream): void {
    const op = stream.head as HostOp;
    stream.head = op.next;
    if (stream.head === null) stream.tail = null;
    this.running = true;
    try {
      op.execute(this.kernelArgs);
    } catch (cause) {
      const text = cause instanceof Error ? cause.message : String(cause);
      this.hooks.fault(
        stream,
        new HsError(ErrorCode.DeviceError, `${op.describe()} on stream "${stream.label}" threw: ${text}`, { cause }),
      );
    } finally {
      this.running = false;
    }
    stream.completed++;
    this.ops.give(op);
    if (stream.waiterHead < stream.waiters.length) this.settleWaiters(stream);
  }

  private settleWaiters(stream: HostStream): void {
    const waiters = stream.waiters;
    while (stream.waiterHead < waiters.length) {
      const w = waiters[stream.waiterHead] as SyncWaiter;
      if (stream.completed < w.position) return;
      stream.waiterHead++;
      const fault = this.settle(stream, w.position, w.clock);
      if (fault === null) w.resolve();
      else w.reject(fault);
    }
    waiters.length = 0;
    stream.waiterHead = 0;
  }

  /** Joins the host to `clock` and returns the fault before `position` (null when none). */
  private settle(stream: HostStream, position: number, clock: number[] | null): HsError | null {
    if (clock !== null) this.hooks.joinHost(clock);
    return stream.faultBefore(position);
  }

  private assertNotExecuting(what: string): void {
    if (this.running) {
      throw new HsError(ErrorCode.InvalidState, `${what}() was called from inside a kernel or host function; call it from ordinary host code`);
    }
  }
}
