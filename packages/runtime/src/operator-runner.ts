import { computeScope } from './compute-scope.js';
import type { ExecutionContext, InputPort, Operator, OutputPort, PlanOperator, PortRateView, TensorWindow } from '@hs/compiler';
import type { TensorLoan, TensorRequest } from '@hs/pool';
import { type Backend, type Err, type Event, type Result, type Stream, ErrorCode, HsError, OK_VOID, err, errWithContext } from '@hs/streams';
import type { Tensor } from '@hs/tensor';
import type { Channel } from './channel.js';
import { InputBinding, type InputWiring } from './input-binding.js';
import { LatencyWindow } from './latency-window.js';
import { ActivationLoans, OutputBinding, type OutputWiring } from './output-binding.js';
import { hostWaitOutcome } from './host-wait-outcome.js';
import { ClockTrigger } from './clock-trigger.js';
import { latencyNowMs } from './latency-clock.js';

/** Wiring handed to a runner by the session: channels and pools by port name. */
export interface RunnerWiring {
  readonly inputs: readonly InputWiring[];
  readonly outputs: readonly OutputWiring[];
  /** Rate view of each rated port, by port name (inputs and outputs share one namespace). */
  readonly rates: ReadonlyMap<string, PortRateView>;
  /** The scenario whose windows and selectors the inputs' `read` follow (for error texts). */
  readonly scenario: string;
  /** Activations per latency sample (`RunSessionOptions.latencySampleInterval`; default 1: every activation). */
  readonly latencySampleInterval?: number;
}

/** How an activation ended, reported to the scheduler. */
export type ActivationOutcome = Result<void>;

/**
 * One operator's scheduler-facing state and its `ExecutionContext`. The context object is reused for
 * every activation (no per-frame allocation); its stream is borrowable only while `compute()` runs.
 * The stream contract is delegated: each input port's consumer half to an `InputBinding` (readiness
 * wait, release-stream registration, release at activation end), each output port's producer half to
 * an `OutputBinding` (allocate through the pool, emit, one lease per edge, publish).
 *
 * When it may run is the operator's temporal contract (`PlanOperator.schedule`), and nothing else: a
 * trigger input that received an entry, or a due clock tick (`ClockTrigger`), with every `required`
 * input holding an entry and every `block` edge having room. Without a contract: every connected input
 * holds an entry (a source: whenever `deferUntil()` allows). Free pool slots gate nothing: an empty
 * pool is `ResourceExhausted` from `allocateTensor()`, a value the operator handles.
 * Spec: "Receive: the tensor arrives pre-ordered", "Host access" (the stream-less consumer wait),
 * "Size queue entries from nominal rates" (the temporal contract is the only scheduling authority),
 * "Exhaustion fails fast".
 */
export class OperatorRunner implements ExecutionContext {
  readonly name: string;
  readonly operator: Operator;
  readonly isSource: boolean;
  private readonly stream: Stream | null;
  private readonly inputs: readonly InputBinding[];
  private readonly outputs: readonly OutputBinding[];
  private readonly loans = new ActivationLoans();
  private readonly rates: ReadonlyMap<string, PortRateView>;
  private readonly scenario: string;
  /** The clock trigger, or `null`. */
  readonly clock: ClockTrigger | null;
  /** The trigger input, or `null`. */
  private readonly trigger: InputBinding | null;
  /** Inputs that must hold an entry, besides the trigger. */
  private readonly required: readonly InputBinding[];
  /** True when the plan has a temporal contract for it. */
  private readonly contracted: boolean;
  /** A host-only consumer's readiness events of one activation (reused). */
  private readonly hostWaits: Event[] = [];
  private active = false;
  private activationNs = 0;
  /**
   * When the last activation ended (`latencyNowMs()`): the start of the next one the scheduler runs in
   * the same turn; `NaN` when it was not a latency sample (no clock was read).
   */
  endedMs = 0;
  /** Activations completed (the latency window counts samples only). */
  activations = 0;
  /** The port and binding the last `output()` lookup found (an operator mostly names one port at a time). */
  private lastOutputPort: OutputPort | null = null;
  private lastOutput: OutputBinding | null = null;
  private notBeforeNs = 0;
  /** True while an asynchronous compute() or a host readiness wait is in flight. */
  busy = false;
  /** True once the operator will not be activated again. */
  finished = false;
  /** compute() latency in ms, including any host readiness wait before it (every `latency.interval`-th activation). */
  readonly latency: LatencyWindow;
  /** Tensors this operator emitted. */
  emitted = 0;
  /** Outputs holding a pending loan; while non-zero the next activation is a retry. */
  pendingCount = 0;
  /** Retry activations run (a pending loan offered back). */
  retries = 0;

  constructor(
    readonly backend: Backend,
    planned: PlanOperator,
    stream: Stream | null,
    wiring: RunnerWiring,
  ) {
    this.name = planned.name;
    this.operator = planned.operator;
    this.stream = stream;
    this.inputs = wiring.inputs.map((i) => new InputBinding(backend, stream, i));
    this.outputs = wiring.outputs.map((o) => new OutputBinding(planned.name, stream, o));
    this.isSource = this.inputs.every((i) => i.channel === null);
    this.rates = wiring.rates;
    this.scenario = wiring.scenario;
    this.latency = new LatencyWindow(undefined, wiring.latencySampleInterval);
    const schedule = planned.schedule;
    this.contracted = schedule !== null;
    const trigger = schedule?.trigger;
    this.clock = trigger?.kind === 'clock' ? new ClockTrigger(trigger.rate, trigger.missedTicks) : null;
    this.trigger = trigger?.kind === 'input' ? (this.inputs.find((i) => i.name === trigger.port) ?? null) : null;
    this.required = (schedule?.required ?? []).flatMap((name) => this.inputs.filter((i) => i.name === name && i !== this.trigger));
  }

  // ---- ExecutionContext -------------------------------------------------------------------------
  /** Activation time in ns on the session clock (`RunSessionOptions.clock`). */
  get activationTime(): bigint {
    return BigInt(this.activationNs);
  }

  cudaStream(): Stream {
    if (this.active && this.stream !== null) return this.stream;
    throw this.streamRefusal();
  }

  /** Why `cudaStream()` has no stream to lend: outside compute(), or a host-only operator. */
  private streamRefusal(): HsError {
    return this.active
      ? new HsError(ErrorCode.NotSupported, `operator ${this.name} is host-only and has no planned CUDA stream; declare a CUDA memory kind or call spec.requireCudaStream() in setup()`)
      : new HsError(ErrorCode.InvalidState, `operator ${this.name}: cudaStream() used outside compute(); a borrowed stream is valid only during the activation`);
  }

  receive(port: InputPort): Tensor | undefined {
    this.assertActive('receive');
    const input = this.readOnce(port, 'receive');
    if (input.read === 'window') {
      throw new HsError(ErrorCode.InvalidState, `operator ${this.name}: input ${port.name} has a window; read its entries with ctx.receiveWindow(${port.name})`);
    }
    if (input.read === 'selector') return input.windowAt(input.windowLength - 1);
    return input.current;
  }

  receiveWindow(port: InputPort): TensorWindow {
    this.assertActive('receiveWindow');
    const input = this.readOnce(port, 'receiveWindow');
    if (input.read !== 'window' && input.read !== 'selector') {
      throw new HsError(
        ErrorCode.InvalidState,
        `operator ${this.name}: input ${port.name} has no window or selector in scenario ${this.scenario}; declare one in spec.temporalContract({ windows: [{ input, entries }] }) or read it with ctx.receive()`,
      );
    }
    return input.window;
  }

  allocateTensor(port: OutputPort, request: TensorRequest): Result<TensorLoan> {
    this.assertActive('allocateTensor');
    return this.output(port).allocate(request, this.loans);
  }

  emit(port: OutputPort, loan: TensorLoan): Result<void> {
    this.assertActive('emit');
    return this.counted(this.output(port).emit(loan, this.loans));
  }

  retainPending(port: OutputPort, loan: TensorLoan): Result<void> {
    this.assertActive('retainPending');
    const retained = this.output(port).retain(loan, this.loans);
    if (retained.ok) this.pendingCount += 1;
    return retained;
  }

  pendingLoan(port: OutputPort): TensorLoan | undefined {
    this.assertActive('pendingLoan');
    return this.output(port).offered;
  }

  emitTensor(port: OutputPort, tensor: Tensor): Result<void> {
    this.assertActive('emitTensor');
    return this.counted(this.output(port).emitTensor(tensor));
  }

  rate(port: InputPort | OutputPort): PortRateView | null {
    const view = this.rates.get(port.name);
    if (view !== undefined) return view;
    for (const input of this.inputs) if (input.name === port.name) return null;
    for (const output of this.outputs) if (output.name === port.name) return null;
    throw new HsError(ErrorCode.NotFound, `operator ${this.name} has no port named ${port.name}`);
  }

  finish(): void {
    this.assertActive('finish');
    if (!this.isSource) {
      throw new HsError(
        ErrorCode.InvalidState,
        `operator ${this.name}: finish() is for source operators; a consumer ends when its producers have finished and its inputs drained`,
      );
    }
    this.finished = true;
  }

  /** Defers the next activation until the monotonic time `timeNs` (used to pace a source at its nominal rate). */
  deferUntil(timeNs: bigint): void {
    this.assertActive('deferUntil');
    this.notBeforeNs = Number(timeNs);
  }

  // ---- scheduler side ---------------------------------------------------------------------------

  /** The channels of its connected inputs (cold: the scheduler builds its end-of-input gates from them). */
  inputChannels(): Channel[] {
    return this.inputs.flatMap((input) => (input.channel === null ? [] : [input.channel]));
  }

  /** Starts the clock trigger's tick sequence at the run's start time `t0Ns` (session clock, integer ns). */
  startClock(t0Ns: number): void {
    this.clock?.start(t0Ns);
  }

  /**
   * The next time (session clock, integer ns) after `nowNs` at which time alone could make the operator
   * ready: its next clock tick, or its `deferUntil()` time; `Infinity` when none is ahead (a tick already
   * due waits for what holds it back, an arrival or room, which wakes the scheduler itself).
   */
  nextWakeNs(nowNs: number): number {
    if (this.finished) return Infinity;
    const due = this.clock === null ? this.notBeforeNs : Math.max(this.clock.nextDueNs, this.notBeforeNs);
    return due > nowNs ? due : Infinity;
  }

  /**
   * True when the operator can run now. With a pending loan: when every refusing edge of each pending
   * output has room (a retry, even after `finish()`). Otherwise, by its temporal contract: its clock
   * tick is due, or its trigger input received an entry (without a contract: every connected input
   * holds an entry; a source runs whenever `deferUntil()` allows); every `required` input holds an
   * entry; every `block` edge has room. Pool slots are never looked at.
   */
  isReady(nowNs: number): boolean {
    if (this.busy) return false;
    const outputs = this.outputs;
    if (this.pendingCount > 0) {
      for (let i = 0; i < outputs.length; i++) {
        const output = outputs[i] as OutputBinding;
        if (output.pending !== undefined && output.refused(this.active)) return false;
      }
      return true;
    }
    if (this.finished || nowNs < this.notBeforeNs) return false;
    if (this.clock !== null) {
      if (nowNs < this.clock.nextDueNs) return false;
    } else if (this.trigger !== null) {
      if (!this.trigger.hasArrival) return false;
    } else if (!this.contracted) {
      const inputs = this.inputs;
      for (let i = 0; i < inputs.length; i++) {
        const channel = (inputs[i] as InputBinding).channel;
        if (channel !== null && channel.length === 0) return false;
      }
    }
    const required = this.required;
    for (let i = 0; i < required.length; i++) if (!(required[i] as InputBinding).holdsEntry) return false;
    for (let i = 0; i < outputs.length; i++) if (!(outputs[i] as OutputBinding).canPublish()) return false;
    return true;
  }

  /**
   * True when the operator can never run again (a consumer's end of input): every connected input is
   * drained and its producer finished, or the input it needs to start (its trigger input or a
   * `required` input) is.
   */
  inputsDrained(producerFinished: (channel: Channel) => boolean): boolean {
    if (this.trigger !== null && ended(this.trigger, producerFinished)) return true;
    const required = this.required;
    for (let i = 0; i < required.length; i++) {
      const input = required[i] as InputBinding;
      if (!input.holdsEntry && ended(input, producerFinished)) return true;
    }
    const inputs = this.inputs;
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i] as InputBinding;
      if (input.channel !== null && !ended(input, producerFinished)) return false;
    }
    return true;
  }

  /**
   * Marks a consumer finished once `inputsDrained()`: releases what its inputs still keep or queue
   * (selector entries, entries a dead trigger left behind) and closes them, so no producer waits on them.
   */
  finishConsumer(): void {
    this.finished = true;
    for (const input of this.inputs) {
      if (input.channel === null) continue;
      input.releaseKept();
      input.channel.discardAll();
      input.channel.closed = true;
    }
  }

  /**
   * Runs one activation at `nowNs` (session clock): accounts the clock tick (skipped ticks counted),
   * takes what each connected input reads under the contract (`InputBinding.take`: stream wait +
   * release-stream registration, or a host readiness wait for a stream-less consumer), calls compute(), then releases
   * the inputs' leases on this operator's stream and returns unemitted loans to their pools.
   * @param startedMs when the activation started (`latencyNowMs()`): the scheduler hands in the end of
   *   the activation it ran just before, so a turn reads the clock once per activation.
   * @returns the outcome synchronously, or a promise when compute() or a host wait is asynchronous.
   */
  activate(nowNs: number, startedMs: number = latencyNowMs()): ActivationOutcome | Promise<ActivationOutcome> {
    this.activationNs = nowNs;
    this.latency.begin(startedMs);
    if (this.pendingCount > 0) return this.retry();
    this.clock?.fire(nowNs);
    const events = this.hostWaits;
    // Emptied only when a host-only consumer left events in it (setting a length is a runtime call, not free).
    if (events.length !== 0) events.length = 0;
    const inputs = this.inputs;
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i] as InputBinding;
      if (input.channel === null) continue;
      const taken = input.take(events);
      if (!taken.ok) return this.endActivation(taken);
    }
    if (events.length > 0) return this.waitHost(events);
    return this.callCompute();
  }

  /** A host-only consumer's activation: waits on its inputs' readiness events, then calls compute(). */
  private waitHost(events: readonly Event[]): Promise<ActivationOutcome> {
    this.busy = true;
    return Promise.all(events.map((event) => hostWaitOutcome(this.backend.synchronizeEvent(event)))).then((waited) => {
      const failed = waited.find((w) => !w.ok);
      return failed !== undefined ? this.endActivation(failed) : this.callCompute();
    });
  }

  /** A retry activation: hands each pending loan back through `pendingLoan()`; receives no inputs. */
  private retry(): ActivationOutcome | Promise<ActivationOutcome> {
    for (const output of this.outputs) output.offerPending(this.loans);
    this.pendingCount = 0;
    this.retries += 1;
    return this.callCompute();
  }

  /**
   * Adds a session-side consumer (a tap) to output `port`; cold, before the run.
   * @returns false when the operator has no such output.
   */
  attachTap(port: string, channel: Channel): boolean {
    for (const output of this.outputs) {
      if (output.name !== port) continue;
      output.channels.push(channel);
      return true;
    }
    return false;
  }

  /** Returns every pending loan to its pool (a failed or abandoned run). */
  abandonPending(): void {
    for (const output of this.outputs) output.abandonPending();
    this.pendingCount = 0;
  }

  private callCompute(): ActivationOutcome | Promise<ActivationOutcome> {
    this.active = true;
    let returned: ReturnType<Operator['compute']>;
    computeScope.depth++;
    try {
      returned = this.operator.compute(this);
    } catch (thrown) {
      return this.endActivation(this.failure(thrown));
    } finally {
      computeScope.depth--;
    }
    // The common synchronous ends first: nothing, or the shared OK_VOID.
    if (returned === undefined || returned === OK_VOID) return this.endActivation(OK_VOID);
    if (isPromise(returned)) return this.settleAsync(returned);
    return this.endActivation(checkedOutcome(returned));
  }

  /** An asynchronous compute(): busy until its promise settles, then the activation ends. */
  private settleAsync(returned: Promise<unknown>): Promise<ActivationOutcome> {
    this.busy = true;
    return returned.then(
      (value) => this.endActivation(checkedOutcome(value)),
      (thrown: unknown) => this.endActivation(this.failure(thrown)),
    );
  }

  private endActivation(outcome: Result<void> = OK_VOID): ActivationOutcome {
    this.active = false;
    this.busy = false;
    const inputs = this.inputs;
    for (let i = 0; i < inputs.length; i++) {
      try {
        (inputs[i] as InputBinding).release();
      } catch (thrown) {
        // Only reachable when compute() released a lease it did not own; report it, keep going.
        if (outcome.ok) outcome = this.failure(thrown);
      }
    }
    this.loans.abandonAll();
    const outputs = this.outputs;
    for (let i = 0; i < outputs.length; i++) (outputs[i] as OutputBinding).offered = undefined;
    this.activations += 1;
    this.endedMs = this.latency.end();
    return outcome.ok ? outcome : this.named(outcome);
  }

  /** A failed activation's outcome, naming this operator once (the context's own misuse errors, thrown out of compute(), already start with it). */
  private named(failed: Err): Err {
    const context = `operator ${this.name}`;
    const { detail } = failed.error;
    return detail.startsWith(context) && detail.charAt(context.length) === ':' ? failed : errWithContext(failed.error, context);
  }

  /** Counts a fully published emit. */
  private counted(published: Result<void>): Result<void> {
    if (published.ok) this.emitted += 1;
    return published;
  }

  /** The input binding of `port`, marked read for this activation. */
  private readOnce(port: InputPort, call: string): InputBinding {
    const inputs = this.inputs;
    for (let i = 0; i < inputs.length; i++) {
      const input = inputs[i] as InputBinding;
      if (input.name !== port.name) continue;
      if (input.readCalled) {
        throw new HsError(
          ErrorCode.InvalidState,
          `operator ${this.name}: input ${port.name} was already read in this activation (${call}() twice); read each input once and keep what it returned`,
        );
      }
      input.readCalled = true;
      return input;
    }
    throw new HsError(ErrorCode.NotFound, `operator ${this.name} has no input port named ${port.name}`);
  }

  private output(port: OutputPort): OutputBinding {
    return port === this.lastOutputPort ? (this.lastOutput as OutputBinding) : this.findOutput(port);
  }

  /** `output()` past its last-port cache: looks the port up and caches it. */
  private findOutput(port: OutputPort): OutputBinding {
    const outputs = this.outputs;
    for (let i = 0; i < outputs.length; i++) {
      const output = outputs[i] as OutputBinding;
      if (output.name !== port.name) continue;
      this.lastOutputPort = port;
      this.lastOutput = output;
      return output;
    }
    throw new HsError(ErrorCode.NotFound, `operator ${this.name} has no output port named ${port.name}`);
  }

  private assertActive(call: string): void {
    if (!this.active) throw this.outsideCompute(call);
  }

  /** The `InvalidState` error of a context call made outside compute(). */
  private outsideCompute(call: string): HsError {
    return new HsError(ErrorCode.InvalidState, `operator ${this.name}: ${call}() called outside compute()`);
  }

  private failure(thrown: unknown): Result<void> {
    if (thrown instanceof HsError) return { ok: false, error: thrown };
    const message = thrown instanceof Error ? thrown.message : String(thrown);
    return err(ErrorCode.InvalidState, `compute() threw: ${message}`, thrown);
  }
}

/** True when nothing is left on a connected input and its producer finished. */
function ended(input: InputBinding, producerFinished: (channel: Channel) => boolean): boolean {
  return input.channel !== null && input.drained && producerFinished(input.channel);
}

/** Accepts `undefined` or a well-formed `Result` from compute(); anything else is the operator's bug. */
function checkedOutcome(value: unknown): Result<void> {
  if (value === undefined) return OK_VOID;
  if (typeof value === 'object' && value !== null) {
    const candidate = value as { ok?: unknown; error?: unknown };
    if (candidate.ok === true) return OK_VOID;
    if (candidate.ok === false && candidate.error instanceof HsError) return value as Result<void>;
  }
  return err(
    ErrorCode.ProtocolError,
    `compute() returned ${describeValue(value)}; return nothing, OK_VOID, or a Result whose error is an HsError`,
  );
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return `an object with keys [${Object.keys(value).join(', ')}]`;
  return `${typeof value} ${String(value)}`;
}

function isPromise<T>(value: unknown): value is Promise<T> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
