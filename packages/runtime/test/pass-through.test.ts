import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { type Backend, type DeviceMemory, Device, ErrorCode, HostBackend, HsError, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType, Tensor } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { RunSession } from '../src/index.js';
import { bindDevices } from './deployment.js';

/** What the producer hands to emitTensor(): a caller-owned tensor of this layout. */
interface Layout {
  readonly kind: MemoryKind;
  readonly dtype: DType;
  readonly shape: readonly number[];
}

/** Publishes one caller-backed tensor on a pass-through output declared pinnedHost uint8 rank 1. */
class PassThroughProducer extends Operator {
  out!: OutputPort;
  memory: DeviceMemory | null = null;
  emitted: Result<void> | null = null;
  constructor(name: string, private readonly backend: Backend, private readonly layout: Layout) {
    super(name);
  }
  setup(spec: OperatorSpec): void {
    this.out = spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 } });
    spec.requireCudaStream();
  }
  compute(ctx: ExecutionContext): Result<void> {
    ctx.finish();
    const { kind, dtype, shape } = this.layout;
    const memory = unwrap(this.backend.allocate({ kind, device: Device.cpu(), byteSize: 64 }));
    this.memory = memory;
    const tensor = unwrap(Tensor.import({ backend: this.backend, memory, shape, dtype, name: 'caller-frame' }));
    // Device work cannot touch pageable host memory; that case only needs to reach emitTensor().
    if (kind !== MemoryKind.Host) unwrap(this.backend.memsetAsync(ctx.cudaStream(), tensor.data(), 7));
    unwrap(tensor.setReadinessStream(ctx.cudaStream()));
    this.emitted = ctx.emitTensor(this.out, tensor);
    return this.emitted;
  }
}

/** A host-only reader of pinnedHost uint8 rank-1 tensors. */
class PinnedReader extends Operator {
  input!: InputPort;
  bytes: number[] = [];
  setup(spec: OperatorSpec): void {
    this.input = spec.input('in', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 });
  }
  compute(ctx: ExecutionContext): Result<void> {
    this.bytes = [...unwrap(ctx.receive(this.input)!.hostView())];
    return OK_VOID;
  }
}

async function emitOnce(layout: Layout): Promise<{ producer: PassThroughProducer; reader: PinnedReader; failure: HsError | null }> {
  const backend = new HostBackend({ orderingChecker: true });
  const graph = new Graph('pass-through');
  const producer = graph.add(new PassThroughProducer('producer', backend, layout));
  const reader = graph.add(new PinnedReader('reader'));
  graph.addFlow(producer.out, reader.input);
  const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { producer: Device.cuda(0) }) }));
  expect(plan.edge('producer.out->reader.in')).toMatchObject({ pool: null, hostWait: true });
  const session = unwrap(RunSession.create(plan, { backend }));
  const failure = await session.run().then(
    () => null,
    (thrown: HsError) => thrown,
  );
  session.dispose();
  expect(backend.orderingChecker?.violations).toEqual([]);
  if (producer.memory !== null) unwrap(backend.free(producer.memory));
  backend.dispose();
  return { producer, reader, failure };
}

describe('pass-through outputs', () => {
  it('publish caller-supplied backing that matches the consumer; the host reader sees its bytes', async () => {
    const { reader, failure } = await emitOnce({ kind: MemoryKind.PinnedHost, dtype: DType.uint8, shape: [64] });
    expect(failure).toBeNull();
    expect(reader.bytes).toEqual(new Array<number>(64).fill(7));
  });

  it.each([
    ['memory kind', { kind: MemoryKind.Host, dtype: DType.uint8, shape: [64] }, /host memory but a consumer requires pinnedHost/],
    ['dtype', { kind: MemoryKind.PinnedHost, dtype: DType.float32, shape: [16] }, /dtype float32 but a consumer requires uint8/],
    ['rank', { kind: MemoryKind.PinnedHost, dtype: DType.uint8, shape: [8, 8] }, /rank 2 but a consumer requires rank 1/],
  ] as const)('refuse a %s the consumer did not declare with ProtocolError, before it enters the queue', async (_what, layout, message) => {
    const { producer, reader, failure } = await emitOnce(layout);
    expect(producer.emitted?.ok).toBe(false);
    expect(failure).toBeInstanceOf(HsError);
    expect(failure?.code).toBe(ErrorCode.ProtocolError);
    expect(failure?.message).toMatch(message);
    expect(reader.bytes).toEqual([]);
  });
});
