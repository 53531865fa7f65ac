import { computeScope } from './compute-scope.js';
import type { ExecutionContext, InputPort, Operator, OutputPort, PlanOperator, PortRateView } from '@hs/compiler';
import type { TensorLoan, TensorRequest } from '@hs/pool';
import { type Backend, type Result, type Stream, ErrorCode, HsError, OK_VOID, err, errWithContext } from '@hs/streams';
import type { Tensor } from '@hs/tensor';
import type { Channel } from './channel.js';
import { InputBinding, type InputWiring } from './input-binding.js';
import { LatencyWindow } from './latency-window.js';
import { ActivationLoans, OutputBinding, type OutputWiring } from './output-binding.js';
import { hostWaitOutcome } from './host-wait-outcome.js';

/** Wiring handed to a runner by the session: channels and pools by port name. */
export interface RunnerWiring {
  readonly inputs: readonly InputWiring[];
  readonly outputs: readonly OutputWiring[];
  /** Rate view of each rated port, by port name (inputs and outputs share one namespace). */
  readonly rates: ReadonlyMap<string, PortRateView>;
}

/** How an activation ended, reported to the scheduler. */
export type ActivationOutcome = Result<void>;

/**
 * One operator's scheduler-facing state and its `ExecutionContext`. The context object is reused for
 * every activation (no per-frame allocation); its stream is borrowable only while `compute()` runs.
 * The stream contract is delegated: each input port's consumer half to an `InputBinding` (readiness
 * wait, release-stream registration, release at activation end), each output port's producer half to
 * an `OutputBinding` (allocate through the pool, emit, one lease per edge, publish).
 * Spec: "Receive: the tensor arrives pre-ordered", "Host access" (the stream-less consumer wait).
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
  private active = false;
  private activationMs = 0;
  private notBeforeMs = 0;
  /** True while an asynchronous compute() or a host readiness wait is in flight. */
  busy = false;
  /** True once the operator will not be activated again. */
  finished = false;
  /** compute() latency in ms, including any host readiness wait before it. */
  readonly latency = new LatencyWindow();
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
  }

  // ---- ExecutionContext -------------------------------------------------------------------------

  /** Monotonic activation time in ns. */
  get activationTime(): bigint {
    return BigInt(Math.round(this.activationMs * 1e6));
  }

  cudaStream(): Stream {
    if (!this.active) {
      throw new HsError(
        ErrorCode.InvalidState,
        `operator ${this.name}: cudaStream() used outside compute(); a borrowed stream is valid only during the activation`,
      );
    }
    if (this.stream === null) {
      throw new HsError(
        ErrorCode.NotSupported,
        `operator ${this.name} is host-only and has no planned CUDA stream; declare a CUDA memory kind or call spec.requireCudaStream() in setup()`,
      );
    }
    return this.stream;
  }

  receive(port: InputPort): Tensor | undefined {
    this.assertActive('receive');
    for (const input of this.inputs) if (input.name === port.name) return input.current;
    throw new HsError(ErrorCode.NotFound, `operator ${this.name} has no input port named ${port.name}`);
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
    this.notBeforeMs = Number(timeNs) / 1e6;
  }

  // ---- scheduler side ---------------------------------------------------------------------------

  /** Earliest time (ms, performance.now clock) the operator may run again. */
  get notBefore(): number {
    return this.notBeforeMs;
  }

  /**
   * True when the operator can run now. With a pending loan: when every refusing edge of each pending
   * output has room (a retry, even after `finish()`). Otherwise: inputs hold messages (or a source is
   * due), every `block` edge has room and every pool a free slot.
   */
  isReady(nowMs: number): boolean {
    if (this.busy) return false;
    if (this.pendingCount > 0) {
      for (const output of this.outputs) if (output.pending !== undefined && output.refused(this.active)) return false;
      return true;
    }
    if (this.finished) return false;
    if (this.isSource) {
      if (nowMs < this.notBeforeMs) return false;
    } else {
      for (const input of this.inputs) if (input.channel !== null && input.channel.length === 0) return false;
    }
    for (const output of this.outputs) if (!output.canPublish()) return false;
    return true;
  }

  /** True when every upstream channel is empty and its producer finished (a consumer's end of input). */
  inputsDrained(producerFinished: (channel: Channel) => boolean): boolean {
    for (const input of this.inputs) {
      if (input.channel !== null && (input.channel.length > 0 || !producerFinished(input.channel))) return false;
    }
    return true;
  }

  /**
   * Runs one activation: receives one message per connected input (stream wait + release-stream
   * registration, or a host readiness wait for a stream-less consumer), calls compute(), then releases
   * the inputs' leases on this operator's stream and returns unemitted loans to their pools.
   * @returns the outcome synchronously, or a promise when compute() or a host wait is asynchronous.
   */
  activate(nowMs: number): ActivationOutcome | Promise<ActivationOutcome> {
    this.activationMs = nowMs;
    if (this.pendingCount > 0) return this.retry();
    let hostWaits: Promise<Result<void>>[] | null = null;
    for (const input of this.inputs) {
      if (input.channel === null) continue;
      const received = input.receive();
      if (!received.ok) return this.endActivation(received);
      if (this.stream === null && received.value !== null) {
        (hostWaits ??= []).push(hostWaitOutcome(this.backend.synchronizeEvent(received.value)));
      }
    }
    if (hostWaits !== null) {
      this.busy = true;
      return Promise.all(hostWaits).then((waited) => {
        const failed = waited.find((w) => !w.ok);
        if (failed !== undefined) return this.endActivation(failed);
        return this.callCompute();
      });
    }
    return this.callCompute();
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
    if (isPromise(returned)) {
      this.busy = true;
      return returned.then(
        (value) => this.endActivation(checkedOutcome(value)),
        (thrown: unknown) => this.endActivation(this.failure(thrown)),
      );
    }
    return this.endActivation(checkedOutcome(returned));
  }

  private endActivation(outcome: Result<void> = OK_VOID): ActivationOutcome {
    this.active = false;
    this.busy = false;
    for (const input of this.inputs) {
      try {
        input.release();
      } catch (thrown) {
        // Only reachable when compute() released a lease it did not own; report it, keep going.
        if (outcome.ok) outcome = this.failure(thrown);
      }
    }
    this.loans.abandonAll();
    for (const output of this.outputs) output.offered = undefined;
    this.latency.record(performance.now() - this.activationMs);
    if (!outcome.ok) {
      return errWithContext(outcome.error, `operator ${this.name}`);
    }
    return outcome;
  }

  /** Counts a fully published emit. */
  private counted(published: Result<void>): Result<void> {
    if (published.ok) this.emitted += 1;
    return published;
  }

  private output(port: OutputPort): OutputBinding {
    for (const output of this.outputs) if (output.name === port.name) return output;
    throw new HsError(ErrorCode.NotFound, `operator ${this.name} has no output port named ${port.name}`);
  }

  private assertActive(call: string): void {
    if (!this.active) {
      throw new HsError(ErrorCode.InvalidState, `operator ${this.name}: ${call}() called outside compute()`);
    }
  }

  private failure(thrown: unknown): Result<void> {
    if (thrown instanceof HsError) return { ok: false, error: thrown };
    const message = thrown instanceof Error ? thrown.message : String(thrown);
    return err(ErrorCode.InvalidState, `compute() threw: ${message}`, thrown);
  }
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
