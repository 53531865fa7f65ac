import { type ExecutionContext, type InputPort, Operator, type OperatorSpec, type OutputPort } from '@hs/compiler';
import { ErrorCode, MemoryKind, OK_VOID, type Result, err } from '@hs/streams';
import { DType } from '@hs/tensor';

export const FRAME = 64;

/** Emits `count` device frames of FRAME bytes, frame i filled with byte (i + 1) & 0xff. */
export class FillSource extends Operator {
  frames!: OutputPort;
  sent = 0;
  constructor(name: string, readonly count: number, readonly memoryKind: MemoryKind = MemoryKind.CudaDevice) {
    super(name);
  }
  setup(spec: OperatorSpec): void {
    this.frames = spec.output('frames').producesTensor({
      representation: { memoryKind: this.memoryKind, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: FRAME },
      storage: 'runtimePool',
    });
    spec.requireCudaStream();
  }
  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.frames, { shape: [FRAME], dtype: DType.uint8 });
    // No free slot (exhaustion is a value): produce nothing this activation; the scheduler polls again.
    if (!loan.ok) return loan.error.code === ErrorCode.ResourceExhausted ? OK_VOID : loan;
    const guard = loan.value.write(ctx.cudaStream());
    if (!guard.ok) return guard;
    const filled = ctx.backend.memsetAsync(ctx.cudaStream(), guard.value.range, (this.sent + 1) & 0xff);
    if (!filled.ok) return filled;
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    this.sent += 1;
    if (this.sent === this.count) ctx.finish();
    return ctx.emit(this.frames, loan.value);
  }
}

/** Adds one to every byte with a kernel on its stream. */
export class AddOne extends Operator {
  input!: InputPort;
  output!: OutputPort;
  setup(spec: OperatorSpec): void {
    this.input = spec.input('input', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
    this.output = spec.output('output').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 },
      bounds: { maxByteSpan: FRAME },
      storage: 'runtimePool',
    });
  }
  compute(ctx: ExecutionContext): Result<void> {
    const input = ctx.receive(this.input)!;
    const loan = ctx.allocateTensor(this.output, { shape: [FRAME], dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const guard = loan.value.write(ctx.cudaStream());
    if (!guard.ok) return guard;
    const launched = ctx.backend.launchKernel(ctx.cudaStream(), {
      name: 'test.addOne',
      reads: [input.data()],
      writes: [guard.value.range],
      params: [FRAME],
      host: (reads, writes) => {
        for (let i = 0; i < FRAME; i++) writes[0]![i] = (reads[0]![i]! + 1) & 0xff;
      },
    });
    if (!launched.ok) return launched;
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    return ctx.emit(this.output, loan.value);
  }
}

/** Counts what it receives, synchronously (no host wait, no promise), so a turn runs many activations. */
export class CountSink extends Operator {
  input!: InputPort;
  received = 0;
  setup(spec: OperatorSpec): void {
    this.input = spec.input('input', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
  }
  compute(ctx: ExecutionContext): Result<void> {
    if (ctx.receive(this.input) !== undefined) this.received += 1;
    return OK_VOID;
  }
}

/** Copies each frame to the host (the explicit host access) and records its first byte. */
export class CollectSink extends Operator {
  input!: InputPort;
  readonly firstBytes: number[] = [];
  private readonly host = new Uint8Array(FRAME);
  constructor(name: string, private readonly delayMs = 0) {
    super(name);
  }
  setup(spec: OperatorSpec): void {
    this.input = spec.input('input', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
  }
  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const tensor = ctx.receive(this.input)!;
    await tensor.copyToHost(this.host, ctx.cudaStream());
    this.firstBytes.push(this.host[0]!);
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    return OK_VOID;
  }
}

/** Fails on its `failAt`-th activation with an error result. */
export class FailingSink extends Operator {
  input!: InputPort;
  seen = 0;
  constructor(name: string, private readonly failAt: number) {
    super(name);
  }
  setup(spec: OperatorSpec): void {
    this.input = spec.input('input', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
  }
  compute(_ctx: ExecutionContext): Result<void> | Promise<Result<void>> {
    this.seen += 1;
    return this.seen === this.failAt ? err(ErrorCode.ProtocolError, 'planted failure') : OK_VOID;
  }
}
