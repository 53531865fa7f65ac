import { computeScope } from './compute-scope.js';
import type { ExecutionContext, InputPort, Operator, OutputPort, PlanOperator, PortRateView } from '@hs/compiler';
import type { TensorLoan, TensorPool, TensorRequest } from '@hs/pool';
import { type Backend, type Event, type Result, type Stream, ErrorCode, HsError, OK_VOID, err, ok, errWithContext } from '@hs/streams';
import type { DType, Tensor } from '@hs/tensor';
import type { BoundaryPublication } from './boundary-provider.js';
import type { Channel } from './channel.js';
import { LatencyWindow } from './latency-window.js';

/** What a consumer declared for one input; checked on pass-through values (ProtocolError on mismatch). */
export interface InputRequirement {
  readonly memoryKind: string | null;
  readonly dtype: DType | null;
  readonly rank: number | null;
}

interface InputBinding {
  readonly name: string;
  readonly channel: Channel | null;
  readonly requirement: InputRequirement;
  /** A proven fused edge: no self-wait, no release registration, lease returned without a release stream. */
  readonly fused: boolean;
  /** The tensor received for the current activation. */
  current: Tensor | undefined;
}

interface OutputBinding {
  readonly name: string;
  readonly channels: Channel[];
  readonly consumerRequirements: readonly InputRequirement[];
  readonly pool: TensorPool | null;
  /** The output feeds one proven fused edge: loans defer their readiness record. */
  readonly fused: boolean;
  /** The loan kept by `retainPending()`, waiting for room on every refusing edge. */
  pending: TensorLoan | undefined;
  /** The pending loan handed back to the current retry activation. */
  offered: TensorLoan | undefined;
  /** The shared `Backpressured` result of this output (made once, so a refused emit allocates nothing). */
  readonly backpressured: Result<never>;
  /** The output's external topic, or `null`. */
  readonly publication: OutputPublication | null;
}

/** How an output reaches its external topic. */
export interface OutputPublication {
  readonly boundary: BoundaryPublication;
  /** True for a pass-through output: its tensors are copied into the boundary pool (`publishCopy`). */
  readonly staged: boolean;
}

/** Wiring handed to a runner by the session: channels and pools by port name. */
export interface RunnerWiring {
  readonly inputs: readonly { name: string; channel: Channel | null; requirement: InputRequirement; fused: boolean }[];
  readonly outputs: readonly {
    name: string;
    channels: readonly Channel[];
    consumerRequirements: readonly InputRequirement[];
    pool: TensorPool | null;
    fused: boolean;
    publication: OutputPublication | null;
  }[];
  /** Rate view of each rated port, by port name (inputs and outputs share one namespace). */
  readonly rates: ReadonlyMap<string, PortRateView>;
}

/** How an activation ended, reported to the scheduler. */
export type ActivationOutcome = Result<void>;

/**
 * One operator's runtime state and its `ExecutionContext`. The context object is reused for every
 * activation (no per-frame allocation); its stream is borrowable only while `compute()` runs.
 * Spec: "Receive: the tensor arrives pre-ordered", "Host access" (the stream-less consumer wait).
 */
export class OperatorRunner implements ExecutionContext {
  readonly name: string;
  readonly operator: Operator;
  readonly isSource: boolean;
  private readonly stream: Stream | null;
  private readonly inputs: InputBinding[];
  private readonly outputs: OutputBinding[];
  private readonly loans: TensorLoan[] = [];
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
    this.inputs = wiring.inputs.map((i) => ({ ...i, current: undefined }));
    this.outputs = wiring.outputs.map((o) => ({
      ...o,
      channels: [...o.channels],
      pending: undefined,
      offered: undefined,
      backpressured: err(
        ErrorCode.Backpressured,
        `output ${this.name}.${o.name}: an edge is full; nothing was published — keep the loan with ctx.retainPending() and emit ctx.pendingLoan() on the retry activation, or let it go`,
      ),
    }));
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
    const output = this.output(port);
    if (output.pool === null) {
      return err(
        ErrorCode.NotSupported,
        `output ${this.name}.${port.name} has no runtime pool (storage is passThrough); emit caller-owned tensors with emitTensor()`,
      );
    }
    const loan = output.pool.allocateTensor(request);
    if (!loan.ok) return loan;
    this.loans.push(loan.value);
    if (output.fused) {
      const deferred = loan.value.deferReadiness();
      if (!deferred.ok) return deferred;
    }
    return loan;
  }

  emit(port: OutputPort, loan: TensorLoan): Result<void> {
    this.assertActive('emit');
    const output = this.output(port);
    const index = this.loans.indexOf(loan);
    if (index < 0) return this.foreignLoan(port);
    if (this.refused(output)) return output.backpressured;
    const published = loan.emit();
    if (!published.ok) return published;
    this.loans[index] = this.loans[this.loans.length - 1]!;
    this.loans.pop();
    if (output.offered === loan) output.offered = undefined;
    return this.publish(output, published.value);
  }

  retainPending(port: OutputPort, loan: TensorLoan): Result<void> {
    this.assertActive('retainPending');
    const output = this.output(port);
    if (output.pending !== undefined) {
      return err(ErrorCode.InvalidState, `output ${this.name}.${port.name} already holds a pending loan; emit or drop it first`);
    }
    const index = this.loans.indexOf(loan);
    if (index < 0) return this.foreignLoan(port);
    this.loans[index] = this.loans[this.loans.length - 1]!;
    this.loans.pop();
    if (output.offered === loan) output.offered = undefined;
    output.pending = loan;
    this.pendingCount += 1;
    return OK_VOID;
  }

  pendingLoan(port: OutputPort): TensorLoan | undefined {
    this.assertActive('pendingLoan');
    return this.output(port).offered;
  }

  emitTensor(port: OutputPort, tensor: Tensor): Result<void> {
    this.assertActive('emitTensor');
    const output = this.output(port);
    if (output.pool !== null) {
      return err(ErrorCode.NotSupported, `output ${this.name}.${port.name} uses a runtime pool; allocate with allocateTensor() and emit the loan`);
    }
    for (const requirement of output.consumerRequirements) {
      const mismatch = describeMismatch(tensor, requirement);
      if (mismatch !== null) return err(ErrorCode.ProtocolError, `output ${this.name}.${port.name}: ${mismatch}`);
    }
    if (this.refused(output)) return output.backpressured;
    return this.publish(output, tensor);
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
      for (const output of this.outputs) if (output.pending !== undefined && this.refused(output)) return false;
      return true;
    }
    if (this.finished) return false;
    if (this.isSource) {
      if (nowMs < this.notBeforeMs) return false;
    } else {
      for (const input of this.inputs) if (input.channel !== null && input.channel.length === 0) return false;
    }
    for (const output of this.outputs) {
      for (const channel of output.channels) if (channel.gatesProducer && !channel.hasRoom) return false;
      if (output.pool !== null && output.pool.available === 0) return false;
      if (output.publication?.staged === true && output.publication.boundary.pool.available === 0) return false;
    }
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
      const tensor = input.channel.shift()!;
      input.current = tensor;
      const received = this.receiveOrdered(tensor, input.fused);
      if (!received.ok) {
        // Not registered on this stream: give its lease back without a release stream.
        tensor.backing?.releaseLease(null);
        input.current = undefined;
        return this.endActivation(received);
      }
      if (this.stream === null && received.value !== null) {
        (hostWaits ??= []).push(this.backend.synchronizeEvent(received.value));
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
    for (const output of this.outputs) {
      if (output.pending === undefined) continue;
      this.loans.push(output.pending);
      output.offered = output.pending;
      output.pending = undefined;
    }
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
    for (const output of this.outputs) {
      output.pending?.abandon();
      output.pending = undefined;
    }
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
      const tensor = input.current;
      if (tensor === undefined) continue;
      input.current = undefined;
      try {
        tensor.backing?.releaseLease(input.fused ? null : this.stream);
      } catch (thrown) {
        // Only reachable when compute() released a lease it did not own; report it, keep going.
        if (outcome.ok) outcome = this.failure(thrown);
      }
    }
    for (const loan of this.loans) loan.abandon();
    this.loans.length = 0;
    for (const output of this.outputs) output.offered = undefined;
    this.latency.record(performance.now() - this.activationMs);
    if (!outcome.ok) {
      return errWithContext(outcome.error, `operator ${this.name}`);
    }
    return outcome;
  }

  /**
   * Orders a received tensor after its producer: on this operator's stream, waits on the readiness
   * event (none when a fused commit deferred it on this very stream) and registers the stream for
   * release (skipped on a proven fused edge); for a host-only operator, returns the event to wait on.
   */
  private receiveOrdered(tensor: Tensor, fused: boolean): Result<Event | null> {
    if (!tensor.hasReadinessStreamContract()) {
      return err(
        ErrorCode.ProtocolError,
        `received tensor ${tensor.name} has no readiness stream contract; the producer must call setReadinessStream() on imported tensors`,
      );
    }
    const readiness = tensor.readinessFor(this.stream);
    if (!readiness.ok || this.stream === null) return readiness;
    if (readiness.value !== null) {
      const waited = this.backend.streamWaitEvent(this.stream, readiness.value);
      if (!waited.ok) return waited;
    }
    if (fused || tensor.backing === null) return NO_EVENT;
    const registered = tensor.backing.registerReleaseStream(this.stream);
    return registered.ok ? NO_EVENT : registered;
  }

  /**
   * True (counting it on the edge) when a `block`/`reject` edge of `output` is full: the emit is refused
   * as a whole, so no edge gets a partial publish.
   */
  private refused(output: OutputBinding): boolean {
    for (const channel of output.channels) {
      if (channel.refusesWhenFull && !channel.hasRoom) {
        if (this.active) channel.backpressured += 1;
        return true;
      }
    }
    return false;
  }

  /**
   * Queues `tensor` on every edge of `output` under its drop policy, one read lease per queued entry,
   * then hands it to the output's topic: as it is (a boundary pool tensor), or copied into the boundary
   * pool on this operator's stream (a pass-through output).
   */
  private publish(output: OutputBinding, tensor: Tensor): Result<void> {
    for (const channel of output.channels) {
      if (channel.closed) continue;
      if (tensor.backing !== null) {
        const leased = tensor.backing.acquireLease();
        if (!leased.ok) return leased;
      }
      // A dropped entry (the evicted oldest, or this one under dropNewest) gives its lease back unread.
      const dropped = channel.offer(tensor);
      dropped?.backing?.releaseLease(null);
    }
    const publication = output.publication;
    if (publication !== null) {
      const sent = publication.staged ? publication.boundary.publishCopy(tensor, this.stream) : publication.boundary.publish(tensor);
      if (!sent.ok) return errWithContext(sent.error, `output ${this.name}.${output.name}: topic`);
    }
    this.emitted += 1;
    return OK_VOID;
  }

  /** The `InvalidState` error for a loan that is not among this activation's loans. */
  private foreignLoan(port: OutputPort): Result<never> {
    return err(
      ErrorCode.InvalidState,
      `output ${this.name}.${port.name}: this loan was already emitted or abandoned, or was not allocated or offered to this activation; allocate a new one`,
    );
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

const NO_EVENT = ok<Event | null>(null);

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

/** Describes how a pass-through tensor breaks a consumer's declared requirement, or null when it fits. */
function describeMismatch(tensor: Tensor, requirement: InputRequirement): string | null {
  if (requirement.memoryKind !== null && tensor.memoryKind !== requirement.memoryKind) {
    return `tensor ${tensor.name} is in ${tensor.memoryKind} memory but a consumer requires ${requirement.memoryKind}`;
  }
  if (requirement.dtype !== null && tensor.dtype !== requirement.dtype) {
    return `tensor ${tensor.name} has dtype ${tensor.dtype.name} but a consumer requires ${requirement.dtype.name}`;
  }
  if (requirement.rank !== null && tensor.shape.length !== requirement.rank) {
    return `tensor ${tensor.name} has rank ${tensor.shape.length} but a consumer requires rank ${requirement.rank}`;
  }
  return null;
}
