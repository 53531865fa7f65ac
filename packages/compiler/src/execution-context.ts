import type { Backend, Result, Stream } from '@hs/streams';
import type { Tensor } from '@hs/tensor';
import type { TensorLoan, TensorRequest } from '@hs/pool';
import type { InputPort, OutputPort } from './authoring/ports.js';

/**
 * A port's rate in the session's published rate generation, read through `ExecutionContext.rate()`.
 * The object is owned by the session and updated in place when a new generation is published; read
 * it, do not keep it. Spec: "Size queue entries from nominal rates" (PortRateView).
 */
export interface PortRateView {
  /** Rate in Hz (nearest double of the exact value). */
  readonly hz: number;
  /** Exact rate text in Hz: `60` or `30000/1001`. */
  readonly exact: string;
  /** The rate generation it belongs to (0: the plan's generation-zero values). */
  readonly rateGeneration: number;
}

/**
 * The entries one activation reads on a window or selector input, oldest first, from
 * `ExecutionContext.receiveWindow()`. Each tensor is already ordered on `cudaStream()` and read-only.
 * The object is the runtime's, reused for every activation (no allocation): read it during `compute()`,
 * do not keep it. Spec: "Size queue entries from nominal rates" (window and selector retention).
 * @example
 * const samples = ctx.receiveWindow(this.imu);
 * let sum = 0;
 * for (let i = 0; i < samples.length; i++) sum += readSample(samples.at(i));
 */
export interface TensorWindow {
  /** Entries this activation reads (0 up to the window's or selector's `entries`). */
  readonly length: number;
  /**
   * Entry `index`, oldest first.
   * @throws HsError `InvalidArgument` unless `0 <= index < length` (once `compute()` returned the view is empty).
   */
  at(index: number): Tensor;
}

/**
 * What `Operator.compute()` receives for one activation. Declared here, implemented by `@hs/runtime`.
 * Everything it hands out is valid only during that `compute()` call.
 * Spec: "Two stream roles order every device tensor", "One stream per active execution partition and device".
 */
export interface ExecutionContext {
  /**
   * The operator's planned stream (one per partition and device, runtime-owned: never destroy or keep it).
   * @throws HsError `InvalidState` after `compute()` returned; `NotSupported` for a host-only operator.
   */
  cudaStream(): Stream;
  /**
   * Activation time in integer nanoseconds on the session's monotonic clock (`RunSessionOptions.clock`):
   * when the scheduler turn that started this activation ran. For a clock trigger that is at or after
   * the tick's due time t0 + k/rate (exactly on it with a manual clock).
   */
  readonly activationTime: bigint;
  /** The backend the session runs on. */
  readonly backend: Backend;
  /**
   * The tensor this activation received on `port`, already ordered on `cudaStream()` (the runtime
   * inserted the wait), or `undefined` when none was there. The tensor is read-only. Which entry the
   * temporal contract decides: the oldest on the trigger input and on every input of an operator
   * without a contract (one is consumed per activation); on another input, the newest (older ones are
   * released unread); on a selector input, the newest kept one (not consumed).
   * Spec: "Receive: the tensor arrives pre-ordered", "Size queue entries from nominal rates".
   * @throws HsError `NotFound` for a port of another operator; `InvalidState` for a second receive of
   *   `port` in one activation, or a window input (read it with `receiveWindow()`).
   * @example
   * const frame = ctx.receive(this.frames);
   * if (frame === undefined) return OK_VOID; // nothing queued on a non-trigger input
   */
  receive(port: InputPort): Tensor | undefined;
  /**
   * Every entry this activation took on a window input (each queued entry up to the window's
   * `entries`, consumed and released when `compute()` returns), or the newest entries a selector input
   * keeps (read without consuming). One reused view per input: allocation-free.
   * Spec: "Size queue entries from nominal rates" (window and selector retention).
   * @throws HsError `NotFound` for a port of another operator; `InvalidState` for a port without a
   *   window or selector in the session's scenario, or a second read of `port` in one activation.
   * @example
   * // In setup(): spec.temporalContract({ trigger: { input: this.frames }, windows: [{ input: this.imu, entries: 34 }] });
   * const samples = ctx.receiveWindow(this.imu);
   * for (let i = 0; i < samples.length; i++) integrate(samples.at(i));
   */
  receiveWindow(port: InputPort): TensorWindow;
  /**
   * Borrows a slot from the output's runtime pool for a tensor of `request.shape` (elements per
   * dimension) and `request.dtype`; never waits.
   * Errors: `ResourceExhausted` when no slot is free; `InvalidArgument` for a shape or dtype outside the
   * declared bounds; `NotSupported` for a pass-through output.
   */
  allocateTensor(port: OutputPort, request: TensorRequest): Result<TensorLoan>;
  /**
   * Publishes a committed loan on `port`; never waits. Each edge of the port applies its drop policy
   * when full (`dropOldest` evicts, `dropNewest` skips; both still succeed). Errors: `Backpressured`
   * when a `block` or `reject` edge of the port is full — nothing was published and the loan is still
   * this activation's (keep it with `retainPending()` to retry without allocating again, or let it go:
   * it returns to its pool when `compute()` returns); `InvalidState` before commit or for a loan that is
   * not this activation's.
   */
  emit(port: OutputPort, loan: TensorLoan): Result<void>;
  /**
   * Opts into a retry: keeps `loan` (committed, refused with `Backpressured`) past this activation as
   * `port`'s pending loan. The operator is then not activated until every `block`/`reject` edge of
   * `port` has room; that retry activation receives no inputs (`receive()` returns `undefined`) and
   * hands the loan back through `pendingLoan(port)`, to be emitted again with no new allocation or device
   * work. A pending loan not emitted or retained again during the retry returns to its pool.
   * Errors: `InvalidState` when `loan` is not this activation's or `port` already holds a pending loan.
   * Spec: "Exhaustion fails fast" (nothing waits on the JS thread).
   */
  retainPending(port: OutputPort, loan: TensorLoan): Result<void>;
  /** The loan kept by `retainPending()` that this retry activation offers back on `port`, else `undefined`. */
  pendingLoan(port: OutputPort): TensorLoan | undefined;
  /**
   * Publishes caller-backed `tensor` on a pass-through output. Errors: `ProtocolError` when it does not
   * match a consumer's declared memory kind, dtype or rank; `Backpressured` when a `block`/`reject` edge
   * is full (nothing published); `NotSupported` for a runtime-pool output.
   */
  emitTensor(port: OutputPort, tensor: Tensor): Result<void>;
  /**
   * The port's rate in the published rate generation, or `null` when the plan has no rate for it.
   * O(1), allocation-free.
   * @throws HsError `NotFound` when `port` is not a port of this operator.
   */
  rate(port: InputPort | OutputPort): PortRateView | null;
  /** Says that this source operator will produce no more. */
  finish(): void;
  /**
   * Asks not to be activated again before the monotonic time `timeNs` (same clock as `activationTime`);
   * a source uses it to keep its nominal rate without sleeping in `compute()`.
   */
  deferUntil(timeNs: bigint): void;
}
