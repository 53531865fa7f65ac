import { CompileError, DiagnosticCode, type ExecutionContext, Graph, type InputPort, Operator, type OperatorSpec, compile } from '@hs/compiler';
import { type DeviceMemory, Device, ErrorCode, type Event, HostBackend, MemoryKind, OK_VOID, type Result, type Stream, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { AsyncFromSync, MallocResource } from '@hs/nanovdb-mr';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeviceCopy, RunSession } from '../src/index.js';
import { bindDevices } from './deployment.js';
import { AddOne, FRAME, FillSource } from './test-operators.js';

const cuda0 = Device.cuda(0);
const cuda1 = Device.cuda(1);

/** Copies each frame to the host and records its first byte, the device of its compute stream and of each tensor. */
class ProbeSink extends Operator {
  input!: InputPort;
  readonly firstBytes: number[] = [];
  readonly streamDevices = new Set<string>();
  readonly tensorDevices = new Set<string>();
  readonly #host = new Uint8Array(FRAME);
  setup(spec: OperatorSpec): void {
    this.input = spec.input('input', { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 1 });
  }
  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    const tensor = ctx.receive(this.input)!;
    this.streamDevices.add(ctx.cudaStream().device.toString());
    this.tensorDevices.add(tensor.device.toString());
    await tensor.copyToHost(this.#host, ctx.cudaStream());
    this.firstBytes.push(this.#host[0]!);
    return OK_VOID;
  }
}

/** Reads pinnedHost frames on its own stream (a device copy would be launched there) and records their first byte. */
class PinnedReader extends Operator {
  input!: InputPort;
  readonly firstBytes: number[] = [];
  readonly #host = new Uint8Array(FRAME);
  setup(spec: OperatorSpec): void {
    this.input = spec.input('input', { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 });
    spec.requireCudaStream();
  }
  async compute(ctx: ExecutionContext): Promise<Result<void>> {
    await ctx.receive(this.input)!.copyToHost(this.#host, ctx.cudaStream());
    this.firstBytes.push(this.#host[0]!);
    return OK_VOID;
  }
}

/**
 * source{i} -> add{i} -> sink{i} for each device: two independent chains, one per device; on cuda:1 a
 * second reader tap1 of add1.output forks the chain, so that device has three partitions, three streams
 * and release streams other than the producer's.
 */
function twoChains(frames: number): { graph: Graph; sinks: ProbeSink[]; bind: Record<string, Device> } {
  const graph = new Graph('two-devices');
  const sinks: ProbeSink[] = [];
  const bind: Record<string, Device> = {};
  for (const [i, device] of [cuda0, cuda1].entries()) {
    const source = graph.add(new FillSource(`source${i}`, frames));
    const add = graph.add(new AddOne(`add${i}`));
    graph.addFlow(source.frames, add.input);
    const names = [`sink${i}`, ...(i === 1 ? ['tap1'] : [])];
    for (const name of names) {
      const sink = graph.add(new ProbeSink(name));
      graph.addFlow(add.output, sink.input);
      sinks.push(sink);
    }
    for (const name of [`source${i}`, `add${i}`, ...names]) bind[name] = device;
  }
  return { graph, sinks, bind };
}

const expected = (frames: number): number[] => Array.from({ length: frames }, (_, i) => (i + 2) & 0xff);

/** Records the device of every stream, event and allocation a backend makes, and every cross-device use. */
function watch(backend: HostBackend) {
  const streams: Stream[] = [];
  const events: Event[] = [];
  const allocations: { stream: string | null; device: string }[] = [];
  const mismatches: string[] = [];
  const createStream = backend.createStream.bind(backend);
  const createEvent = backend.createEvent.bind(backend);
  const recordEvent = backend.recordEvent.bind(backend);
  const streamWaitEvent = backend.streamWaitEvent.bind(backend);
  const allocate = backend.allocate.bind(backend);
  const allocateAsync = backend.allocateAsync.bind(backend);
  const freeAsync = backend.freeAsync.bind(backend);
  vi.spyOn(backend, 'createStream').mockImplementation((device, options) => {
    const made = createStream(device, options);
    if (made.ok) streams.push(made.value);
    return made;
  });
  vi.spyOn(backend, 'createEvent').mockImplementation((device, options) => {
    const made = createEvent(device, options);
    if (made.ok) events.push(made.value);
    return made;
  });
  vi.spyOn(backend, 'recordEvent').mockImplementation((event, stream) => {
    if (event.device !== stream.device) mismatches.push(`record ${event.label} (${event.device.toString()}) on ${stream.label} (${stream.device.toString()})`);
    return recordEvent(event, stream);
  });
  vi.spyOn(backend, 'streamWaitEvent').mockImplementation((stream, event) => {
    if (event.device !== stream.device) mismatches.push(`wait on ${event.label} (${event.device.toString()}) from ${stream.label} (${stream.device.toString()})`);
    return streamWaitEvent(stream, event);
  });
  let inAsync = false;
  vi.spyOn(backend, 'allocate').mockImplementation((request) => {
    if (!inAsync) allocations.push({ stream: null, device: request.device.toString() });
    return allocate(request);
  });
  vi.spyOn(backend, 'allocateAsync').mockImplementation((request, stream) => {
    allocations.push({ stream: stream.label, device: request.device.toString() });
    if (request.device !== stream.device) mismatches.push(`allocateAsync on ${request.device.toString()} ordered on ${stream.label} (${stream.device.toString()})`);
    inAsync = true;
    try {
      return allocateAsync(request, stream);
    } finally {
      inAsync = false;
    }
  });
  vi.spyOn(backend, 'freeAsync').mockImplementation((memory: DeviceMemory, stream: Stream) => {
    if (memory.device !== stream.device) mismatches.push(`freeAsync of ${memory.device.toString()} memory on ${stream.label} (${stream.device.toString()})`);
    return freeAsync(memory, stream);
  });
  return { streams, events, allocations, mismatches };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('two devices on HostBackend({ deviceCount: 2 })', () => {
  it('places each chain on its device: operators, pools and their producer streams', () => {
    const { graph, bind } = twoChains(1);
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, bind) }));
    for (const op of plan.operators) expect(op.device?.toString(), op.name).toBe(op.name.endsWith('1') ? 'cuda:1' : 'cuda:0');
    for (const pool of plan.pools) {
      const device = pool.id.includes('1.') ? 'cuda:1' : 'cuda:0';
      expect(pool.device.toString(), pool.id).toBe(device);
      expect(plan.streams.find((s) => s.id === pool.producerStream)?.device.toString(), pool.id).toBe(device);
    }
  });

  it('plans one stream per (partition, device), and one per device under sharedProcessDevice', () => {
    const { graph, bind } = twoChains(1);
    const perPartition = unwrap(compile(graph, { deployment: bindDevices(graph, bind) }));
    expect(perPartition.streams.map((s) => [s.id, s.device.toString(), s.partitions])).toEqual([
      ['stream:source0@cuda:0', 'cuda:0', ['partition:source0']],
      ['stream:source1@cuda:1', 'cuda:1', ['partition:source1']],
      ['stream:sink1@cuda:1', 'cuda:1', ['partition:sink1']],
      ['stream:tap1@cuda:1', 'cuda:1', ['partition:tap1']],
    ]);
    for (const op of perPartition.operators) expect(perPartition.streams.find((s) => s.id === op.stream)?.device).toBe(op.device);
    const shared = unwrap(compile(graph, { computeStreamPolicy: 'sharedProcessDevice', deployment: bindDevices(graph, bind) }));
    expect(shared.streams.map((s) => s.device.toString())).toEqual(['cuda:0', 'cuda:1']);
    expect(shared.streams.map((s) => s.partitions.length)).toEqual([1, 3]);
  });

  it('runs both chains with every value right and every slot returned, the ordering checker silent', async () => {
    const backend = new HostBackend({ deviceCount: 2, orderingChecker: true, seed: 11 });
    const { graph, sinks, bind } = twoChains(12);
    const session = unwrap(RunSession.create(unwrap(compile(graph, { deployment: bindDevices(graph, bind) })), { backend }));
    const metrics = await session.run();
    for (const sink of sinks) expect(sink.firstBytes).toEqual(expected(12));
    expect(metrics.pools.map((p) => [p.id, p.outstanding])).toEqual(metrics.pools.map((p) => [p.id, 0]));
    expect(backend.orderingChecker?.violations).toEqual([]);
    session.dispose();
    backend.dispose();
  });

  it("gives each operator a compute stream on its device and tensors from its device's pools", async () => {
    const backend = new HostBackend({ deviceCount: 2 });
    const { graph, sinks, bind } = twoChains(4);
    const session = unwrap(RunSession.create(unwrap(compile(graph, { deployment: bindDevices(graph, bind) })), { backend }));
    await session.run();
    expect(sinks.map((s) => [s.name, [...s.streamDevices]])).toEqual([['sink0', ['cuda:0']], ['sink1', ['cuda:1']], ['tap1', ['cuda:1']]]);
    expect(sinks.map((s) => [s.name, [...s.tensorDevices]])).toEqual([['sink0', ['cuda:0']], ['sink1', ['cuda:1']], ['tap1', ['cuda:1']]]);
    session.dispose();
    backend.dispose();
  });

  it('creates streams, events and pool memory on the owning device, and never records, waits or frees across devices', async () => {
    const backend = new HostBackend({ deviceCount: 2 });
    const seen = watch(backend);
    const { graph, bind } = twoChains(6);
    const session = unwrap(RunSession.create(unwrap(compile(graph, { deployment: bindDevices(graph, bind) })), { backend }));
    await session.run();
    session.dispose();
    expect(seen.streams.map((s) => [s.label, s.device.toString()]).sort()).toEqual([
      ['stream:sink1@cuda:1', 'cuda:1'],
      ['stream:source0@cuda:0', 'cuda:0'],
      ['stream:source1@cuda:1', 'cuda:1'],
      ['stream:tap1@cuda:1', 'cuda:1'],
    ]);
    const onDevice1 = (label: string): boolean => /(source|add)1\./.test(label);
    expect(seen.events.length).toBeGreaterThan(0);
    for (const event of seen.events) expect(event.device.toString(), event.label).toBe(onDevice1(event.label) ? 'cuda:1' : 'cuda:0');
    // One backing per pool (two per device), each made on its pool's device, in order on its producer stream there.
    expect(seen.allocations.map((a) => [a.stream, a.device]).sort()).toEqual([
      ['stream:source0@cuda:0', 'cuda:0'],
      ['stream:source0@cuda:0', 'cuda:0'],
      ['stream:source1@cuda:1', 'cuda:1'],
      ['stream:source1@cuda:1', 'cuda:1'],
    ]);
    expect(seen.mismatches).toEqual([]);
    backend.dispose();
  });

  it('backs the cuda:1 pools with a resource bound for cuda:1, and refuses one of cuda:0 there', async () => {
    const backend = new HostBackend({ deviceCount: 2, memoryPools: false });
    const { graph, sinks, bind } = twoChains(3);
    const deployment = { ...bindDevices(graph, bind) };
    const plan = unwrap(compile(graph, { deployment }));
    const device0 = new AsyncFromSync(backend, new MallocResource(backend, cuda0));
    const device1 = new AsyncFromSync(backend, new MallocResource(backend, cuda1));
    const providers = Object.fromEntries(plan.pools.map((p) => [p.provider, p.device === cuda1 ? device1 : device0]));
    const session = unwrap(RunSession.create(plan, { backend, resources: { providers } }));
    await session.run();
    for (const sink of sinks) expect(sink.firstBytes).toEqual(expected(3));
    session.dispose();

    const wrong = Object.fromEntries(plan.pools.map((p) => [p.provider, device0]));
    const refused = RunSession.create(plan, { backend, resources: { providers: wrong } });
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error.code).toBe(ErrorCode.InvalidArgument);
      expect(refused.error.message).toContain('cuda:1');
    }
    backend.dispose();
  });

  it('refuses a plan naming a device the backend does not have, before anything is allocated', () => {
    const backend = new HostBackend({ deviceCount: 2 });
    const seen = watch(backend);
    const graph = new Graph('third-device');
    graph.add(new FillSource('source', 1));
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: Device.cuda(2) }) }));
    const made = RunSession.create(plan, { backend });
    expect(made.ok).toBe(false);
    if (!made.ok) expect(made.error.message).toContain('cuda:2');
    expect(seen.allocations).toEqual([]);
    backend.dispose();
  });

  it('says how to get the devices a plan names when the host backend has fewer', () => {
    const graph = new Graph('second-device');
    graph.add(new FillSource('source', 1));
    const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: cuda1 }) }));
    const made = RunSession.create(plan, { backend: 'host' });
    expect(made.ok).toBe(false);
    if (!made.ok) {
      expect(made.error.code).toBe(ErrorCode.InvalidArgument);
      expect(made.error.message).toContain('cuda:1');
      expect(made.error.message).toContain('hostOptions: { deviceCount: 2 }');
    }
    expect(unwrap(RunSession.create(plan, { backend: 'host', hostOptions: { deviceCount: 2 } })).dispose()).toBeUndefined();
  });

  it('refuses at compile time an edge from an output on cuda:0 into an operator on cuda:1 (DEVICE_CONFLICT)', () => {
    const graph = new Graph('cross-device');
    const source = graph.add(new FillSource('source', 1));
    const add = graph.add(new AddOne('add'));
    graph.addFlow(source.frames, add.input);
    const result = compile(graph, { deployment: bindDevices(graph, { source: cuda0, add: cuda1 }) });
    expect(result.ok).toBe(false);
    if (result.ok || !(result.error instanceof CompileError)) throw new Error('expected a CompileError');
    const conflict = result.error.errors.find((d) => d.code === DiagnosticCode.DeviceConflict);
    expect(conflict?.subject).toEqual({ kind: 'operator', operator: 'add' });
    expect(conflict?.message).toContain('input add.input (fed by source.frames) on cuda:0');
    expect(conflict?.message).toContain('output add.output on cuda:1');
  });

  it('refuses at compile time a pinnedHost pool produced on cuda:0 and read by a stream on cuda:1, which used to fail the run', async () => {
    const graph = new Graph('pinned-across');
    const source = graph.add(new FillSource('source', 4, MemoryKind.PinnedHost));
    const reader = graph.add(new PinnedReader('reader'));
    graph.addFlow(source.frames, reader.input);
    const across = compile(graph, { deployment: bindDevices(graph, { source: cuda0, reader: cuda1 }) });
    expect(across.ok).toBe(false);
    if (across.ok || !(across.error instanceof CompileError)) throw new Error('expected a CompileError');
    expect(across.error.errors.map((d) => [d.code, d.subject])).toEqual([[DiagnosticCode.DeviceConflict, { kind: 'edge', edge: 'source.frames->reader.input' }]]);

    // On one device (cuda:1) the same graph runs: the pool's events and both streams are there.
    const backend = new HostBackend({ deviceCount: 2, orderingChecker: true });
    const seen = watch(backend);
    const session = unwrap(RunSession.create(unwrap(compile(graph, { deployment: bindDevices(graph, { source: cuda1, reader: cuda1 }) })), { backend }));
    const metrics = await session.run();
    expect(reader.firstBytes).toEqual([1, 2, 3, 4]);
    expect(metrics.pools.map((p) => p.outstanding)).toEqual([0]);
    expect(seen.events.every((e) => e.device === cuda1)).toBe(true);
    expect(seen.mismatches).toEqual([]);
    session.dispose();
    backend.dispose();
  });

  describe('DeviceCopy between the devices', () => {
    /** source (cuda:0) -> add (cuda:0) -> copy (cuda:1) -> sink (cuda:1). */
    function copied(frames: number) {
      const graph = new Graph('device-copy');
      const source = graph.add(new FillSource('source', frames));
      const add = graph.add(new AddOne('add'));
      const copy = graph.add(new DeviceCopy('copy', { dtype: DType.uint8, rank: 1, maxByteSpan: FRAME }));
      const sink = graph.add(new ProbeSink('sink'));
      graph.addFlow(source.frames, add.input);
      graph.addFlow(add.output, copy.input);
      graph.addFlow(copy.output, sink.input);
      const deployment = { ...bindDevices(graph, { source: cuda0, add: cuda0, sink: cuda1 }), bindTensorOutputDevice: { 'source.frames': cuda0, 'add.output': cuda0, 'copy.output': cuda1 } };
      return { graph, sink, plan: unwrap(compile(graph, { deployment })) };
    }

    for (const peerAccess of [true, false]) {
      it(`copies every frame onto cuda:1 ${peerAccess ? 'by peer copy' : 'staged through pinned host memory'}, ordered by events, every slot back, the ordering checker silent`, async () => {
        const backend = new HostBackend({ deviceCount: 2, orderingChecker: true, seed: 5, peerAccess });
        const seen = watch(backend);
        const copyAsync = vi.spyOn(backend.peerCopy, 'copyAsync');
        const synchronizeEvent = vi.spyOn(backend, 'synchronizeEvent');
        const { plan, sink } = copied(10);
        expect(plan.operator('copy')?.device).toBe(cuda1);
        expect(plan.edge('add.output->copy.input')).toMatchObject({ crossDevice: true });
        const session = unwrap(RunSession.create(plan, { backend }));
        const metrics = await session.run();
        expect(sink.firstBytes).toEqual(expected(10));
        expect([...sink.streamDevices, ...sink.tensorDevices]).toEqual(['cuda:1', 'cuda:1']);
        expect(copyAsync).toHaveBeenCalledTimes(10);
        expect(copyAsync.mock.results.map((r) => (r.value as Result<string>).ok && (r.value as { value: string }).value)).toEqual(Array(10).fill(peerAccess ? 'peer' : 'staged'));
        expect(metrics.pools.map((p) => [p.id, p.outstanding])).toEqual(metrics.pools.map((p) => [p.id, 0]));
        expect(backend.orderingChecker?.violations).toEqual([]);
        // Only the copy's stream waits across devices (on add's readiness events); nothing records or frees across them.
        expect(seen.mismatches.filter((m) => !m.startsWith('wait on pool:add.output'))).toEqual([]);
        expect(seen.mismatches.filter((m) => m.startsWith('wait on pool:add.output')).length).toBe(10);
        // The copy releases add's slots in stream order on cuda:1 (release events of add's pool made there), never by a host wait.
        const records = vi
          .mocked(backend.recordEvent)
          .mock.calls.filter(([event]) => event.label.includes('add.output') && event.label.includes('release'))
          .map(([event, stream]) => `${event.device.toString()} ${stream.device.toString()}`);
        expect(records).toHaveLength(10);
        expect(new Set(records.map((r) => r.split(' ')[0]))).toEqual(new Set(['cuda:1']));
        expect(seen.events.filter((e) => e.label.includes('add.output') && e.label.includes('release') && e.device === cuda1).length).toBeGreaterThan(0);
        expect(synchronizeEvent).not.toHaveBeenCalled();
        session.dispose();
        backend.dispose();
      });
    }

    it('copies on one device too (cuda:0 -> cuda:0)', async () => {
      const backend = new HostBackend({ deviceCount: 1, orderingChecker: true });
      const graph = new Graph('device-copy-same');
      const source = graph.add(new FillSource('source', 4));
      const copy = graph.add(new DeviceCopy('copy', { dtype: DType.uint8, rank: 1, maxByteSpan: FRAME }));
      const sink = graph.add(new ProbeSink('sink'));
      graph.addFlow(source.frames, copy.input);
      graph.addFlow(copy.output, sink.input);
      const plan = unwrap(compile(graph, { deployment: bindDevices(graph, { source: cuda0, copy: cuda0, sink: cuda0 }) }));
      const session = unwrap(RunSession.create(plan, { backend }));
      await session.run();
      expect(sink.firstBytes).toEqual([1, 2, 3, 4]);
      expect(backend.orderingChecker?.violations).toEqual([]);
      session.dispose();
      backend.dispose();
    });

    it('keeps a copy refused by a full reject edge for a retry instead of failing the run', async () => {
      /** A sink that takes a while per frame, so the reject edge in front of it fills. */
      class SlowSink extends ProbeSink {
        override async compute(ctx: ExecutionContext): Promise<Result<void>> {
          const done = await super.compute(ctx);
          await new Promise((resolve) => setTimeout(resolve, 2));
          return done;
        }
      }
      const backend = new HostBackend({ deviceCount: 2, orderingChecker: true });
      const graph = new Graph('device-copy-reject');
      const source = graph.add(new FillSource('source', 12));
      const copy = graph.add(new DeviceCopy('copy', { dtype: DType.uint8, rank: 1, maxByteSpan: FRAME }));
      const sink = graph.add(new SlowSink('sink'));
      graph.addFlow(source.frames, copy.input);
      graph.addFlow(copy.output, sink.input, { queueDepth: 1, dropPolicy: 'reject' });
      const deployment = { bindTensorOutputDevice: { 'source.frames': cuda0, 'copy.output': cuda1 } };
      const session = unwrap(RunSession.create(unwrap(compile(graph, { deployment })), { backend }));
      const metrics = await session.run();
      expect(metrics.edges.find((e) => e.dropPolicy === 'reject')?.backpressured).toBeGreaterThan(0);
      expect(metrics.operators.find((o) => o.name === 'copy')?.retries).toBeGreaterThan(0);
      expect(sink.firstBytes).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(metrics.pools.map((p) => [p.id, p.outstanding])).toEqual(metrics.pools.map((p) => [p.id, 0]));
      expect(backend.orderingChecker?.violations).toEqual([]);
      session.dispose();
      backend.dispose();
    });

    it('refuses bad options', () => {
      expect(() => new DeviceCopy('copy', { dtype: DType.uint8, rank: 1, maxByteSpan: 0 })).toThrow(/positive safe-integer maxByteSpan/);
      // A missing or misspelt dtype is refused by the constructor that names it, not later by a port declaration.
      for (const dtype of [undefined, 'uint8', 'banana']) {
        expect(() => new DeviceCopy('copy', { dtype, rank: 1, maxByteSpan: FRAME } as never)).toThrow(/DeviceCopy copy: options need dtype \(a DType such as DType\.uint8\)/);
      }
    });
  });
});
