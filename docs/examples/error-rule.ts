// The error rule, both forms: synchronous calls return a Result (check it, or unwrap() it); promises
// reject with an HsError (await them in try/catch). Run: node --import tsx docs/examples/error-rule.ts
import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { ErrorCode, HsError, MemoryKind, type Result, err, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';

/** Emits two frames, then fails: a failure on the hot path is a returned value, not a throw. */
class FlakyCamera extends Operator {
  frames!: OutputPort;
  sent = 0;
  setup(spec: OperatorSpec): void {
    this.frames = spec.output('frames').producesTensor({
      representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: 4 },
      storage: 'runtimePool',
    });
  }
  compute(ctx: ExecutionContext): Result<void> {
    if (this.sent === 2) return err(ErrorCode.InvalidState, 'frame 3: the camera stopped answering');
    const loan = ctx.allocateTensor(this.frames, { shape: [4], dtype: DType.uint8 });
    if (!loan.ok) return loan; // ResourceExhausted: no free slot, nothing waited; the operator decides
    const guard = unwrap(loan.value.write(null));
    unwrap(guard.tensor.mutableHostView()).fill(this.sent);
    unwrap(guard.commit());
    this.sent += 1;
    return ctx.emit(this.frames, loan.value);
  }
}

class Recorder extends Operator {
  frames!: InputPort;
  received = 0;
  setup(spec: OperatorSpec): void {
    this.frames = spec.input('frames', { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 });
  }
  compute(ctx: ExecutionContext): void {
    if (ctx.receive(this.frames) !== undefined) this.received += 1;
  }
}

const graph = new Graph('error-rule');
const camera = graph.add(new FlakyCamera('camera'));
const recorder = graph.add(new Recorder('recorder'));
graph.addFlow(camera.frames, recorder.frames);

// Synchronous: a Result. Check `ok`, or unwrap() it where a failure should throw its HsError.
const plan = compile(graph);
if (!plan.ok) throw plan.error;
const session = unwrap(RunSession.create(plan.value, { backend: 'host' }));
const tap = session.tap('camera', 'nowhere');
console.log(`tap: ${tap.ok ? 'attached' : tap.error.code}`); // NotFound: a value, nothing thrown

// Asynchronous: the promise resolves with the value or rejects with an HsError.
try {
  const metrics = await session.run();
  console.log(`ran ${metrics.frames} frames`);
} catch (error) {
  if (!(error instanceof HsError)) throw error;
  console.log(`run failed: ${error.code}: ${error.detail}`); // a real program also sets process.exitCode = 1
} finally {
  session.dispose();
}
console.log(`recorder received ${recorder.received} frames`);
