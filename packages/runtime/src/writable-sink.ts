import type { Writable } from 'node:stream';
import { type ExecutionContext, type InputPort, Operator, type OperatorSpec } from '@hs/compiler';
import { ErrorCode, HsError, OK_VOID, type Result, err } from '@hs/streams';

/**
 * A host-only sink operator that writes each received frame's bytes (a host-accessible tensor: host,
 * pinned or managed memory; the runtime has waited for its readiness) to a Node `Writable` as one
 * chunk (a copy, since the slot goes back after `compute()`). Backpressure is carried through: when
 * `write()` returns false the activation waits for `'drain'`, so the sink takes no more frames, its
 * queue fills and the producers stop. `stop()` ends the `Writable` and waits for `'finish'`.
 * Errors (returned or rejected with, ending the run with every slot given back): `InvalidState` for the Writable's error,
 * and for a Writable that closed early: destroyed, or ended by someone else, before the sink ended it
 * (checked before every write and in `stop()`, so a Writable that is already closed fails at once
 * rather than waiting for a `'drain'` that will never come); the tensor's `hostView()` error
 * (`NotSupported` for device memory).
 * @example
 * ```ts
 * import { createWriteStream, mkdtempSync, statSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { Readable } from 'node:stream';
 * import { Graph, compile } from '@hs/compiler';
 * import { ReadableSource, RunSession, WritableSink } from '@hs/runtime';
 *
 * const file = join(mkdtempSync(join(tmpdir(), 'hs-sink-')), 'frames.bin');
 * const graph = new Graph('record');
 * const source = graph.add(new ReadableSource('in', Readable.from([1, 2, 3, 4].map((n) => new Uint8Array(1000).fill(n))), { maxFrameBytes: 1000 }));
 * const sink = graph.add(new WritableSink('file', createWriteStream(file)));
 * graph.addFlow(source.frames, sink.input, { queueDepth: 2 });
 * const plan = compile(graph);
 * if (!plan.ok) throw plan.error;
 * const session = RunSession.create(plan.value, { backend: 'host' });
 * if (!session.ok) throw session.error;
 * await session.value.run(); // stop() ends the Writable and waits for 'finish'
 * session.value.dispose();
 * console.log(`${file}: ${statSync(file).size} bytes`);
 * ```
 */
export class WritableSink extends Operator {
  /** The frames input. */
  input!: InputPort;
  private failure: unknown = null;
  private endedBySink = false;

  /** @throws HsError `InvalidArgument` when `writable` is not a Node `Writable` (no `write`/`end`/`on` methods). */
  constructor(
    name: string,
    private readonly writable: Writable,
  ) {
    super(name);
    const candidate = writable as Partial<Writable> | null | undefined;
    if (
      candidate === null ||
      typeof candidate !== 'object' ||
      typeof candidate.write !== 'function' ||
      typeof candidate.end !== 'function' ||
      typeof candidate.on !== 'function'
    ) {
      throw new HsError(ErrorCode.InvalidArgument, `WritableSink ${name}: the second argument must be a Node Writable (got ${describeValue(writable)})`);
    }
    writable.on('error', (error: unknown) => (this.failure ??= error));
  }

  setup(spec: OperatorSpec): void {
    this.input = spec.input('frames');
  }

  /**
   * Writes the received frame as one chunk.
   * @returns the outcome at once when the Writable took the chunk (`InvalidState` for a Writable that
   *   failed or closed early; the tensor's `hostView()` error, `NotSupported` for device memory); else,
   *   while the Writable is full, a promise that resolves once it drained and rejects with HsError
   *   `InvalidState` when it failed or closed instead.
   */
  compute(ctx: ExecutionContext): Result<void> | Promise<void> {
    const before = this.health();
    if (!before.ok) return before;
    const tensor = ctx.receive(this.input);
    if (tensor === undefined) return OK_VOID;
    const view = tensor.hostView();
    if (!view.ok) return view;
    if (this.writable.write(Buffer.from(view.value))) return this.health();
    const after = this.health();
    if (!after.ok) return after; // closed by this write: no 'drain' or 'close' is coming
    return new Promise((resolve, reject) => {
      const settle = (): void => {
        this.writable.off('drain', settle);
        this.writable.off('close', settle);
        this.writable.off('error', settle);
        const health = this.health();
        if (health.ok) resolve();
        else reject(health.error);
      };
      this.writable.on('drain', settle).on('close', settle).on('error', settle);
    });
  }

  /**
   * Ends the Writable and waits for its `'finish'`.
   * @returns nothing, once the Writable finished; rejects with HsError `InvalidState` when the Writable
   *   failed (its error is the cause) or closed before the sink ended it.
   */
  override stop(): Promise<void> {
    const before = this.health();
    if (!before.ok) return Promise.reject(before.error);
    this.endedBySink = true;
    return new Promise((resolve, reject) =>
      this.writable.end(() => {
        const health = this.health();
        if (health.ok) resolve();
        else reject(health.error);
      }),
    );
  }

  /** `OK_VOID` while the Writable can take frames (or finished after the sink ended it); else the failure. */
  private health(): Result<void> {
    if (this.failure !== null) return this.failed();
    const w = this.writable;
    if (this.endedBySink && w.writableFinished) return OK_VOID;
    if (w.destroyed) {
      return err(ErrorCode.InvalidState, `WritableSink ${this.name}: the Writable closed early (it was destroyed before the run finished); frames after that were not written`);
    }
    if (!this.endedBySink && (w.writableEnded || w.writableFinished)) {
      return err(ErrorCode.InvalidState, `WritableSink ${this.name}: the Writable closed early (end() was called on it before the run finished); pass a Writable that stays open for the run`);
    }
    return OK_VOID;
  }

  private failed(): Result<void> {
    const message = this.failure instanceof Error ? this.failure.message : String(this.failure);
    return err(ErrorCode.InvalidState, `Writable failed: ${message}`, this.failure);
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  return value.constructor?.name ?? 'object';
}
