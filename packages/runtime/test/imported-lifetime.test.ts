import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { type Backend, Device, HostBackend, MemoryKind, OK_VOID, type Result, unwrap } from '@hs/streams';
import { DType, Tensor } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { RunSession } from '../src/index.js';
import { bindDevices } from './deployment.js';

/** Emits one foreign (imported) tensor on a pass-through output and drops its own reference at once. */
class ImportingProducer extends Operator {
  out!: OutputPort;
  deleted = 0;
  deletedAtDispose = -1;
  constructor(name: string, private readonly backend: Backend) {
    super(name);
  }
  setup(spec: OperatorSpec): void {
    this.out = spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 } });
    spec.requireCudaStream();
  }
  compute(ctx: ExecutionContext): Result<void> {
    ctx.finish();
    const memory = unwrap(this.backend.allocate({ kind: MemoryKind.PinnedHost, device: Device.cpu(), byteSize: 64 }));
    const tensor = unwrap(Tensor.import({ backend: this.backend, memory, shape: [64], dtype: DType.uint8, deleter: () => this.deleted++ }));
    unwrap(this.backend.memsetAsync(ctx.cudaStream(), tensor.data(), 5));
    unwrap(tensor.setReadinessStream(ctx.cudaStream()));
    const emitted = ctx.emitTensor(this.out, tensor);
    tensor.dispose(); // the producer is done; the consumers' leases keep the import alive
    this.deletedAtDispose = this.deleted;
    return emitted;
  }
}

/** Copies what it receives on its own CUDA stream. */
class StreamConsumer extends Operator {
  input!: InputPort;
  readonly host = new Uint8Array(64);
  setup(spec: OperatorSpec): void {
    this.input = spec.input('in', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 });
    spec.requireCudaStream();
  }
  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const tensor = ctx.receive(this.input);
    if (tensor !== undefined) await tensor.copyToHost(this.host, ctx.cudaStream());
    return OK_VOID;
  }
}

// Spec: "Foreign tensors imported through DLPack": the deleter runs when the last reference drops.
describe('an emitted import is reference counted', () => {
  it('fanned out to three CUDA-stream consumers, its deleter runs once, after all of them read it', async () => {
    const backend = new HostBackend({ orderingChecker: true });
    const graph = new Graph('imported-lifetime');
    const producer = graph.add(new ImportingProducer('producer', backend));
    const consumers = ['c0', 'c1', 'c2'].map((name) => graph.add(new StreamConsumer(name)));
    for (const c of consumers) graph.addFlow(producer.out, c.input);
    const device = Device.cuda(0);
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { producer: device, c0: device, c1: device, c2: device }) }));
    const session = unwrap(RunSession.create(plan, { backend }));
    await session.run();
    session.dispose();
    expect(producer.deletedAtDispose).toBe(0);
    expect(producer.deleted).toBe(1);
    for (const c of consumers) expect([...c.host]).toEqual(new Array<number>(64).fill(5));
    expect(backend.orderingChecker?.violations).toEqual([]);
    backend.dispose();
  });
});
