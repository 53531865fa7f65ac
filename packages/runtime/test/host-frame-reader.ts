import { type ExecutionContext, type InputPort, Operator, type OperatorSpec } from '@hs/compiler';
import { MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';

/** A host-only reader of pinned frames: records each frame's byte, or -1 when the frame is not uniform. */
export class HostFrameReader extends Operator {
  input!: InputPort;
  readonly frames: number[] = [];
  setup(spec: OperatorSpec): void {
    this.input = spec.input('input', { memoryKind: MemoryKind.PinnedHost });
  }
  compute(ctx: ExecutionContext): Result<void> {
    const view = unwrap(ctx.receive(this.input)!.hostView());
    this.frames.push(view.every((b) => b === view[0]) ? view[0]! : -1);
    return OK_VOID;
  }
}
