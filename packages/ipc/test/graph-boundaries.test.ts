import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, type OutputPort, compile } from '@hs/compiler';
import { RunSession } from '@hs/runtime';
import { Device, ErrorCode, HostBackend, MemoryKind, OK_VOID, type Result, type Stream, unwrap } from '@hs/streams';
import { DType, Tensor } from '@hs/tensor';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { IpcBoundaries, ipcAvailability } from '../src/index.js';
import { CountingSource, VALUES } from './fixtures/counting-source.js';


const available = ipcAvailability();
if (!available.available) console.log(`graph boundary tests skipped: ${available.reason}`);
const dir = mkdtempSync(join(tmpdir(), 'hs-graph-topics-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


/** Host reader: checks every value after the host-access wait (which returns at once: no fence). */
class CheckingSink extends Operator {
  in!: InputPort;
  received = 0;
  wrong = 0;
  constructor(readonly dtype: DType = DType.int32) {
    super('sink');
  }
  setup(spec: OperatorSpec): void {
    this.in = spec.input('values', { memoryKind: MemoryKind.Host, dtype: this.dtype, rank: 1 });
  }
  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const tensor = ctx.receive(this.in)!;
    await tensor.synchronizeForHost();
    const view = unwrap(tensor.hostView());
    const values = new Int32Array(view.buffer, view.byteOffset, VALUES);
    for (let k = 0; k < VALUES; k++) if (values[k] !== this.received * 1000 + k) this.wrong += 1;
    this.received += 1;
    return OK_VOID;
  }
}

/**
 * Emits foreign device tensors (imported, readiness on its stream) through a pass-through host output: the
 * boundary copies each one device-to-host into a slot on this operator's stream, publishing when done.
 */
class ForeignDeviceSource extends Operator {
  out!: OutputPort;
  sent = 0;
  constructor(readonly frames: number) {
    super('source');
  }
  setup(spec: OperatorSpec): void {
    this.out = spec.output('values').producesTensor({
      representation: { memoryKind: MemoryKind.Host, dtype: DType.int32, rank: 1 },
      bounds: { maxByteSpan: VALUES * 4 },
    });
    spec.requireCudaStream();
  }
  compute(ctx: ExecutionContext): Result<void> {
    const stream = ctx.cudaStream();
    const memory = unwrap(ctx.backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: VALUES * 4 }));
    const values = new Int32Array(VALUES).map((_, k) => this.sent * 1000 + k);
    unwrap(ctx.backend.copyFromHostAsync(stream, { memory, byteOffset: 0, byteLength: VALUES * 4, label: 'foreign' }, new Uint8Array(values.buffer)));
    const tensor = unwrap(Tensor.import({ backend: ctx.backend, memory, shape: [VALUES], dtype: DType.int32, deleter: () => ctx.backend.freeAsync(memory, stream) }));
    unwrap(tensor.setReadinessStream(stream));
    this.sent += 1;
    if (this.sent === this.frames) ctx.finish();
    return ctx.emitTensor(this.out, tensor);
  }
}

/**
 * A host-only operator (no planned stream) that emits foreign device tensors written on a stream of its
 * own, as a library with its own CUDA stream would hand them over: the boundary must materialize each one
 * device-to-host itself. With `contract: false` the tensors carry no readiness contract.
 */
class StreamlessForeignSource extends Operator {
  out!: OutputPort;
  sent = 0;
  readonly tensors: Tensor[] = [];
  #stream: Stream | null = null;
  constructor(readonly frames: number, readonly contract = true) {
    super('source');
  }
  setup(spec: OperatorSpec): void {
    this.out = spec.output('values').producesTensor({
      representation: { memoryKind: MemoryKind.Host, dtype: DType.int32, rank: 1 },
      bounds: { maxByteSpan: VALUES * 4 },
    });
  }
  compute(ctx: ExecutionContext): Result<void> {
    expect(() => ctx.cudaStream()).toThrow(expect.objectContaining({ code: ErrorCode.NotSupported })); // no planned stream
    const stream = (this.#stream ??= unwrap(ctx.backend.createStream(Device.cuda(0), { label: 'library stream' })));
    const memory = unwrap(ctx.backend.allocate({ kind: MemoryKind.CudaDevice, device: Device.cuda(0), byteSize: VALUES * 4 }));
    const values = new Int32Array(VALUES).map((_, k) => this.sent * 1000 + k);
    unwrap(ctx.backend.copyFromHostAsync(stream, { memory, byteOffset: 0, byteLength: VALUES * 4, label: 'library' }, new Uint8Array(values.buffer)));
    const tensor = unwrap(Tensor.import({ backend: ctx.backend, memory, shape: [VALUES], dtype: DType.int32, deleter: () => ctx.backend.freeAsync(memory, stream) }));
    if (this.contract) unwrap(tensor.setReadinessStream(stream));
    this.tensors.push(tensor);
    this.sent += 1;
    if (this.sent === this.frames) ctx.finish();
    return ctx.emitTensor(this.out, tensor);
  }
}

function producer(topic: string, frames: number, memoryKind = MemoryKind.Host) {
  const graph = new Graph('producer');
  const source = graph.add(new CountingSource(frames, memoryKind));
  graph.publish(source.out, topic, { subscriberQueueDepth: 3 });
  const options = memoryKind === MemoryKind.CudaDevice ? { deployment: { bindOperatorDevice: { source: Device.cuda(0) }, bindTensorOutputDevice: { 'source.values': Device.cuda(0) } } } : {};
  return { plan: unwrap(compile(graph, options)), source };
}

function consumer(topic: string, dtype = DType.int32) {
  const graph = new Graph('consumer');
  const sink = graph.add(new CheckingSink(dtype));
  graph.subscribe(topic, sink.in);
  return { plan: unwrap(compile(graph)), sink };
}

describe.skipIf(!available.available)('IpcBoundaries: graphs joined by a topic (one process, real sockets and shm)', () => {
  it('carries every frame bit-exact from a producer session to a consumer session; every slot comes back', async () => {
    const backend = new HostBackend();
    const p = producer('values', 500);
    const c = consumer('values');
    const pubBoundaries = await IpcBoundaries.prepare(p.plan, { backend, runtimeDirectory: dir, awaitSubscribers: 1 });
    const subBoundaries = await IpcBoundaries.prepare(c.plan, { backend, runtimeDirectory: dir });
    const pub = unwrap(RunSession.create(p.plan, { backend, boundaries: pubBoundaries }));
    const sub = unwrap(RunSession.create(c.plan, { backend, boundaries: subBoundaries }));
    const [produced] = await Promise.all([pub.run(), sub.run()]);
    expect(c.sink.received).toBe(500);
    expect(c.sink.wrong).toBe(0);
    expect(produced.pools).toEqual([expect.objectContaining({ id: 'pool:source.values', outstanding: 0 })]);
    pub.dispose();
    sub.dispose();
    expect(existsSync(join(dir, 'values.sock'))).toBe(false);
  });

  it('copies foreign device tensors of a pass-through output device-to-host into the host topic (no host wait), values exact', async () => {
    const backend = new HostBackend();
    const graph = new Graph('foreign-producer');
    const source = graph.add(new ForeignDeviceSource(40));
    graph.publish(source.out, 'foreign');
    const plan = unwrap(compile(graph, { deployment: { bindOperatorDevice: { source: Device.cuda(0) } } }));
    expect(plan.pool('boundary:foreign')?.boundary).toMatchObject({ staging: 'copy', transport: 'posixShm', fence: 'none' });
    const c = consumer('foreign');
    const pub = unwrap(RunSession.create(plan, { backend, boundaries: await IpcBoundaries.prepare(plan, { backend, runtimeDirectory: dir, awaitSubscribers: 1 }) }));
    const sub = unwrap(RunSession.create(c.plan, { backend, boundaries: await IpcBoundaries.prepare(c.plan, { backend, runtimeDirectory: dir }) }));
    const [produced] = await Promise.all([pub.run(), sub.run()]);
    expect(c.sink.received).toBe(40);
    expect(c.sink.wrong).toBe(0);
    expect(produced.pools).toEqual([expect.objectContaining({ id: 'boundary:foreign', outstanding: 0 })]);
    pub.dispose();
    sub.dispose();
  });

  // Spec: "Crossing process boundaries" — a foreign device tensor at a host-contract boundary costs one
  // device-to-host materialization, shared by every subscriber; the descriptor waits for it, the JS thread does not.
  it('materializes foreign device tensors of a producer without a stream once, shared by two subscribers, values exact', async () => {
    const backend = new HostBackend({ orderingChecker: true });
    const graph = new Graph('streamless-producer');
    const source = graph.add(new StreamlessForeignSource(40));
    graph.publish(source.out, 'streamless');
    const plan = unwrap(compile(graph));
    expect(plan.operator('source')?.stream).toBeNull();
    expect(plan.pool('boundary:streamless')).toMatchObject({ producerStream: null, boundary: { staging: 'copy', transport: 'posixShm', fence: 'none' } });
    const copies = vi.spyOn(backend, 'copyToHostAsync');
    const consumers = [consumer('streamless'), consumer('streamless')];
    const pub = unwrap(RunSession.create(plan, { backend, boundaries: await IpcBoundaries.prepare(plan, { backend, runtimeDirectory: dir, awaitSubscribers: 2 }) }));
    const subs = await Promise.all(consumers.map(async (c) => unwrap(RunSession.create(c.plan, { backend, boundaries: await IpcBoundaries.prepare(c.plan, { backend, runtimeDirectory: dir }) }))));
    const [produced] = await Promise.all([pub.run(), ...subs.map((sub) => sub.run())]);
    for (const c of consumers) expect([c.sink.received, c.sink.wrong]).toEqual([40, 0]);
    expect(copies).toHaveBeenCalledTimes(40); // one copy per tensor, whatever the subscriber count
    expect(produced.pools).toEqual([expect.objectContaining({ id: 'boundary:streamless', outstanding: 0 })]);
    expect(backend.orderingChecker?.violations).toEqual([]);
    pub.dispose();
    for (const sub of subs) sub.dispose();
    for (const tensor of source.tensors) tensor.dispose();
  });

  it('refuses a foreign device tensor without a readiness contract from a producer without a stream (InvalidState, what to do)', async () => {
    const backend = new HostBackend();
    const graph = new Graph('uncontracted');
    graph.add(new StreamlessForeignSource(1, false));
    graph.publish(graph.specOf(graph.operators[0]!).outputs[0]!, 'uncontracted');
    const plan = unwrap(compile(graph));
    const pub = unwrap(RunSession.create(plan, { backend, boundaries: await IpcBoundaries.prepare(plan, { backend, runtimeDirectory: dir }) }));
    const produced = pub.run();
    await expect(produced).rejects.toMatchObject({ code: ErrorCode.InvalidState, message: expect.stringContaining('output source.values: topic') });
    await expect(produced).rejects.toThrow(
      'has no readiness contract, so its device-to-host copy cannot be ordered after its writes; call tensor.setReadinessStream(stream)',
    );
    pub.dispose();
  });

  it('fails the consumer run with ProtocolError when the topic carries another dtype than the input requires', async () => {
    const backend = new HostBackend();
    const p = producer('mismatch', 50);
    const c = consumer('mismatch', DType.float32);
    const pub = unwrap(RunSession.create(p.plan, { backend, boundaries: await IpcBoundaries.prepare(p.plan, { backend, runtimeDirectory: dir, awaitSubscribers: 1 }) }));
    const sub = unwrap(RunSession.create(c.plan, { backend, boundaries: await IpcBoundaries.prepare(c.plan, { backend, runtimeDirectory: dir }) }));
    const producing = pub.run({ drainTimeoutMs: 5000 });
    await expect(sub.run()).rejects.toMatchObject({
      code: ErrorCode.ProtocolError,
      message: expect.stringContaining('the publisher sends int32 tensors but input sink.values requires float32'),
    });
    expect(c.sink.received).toBe(0);
    await expect(producing).resolves.toMatchObject({ frames: 50 });
    pub.dispose();
    sub.dispose();
  });

  it('refuses a device topic on the host backend at create(), closing its socket with dispose()', async () => {
    const backend = new HostBackend();
    const p = producer('device', 1, MemoryKind.CudaDevice);
    const boundaries = await IpcBoundaries.prepare(p.plan, { backend, runtimeDirectory: dir });
    expect(existsSync(join(dir, 'device.sock'))).toBe(true);
    const created = RunSession.create(p.plan, { backend, boundaries });
    expect(created.ok).toBe(false);
    if (!created.ok) {
      expect(created.error.code).toBe(ErrorCode.NotSupported);
      expect(created.error.message).toContain('needs the CUDA backend');
    }
    await boundaries.dispose();
    expect(existsSync(join(dir, 'device.sock'))).toBe(false);
  });

  it('refuses a session of another plan or backend (InvalidArgument), and a second topic of a live publisher (AlreadyExists)', async () => {
    const backend = new HostBackend();
    const p = producer('owned', 1);
    const boundaries = await IpcBoundaries.prepare(p.plan, { backend, runtimeDirectory: dir });
    const other = RunSession.create(p.plan, { backend: new HostBackend(), boundaries });
    expect(other.ok ? null : other.error.code).toBe(ErrorCode.InvalidArgument);
    await expect(IpcBoundaries.prepare(producer('owned', 1).plan, { backend, runtimeDirectory: dir })).rejects.toMatchObject({ code: ErrorCode.AlreadyExists });
    await boundaries.dispose();
  });
});
