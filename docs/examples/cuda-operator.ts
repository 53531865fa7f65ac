// Write a CUDA operator: the operator enqueues a registry kernel (`hs.rgbaToGray`) on ctx.cudaStream()
// with a byte-identical host implementation, so the same graph runs on the CUDA backend (the native
// kernel) and on the host backend (the host function, checked by the ordering checker). `pnpm test`
// runs it on the host backend.
import { Graph, Operator, compile, type ExecutionContext, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { Device, MemoryKind, OK_VOID, type KernelLaunch, type Result } from '@hs/streams';
import { DType } from '@hs/tensor';

const WIDTH = 4;
const HEIGHT = 2;

/** The host implementation of `hs.rgbaToGray`: the formula of the CUDA kernel, byte for byte. */
const rgbaToGrayHost: KernelLaunch['host'] = ([rgba], [gray]) => {
  for (let i = 0; i < gray!.length; i++) {
    gray![i] = (77 * rgba![4 * i]! + 150 * rgba![4 * i + 1]! + 29 * rgba![4 * i + 2]! + 128) >> 8;
  }
};

/** Emits one pinned-host RGBA frame of pure red, written by the host (no stream needed). */
class RedFrame extends Operator {
  frames!: OutputPort;

  setup(spec: OperatorSpec): void {
    this.frames = spec.output('frames').producesTensor({
      representation: { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 3 },
      bounds: { maxByteSpan: WIDTH * HEIGHT * 4 },
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const loan = ctx.allocateTensor(this.frames, { shape: [HEIGHT, WIDTH, 4], dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const guard = loan.value.write(null); // a host writer: complete at commit
    if (!guard.ok) return guard;
    const pixels = guard.value.tensor.mutableHostView();
    if (!pixels.ok) return pixels;
    for (let i = 0; i < WIDTH * HEIGHT; i++) pixels.value.set([255, 0, 0, 255], 4 * i);
    const committed = guard.value.commit();
    if (!committed.ok) return committed;
    ctx.finish();
    return ctx.emit(this.frames, loan.value);
  }
}

export class Grayscale extends Operator {
  rgba!: InputPort;
  gray!: OutputPort;

  setup(spec: OperatorSpec): void {
    this.rgba = spec.input('rgba', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 3 });
    this.gray = spec.output('gray').producesTensor({
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 },
      bounds: { maxByteSpan: 1920 * 1080 },
      storage: 'runtimePool',
    });
  }

  compute(ctx: ExecutionContext): Result<void> {
    const rgba = ctx.receive(this.rgba);
    if (rgba === undefined) return OK_VOID;
    const [height, width] = rgba.shape as [number, number, number];
    const loan = ctx.allocateTensor(this.gray, { shape: [height, width], dtype: DType.uint8 });
    if (!loan.ok) return loan;
    const stream = ctx.cudaStream(); // the planned stream: valid only during this call
    const guard = loan.value.write(stream);
    if (!guard.ok) return guard;
    const launched = ctx.backend.launchKernel(stream, {
      name: 'hs.rgbaToGray', // looked up in the native registry on the CUDA backend
      reads: [rgba.data()],
      writes: [guard.value.range],
      params: [width, height],
      host: rgbaToGrayHost, // run in stream order by the host backend
    });
    if (!launched.ok) return launched;
    const committed = guard.value.commit(); // readiness recorded on `stream`
    if (!committed.ok) return committed;
    return ctx.emit(this.gray, loan.value);
  }
}

/** Copies the grey frame to the host and prints it. */
class PrintGray extends Operator {
  gray!: InputPort;

  setup(spec: OperatorSpec): void {
    this.gray = spec.input('gray', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 });
  }

  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const gray = ctx.receive(this.gray);
    if (gray === undefined) return OK_VOID;
    const host = new Uint8Array(gray.byteSize);
    await gray.copyToHost(host, ctx.cudaStream()); // rejects with HsError on failure; compute() passes it on and the run fails with it
    console.log(`gray ${gray.shape.join('x')}: ${host.join(' ')}`);
    return OK_VOID;
  }
}

const graph = new Graph('cuda-operator');
const source = graph.add(new RedFrame('source'));
const grayscale = graph.add(new Grayscale('grayscale'));
const printer = graph.add(new PrintGray('printer'));
graph.addFlow(source.frames, grayscale.rgba);
graph.addFlow(grayscale.gray, printer.gray);
// A runtime pool in cudaDevice memory is placed by its own output binding; the printer (no CUDA output) by its operator.
const plan = compile(graph, { deployment: { bindTensorOutputDevice: { 'grayscale.gray': Device.cuda(0) }, bindOperatorDevice: { printer: Device.cuda(0) } } });
if (!plan.ok) throw plan.error;
const session = RunSession.create(plan.value, { backend: 'host', hostOptions: { orderingChecker: true } });
if (!session.ok) throw session.error;
await session.value.run(); // rejects with the run's HsError
console.log(`ordering violations: ${session.value.backend.orderingChecker?.violations.length ?? 'checker off'}`);
session.value.dispose();
