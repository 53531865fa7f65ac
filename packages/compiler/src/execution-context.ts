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
  /** Activation time in nanoseconds on a monotonic clock. */
  readonly activationTime: bigint;
  /** The backend the session runs on. */
  readonly backend: Backend;
  /**
   * The next tensor on `port`, already ordered on `cudaStream()` (the runtime inserted the wait), or
   * `undefined` when none is queued. The tensor is read-only.
   */
  receive(port: InputPort): Tensor | undefined;
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
