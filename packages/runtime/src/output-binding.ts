import type { TensorLoan, TensorPool, TensorRequest } from '@hs/pool';
import { type Result, type Stream, ErrorCode, OK_VOID, err, errWithContext } from '@hs/streams';
import type { Tensor } from '@hs/tensor';
import type { BoundaryPublication } from './boundary-provider.js';
import type { Channel } from './channel.js';
import type { InputRequirement } from './input-binding.js';

/** How an output reaches its external topic. */
export interface OutputPublication {
  readonly boundary: BoundaryPublication;
  /** True for a pass-through output: its tensors are copied into the boundary pool (`publishCopy`). */
  readonly staged: boolean;
}

/** How the session wires one output port: its edges' channels, its pool, its topic. */
export interface OutputWiring {
  readonly name: string;
  readonly channels: readonly Channel[];
  /** The declared requirement of each edge's consumer, checked on pass-through tensors. */
  readonly consumerRequirements: readonly InputRequirement[];
  /** The output's runtime pool; `null` for a pass-through output. */
  readonly pool: TensorPool | null;
  /** The output feeds one proven fused edge: loans defer their readiness record. */
  readonly fused: boolean;
  /** The output's external topic, or `null`. */
  readonly publication: OutputPublication | null;
}

/**
 * The loans of one activation: allocated or offered back, neither emitted nor retained yet. Whatever is
 * left at activation end is abandoned (returned to its pool). One reused array per operator, used as a
 * stack with its own count: it never shrinks, so the steady state (one loan in, one out per activation)
 * neither trims nor regrows its backing store.
 */
export class ActivationLoans {
  readonly #loans: (TensorLoan | undefined)[] = [undefined];
  #count = 0;

  add(loan: TensorLoan): void {
    if (this.#count === this.#loans.length) this.#loans.push(undefined);
    this.#loans[this.#count++] = loan;
  }

  /** The loan's position, or -1 when it is not among this activation's loans. */
  indexOf(loan: TensorLoan): number {
    const loans = this.#loans;
    for (let i = 0; i < this.#count; i++) if (loans[i] === loan) return i;
    return -1;
  }

  /** Forgets the loan at `index` (from `indexOf`); order is not kept. */
  removeAt(index: number): void {
    const last = --this.#count;
    this.#loans[index] = this.#loans[last];
    this.#loans[last] = undefined;
  }

  /** Abandons every loan left (a loan already emitted ignores it) and empties the list. */
  abandonAll(): void {
    // Usually empty: every loan of the activation was emitted or retained.
    if (this.#count === 0) return;
    const loans = this.#loans;
    for (let i = 0; i < this.#count; i++) {
      (loans[i] as TensorLoan).abandon();
      loans[i] = undefined;
    }
    this.#count = 0;
  }
}

/**
 * The producer half of the stream contract for one output port of one operator: allocates through the
 * output's pool (deferring the readiness record on a proven fused edge, so `commit()` records nothing),
 * emits a committed loan, and publishes the tensor: one read lease per queued edge entry, each edge's
 * drop policy applied, then the external topic. An emit is refused as a whole with `Backpressured` when
 * a `block`/`reject` edge is full, so no edge gets a partial publish; the operator may keep the loan
 * as the output's pending loan and emit it on a retry activation.
 * The binding and its `Backpressured` result are made once, when the session is created.
 * Spec: "Emit: commit records readiness", "Two stream roles order every device tensor" (the slot
 * returns only after every read lease retired), "When the fences disappear: proven linear chains".
 */
export class OutputBinding {
  readonly name: string;
  readonly channels: Channel[];
  readonly consumerRequirements: readonly InputRequirement[];
  readonly pool: TensorPool | null;
  readonly fused: boolean;
  readonly publication: OutputPublication | null;
  /** The loan kept by `retainPending()`, waiting for room on every refusing edge. */
  pending: TensorLoan | undefined = undefined;
  /** The pending loan handed back to the current retry activation. */
  offered: TensorLoan | undefined = undefined;
  /** The shared `Backpressured` result of this output, made at the first refusal (so a refused emit allocates nothing after it). */
  #backpressured: Result<never> | null = null;

  /**
   * @param operator the producing operator's name (for error texts).
   * @param stream the producer's compute stream (`null`: host-only), on which staged topic copies run.
   */
  constructor(
    private readonly operator: string,
    private readonly stream: Stream | null,
    wiring: OutputWiring,
  ) {
    this.name = wiring.name;
    this.channels = [...wiring.channels];
    this.consumerRequirements = wiring.consumerRequirements;
    this.pool = wiring.pool;
    this.fused = wiring.fused;
    this.publication = wiring.publication;
  }

  /** The shared `Backpressured` result, made at the first refusal. */
  private backpressuredResult(): Result<never> {
    this.#backpressured ??= err(
      ErrorCode.Backpressured,
      `output ${this.operator}.${this.name}: an edge is full; nothing was published — keep the loan with ctx.retainPending() and emit ctx.pendingLoan() on the retry activation, or let it go`,
    );
    return this.#backpressured;
  }

  /**
   * Takes a loan from the output's pool and adds it to `loans` (polling the pool's retirement first when
   * no slot is free); on a fused output its readiness record is deferred. `NotSupported` for a pass-through output; the pool's `ResourceExhausted` when no slot
   * is free (a value: the producer decides).
   */
  allocate(request: TensorRequest, loans: ActivationLoans): Result<TensorLoan> {
    if (this.pool === null) {
      return err(
        ErrorCode.NotSupported,
        `output ${this.operator}.${this.name} has no runtime pool (storage is passThrough); emit caller-owned tensors with emitTensor()`,
      );
    }
    // No free slot: poll retirement for this pool first (never waits), so a slot whose leases all came
    // back since the turn began is lent now instead of costing the producer an exhausted activation.
    if (this.pool.available === 0) this.pool.retire();
    const loan = this.pool.allocateTensor(request);
    if (!loan.ok) return loan;
    loans.add(loan.value);
    if (this.fused) {
      const deferred = loan.value.deferReadiness();
      if (!deferred.ok) return deferred;
    }
    return loan;
  }

  /**
   * Emits a committed loan of this activation and publishes its tensor. `InvalidState` for a loan not
   * in `loans`, `Backpressured` (nothing published, the loan still the operator's) when an edge refuses,
   * the loan's error when it cannot be emitted, otherwise `publish()`'s result.
   */
  emit(loan: TensorLoan, loans: ActivationLoans): Result<void> {
    const index = loans.indexOf(loan);
    if (index < 0) return this.#foreignLoan();
    if (this.refused(true)) return this.backpressuredResult();
    const published = loan.emit();
    if (!published.ok) return published;
    loans.removeAt(index);
    if (this.offered === loan) this.offered = undefined;
    return this.publish(published.value);
  }

  /**
   * Emits a caller-owned tensor on a pass-through output, after checking it against every consumer's
   * requirement (`ProtocolError` on a mismatch). `NotSupported` on a pool output, `Backpressured` when
   * an edge refuses, otherwise `publish()`'s result.
   */
  emitTensor(tensor: Tensor): Result<void> {
    if (this.pool !== null) {
      return err(ErrorCode.NotSupported, `output ${this.operator}.${this.name} uses a runtime pool; allocate with allocateTensor() and emit the loan`);
    }
    for (const requirement of this.consumerRequirements) {
      const mismatch = describeMismatch(tensor, requirement);
      if (mismatch !== null) return err(ErrorCode.ProtocolError, `output ${this.operator}.${this.name}: ${mismatch}`);
    }
    if (this.refused(true)) return this.backpressuredResult();
    return this.publish(tensor);
  }

  /**
   * Moves a loan of this activation out of `loans` into the output's pending slot, for a retry
   * activation. `InvalidState` when a loan is already pending or `loan` is not in `loans`.
   */
  retain(loan: TensorLoan, loans: ActivationLoans): Result<void> {
    if (this.pending !== undefined) {
      return err(ErrorCode.InvalidState, `output ${this.operator}.${this.name} already holds a pending loan; emit or drop it first`);
    }
    const index = loans.indexOf(loan);
    if (index < 0) return this.#foreignLoan();
    loans.removeAt(index);
    if (this.offered === loan) this.offered = undefined;
    this.pending = loan;
    return OK_VOID;
  }

  /**
   * For a retry activation: hands the pending loan back to `loans` as the offered loan.
   * @returns false when no loan was pending.
   */
  offerPending(loans: ActivationLoans): boolean {
    if (this.pending === undefined) return false;
    loans.add(this.pending);
    this.offered = this.pending;
    this.pending = undefined;
    return true;
  }

  /** Returns the pending loan, if any, to its pool (a failed or abandoned run). */
  abandonPending(): void {
    this.pending?.abandon();
    this.pending = undefined;
  }

  /**
   * True when a `block`/`reject` edge is full, so an emit is refused as a whole; with `count`, the
   * refusal is counted on that edge (`Channel.backpressured`).
   */
  refused(count: boolean): boolean {
    const channels = this.channels;
    for (let i = 0; i < channels.length; i++) {
      const channel = channels[i] as Channel;
      if (channel.refusesWhenFull && !channel.hasRoom) {
        if (count) channel.backpressured += 1;
        return true;
      }
    }
    return false;
  }

  /**
   * True when an activation of the producer could publish here: every `block` edge has room, and a
   * published output's topic has room. A topic's queue lives in another process, so its room is its
   * boundary pool's free slots (the subscribers' queued and held entries); that is the only pool this
   * asks. The output's own runtime pool is never asked: an empty pool is `ResourceExhausted` from
   * `allocate()`, a value the producer handles (drop or degrade).
   * Spec: "Exhaustion fails fast", "Crossing process boundaries: the generation fence".
   */
  canPublish(): boolean {
    const channels = this.channels;
    for (let i = 0; i < channels.length; i++) {
      const channel = channels[i] as Channel;
      if (channel.gatesProducer && !channel.hasRoom) return false;
    }
    return this.publication === null || this.publication.boundary.pool.available > 0;
  }

  /**
   * Queues `tensor` on every open edge under its drop policy, one read lease per queued entry (an entry
   * the policy drops gives its lease back unread), then hands it to the output's topic: as it is (a
   * boundary pool tensor), or copied into the boundary pool on the producer's stream (pass-through).
   * @returns the backing's error when a lease cannot be taken; the topic's error, with this output named.
   */
  publish(tensor: Tensor): Result<void> {
    const channels = this.channels;
    for (let i = 0; i < channels.length; i++) {
      const channel = channels[i] as Channel;
      if (channel.closed) continue;
      if (tensor.backing !== null) {
        const leased = tensor.backing.acquireLease();
        if (!leased.ok) return leased;
      }
      const dropped = channel.offer(tensor);
      dropped?.backing?.releaseLease(null);
    }
    const publication = this.publication;
    if (publication !== null) {
      const sent = publication.staged ? publication.boundary.publishCopy(tensor, this.stream) : publication.boundary.publish(tensor);
      if (!sent.ok) return errWithContext(sent.error, `output ${this.operator}.${this.name}: topic`);
    }
    return OK_VOID;
  }

  /** The `InvalidState` error for a loan that is not among this activation's loans. */
  #foreignLoan(): Result<never> {
    return err(
      ErrorCode.InvalidState,
      `output ${this.operator}.${this.name}: this loan was already emitted or abandoned, or was not allocated or offered to this activation; allocate a new one`,
    );
  }
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
