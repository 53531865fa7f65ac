import { type Backend, ErrorCode, HsError } from '@hs/streams';
import type { Tensor } from '@hs/tensor';
import { Channel } from './channel.js';

/** Options of `RunSession.tap()`. */
export interface TapOptions {
  /**
   * Queue entries between the output and the loop (an integer in 1..`MAX_TAP_QUEUE_DEPTH`; default 2).
   * Full: the producer waits (`block`).
   */
  readonly queueDepth?: number;
}

/**
 * Largest `TapOptions.queueDepth` (entries); the queue is allocated up front, so a depth is bounded.
 * @example
 * ```ts
 * import { Readable } from 'node:stream';
 * import { Graph, compile } from '@hs/compiler';
 * import { MAX_TAP_QUEUE_DEPTH, ReadableSource, RunSession } from '@hs/runtime';
 *
 * const graph = new Graph('tapped');
 * graph.add(new ReadableSource('in', Readable.from([1, 2, 3].map((n) => new Uint8Array(4).fill(n))), { maxFrameBytes: 4 }));
 * const plan = compile(graph);
 * if (!plan.ok) throw plan.error;
 * const session = RunSession.create(plan.value, { backend: 'host' });
 * if (!session.ok) throw session.error;
 * const tooDeep = session.value.tap('in', 'frames', { queueDepth: MAX_TAP_QUEUE_DEPTH + 1 });
 * console.log(`depth ${MAX_TAP_QUEUE_DEPTH + 1}: ${tooDeep.ok ? 'accepted' : tooDeep.error.code}`); // InvalidArgument
 * const tap = session.value.tap('in', 'frames', { queueDepth: 4 });
 * if (!tap.ok) throw tap.error;
 * const running = session.value.run();
 * for await (const frame of tap.value) console.log(`frame of ${frame.byteSize} bytes`);
 * await running;
 * session.value.dispose();
 * ```
 */
export const MAX_TAP_QUEUE_DEPTH = 65_536;

/**
 * What `RunSession.tap()` returns: an async iterator over one operator output, for `for await`. Each
 * tensor is ready for the host and valid until the next iteration; leaving the loop (`break`, a throw)
 * returns every slot it held. A tap has one reader: a `next()` while another is pending rejects with
 * HsError `InvalidState`. An unread tap applies backpressure to its producer like any full `block` queue.
 * Spec: "Host access".
 */
export type OutputTap = AsyncIterableIterator<Tensor>;

/**
 * A session-side consumer of one operator output, read with `for await`. Each tensor yielded is ordered
 * for the host (its readiness waited on the host before it is yielded) and read-only; it stays valid
 * until the loop asks for the next one. Leaving the loop (`break`, `return`, a throw) gives back the
 * tensor in hand and every queued one and detaches the tap, so the graph runs on without it; after the
 * run ended and the queue drained, the loop ends. It is a consumer like any other: while nobody reads
 * it and its queue is full, its producer is not activated (so a run with an unread tap does not finish
 * until the tap is read, left, or the run is stopped). One reader at a time: a second, concurrent
 * `next()` (two `for await` loops over one tap) rejects with HsError `InvalidState`.
 * Spec: "Host access".
 */
export class TapIterator implements OutputTap {
  private inHand: Tensor | undefined;
  private ended = false;
  private reading = false;
  private wake: (() => void) | null = null;

  constructor(
    /** The tap's queue, fed by the producer like any edge. */
    private readonly channel: TapChannel,
    private readonly backend: Backend,
  ) {
    channel.onPush = (): void => this.notify();
  }

  /**
   * Yields the next tensor, waiting (without blocking the JS thread) until one is queued or the run ended.
   * @throws HsError `InvalidState` (as a rejection) while another `next()` on this tap is pending;
   *   the tensor's readiness error when waiting for it failed (the tap is then closed).
   */
  async next(): Promise<IteratorResult<Tensor, undefined>> {
    if (this.reading) {
      throw new HsError(
        ErrorCode.InvalidState,
        `tap ${this.channel.edgeId}: another loop is already reading this tap; a tap has one reader — call session.tap() once per loop`,
      );
    }
    this.reading = true;
    try {
      return await this.take();
    } finally {
      this.reading = false;
    }
  }

  private async take(): Promise<IteratorResult<Tensor, undefined>> {
    this.releaseInHand();
    for (;;) {
      if (this.channel.closed) return DONE;
      const tensor = this.channel.shift();
      if (tensor !== undefined) {
        this.inHand = tensor;
        try {
          await this.readyForHost(tensor);
        } catch (error) {
          this.close();
          throw error;
        }
        return { done: false, value: tensor };
      }
      if (this.ended) return DONE;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Leaves the loop: gives back the tensor in hand and every queued one, and detaches the tap. */
  return(): Promise<IteratorResult<Tensor, undefined>> {
    this.close();
    return Promise.resolve(DONE);
  }

  /** Same as `return()`; the loop's error propagates. */
  throw(error?: unknown): Promise<IteratorResult<Tensor, undefined>> {
    this.close();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Tensor> {
    return this;
  }

  /** The run ended: once the queue drains the loop ends. */
  end(): void {
    this.ended = true;
    this.notify();
  }

  /** Detaches the tap (the session ended or the loop left). */
  close(): void {
    this.releaseInHand();
    this.channel.closed = true;
    this.channel.discardAll();
    this.notify();
  }

  /** Waits until the host may read `tensor`; throws (or rejects with) the HsError when it cannot. */
  private readyForHost(tensor: Tensor): Promise<void> | undefined {
    const readiness = tensor.readinessFor(null);
    if (!readiness.ok) throw readiness.error;
    return readiness.value === null ? undefined : this.backend.synchronizeEvent(readiness.value);
  }

  private releaseInHand(): void {
    const t = this.inHand;
    this.inHand = undefined;
    t?.backing?.releaseLease(null);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}

/** A channel that tells its tap when an entry arrives. */
export class TapChannel extends Channel {
  /** Called after each push. */
  onPush: (() => void) | null = null;

  override push(tensor: Tensor): boolean {
    const pushed = super.push(tensor);
    if (pushed) this.onPush?.();
    return pushed;
  }
}

const DONE: IteratorResult<Tensor, undefined> = Object.freeze({ done: true, value: undefined });
