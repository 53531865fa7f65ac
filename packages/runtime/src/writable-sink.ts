import type { Writable } from 'node:stream';
import { type ExecutionContext, type InputPort, Operator, type OperatorSpec } from '@hs/compiler';
import { ErrorCode, OK_VOID, type Result, err } from '@hs/streams';

/**
 * A host-only sink operator that writes each received frame's bytes (a host-accessible tensor: host,
 * pinned or managed memory; the runtime has waited for its readiness) to a Node `Writable` as one
 * chunk (a copy, since the slot goes back after `compute()`). Backpressure is carried through: when
 * `write()` returns false the activation waits for `'drain'`, so the sink takes no more frames, its
 * queue fills and the producers stop. `stop()` ends the `Writable` and waits for `'finish'`.
 * Errors (returned): the Writable's error or early close (`InvalidState`); the tensor's `hostView()`
 * error (`NotSupported` for device memory).
 */
export class WritableSink extends Operator {
  /** The frames input. */
  input!: InputPort;
  private failure: unknown = null;

  constructor(
    name: string,
    private readonly writable: Writable,
  ) {
    super(name);
    writable.on('error', (error: unknown) => (this.failure ??= error));
  }

  setup(spec: OperatorSpec): void {
    this.input = spec.input('frames');
  }

  compute(ctx: ExecutionContext): Result<void> | Promise<Result<void>> {
    if (this.failure !== null) return this.failed();
    const tensor = ctx.receive(this.input);
    if (tensor === undefined) return OK_VOID;
    const view = tensor.hostView();
    if (!view.ok) return view;
    if (this.writable.write(Buffer.from(view.value))) return OK_VOID;
    return new Promise((resolve) => {
      const settle = (): void => {
        this.writable.off('drain', settle);
        this.writable.off('close', settle);
        this.writable.off('error', settle);
        resolve(this.failure === null ? OK_VOID : this.failed());
      };
      this.writable.on('drain', settle).on('close', settle).on('error', settle);
    });
  }

  override stop(): Promise<Result<void>> {
    return new Promise((resolve) => {
      if (this.writable.writableFinished || this.writable.destroyed) {
        resolve(this.failure === null ? OK_VOID : this.failed());
        return;
      }
      this.writable.end(() => resolve(this.failure === null ? OK_VOID : this.failed()));
    });
  }

  private failed(): Result<void> {
    const message = this.failure instanceof Error ? this.failure.message : String(this.failure);
    return err(ErrorCode.InvalidState, `Writable failed: ${message}`, this.failure);
  }
}
