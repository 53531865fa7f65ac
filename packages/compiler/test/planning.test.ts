import { Device, MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { DiagnosticCode, Graph, type InputPort, type OutputPort } from '../src/index.js';
import { ScriptedOperator, allOnCuda0, compileOk, cudaGraph, deviceFrames } from './support/operators.js';

describe('execution partitions and streams', () => {
  it('keeps a linear chain in one partition on one stream', () => {
    const graph = cudaGraph('chain', ['a->b', 'b->c']);
    const plan = compileOk(graph, allOnCuda0(graph));
    expect(plan.partitions).toEqual([{ id: 'partition:a', operators: ['a', 'b', 'c'], hostOnly: false, streams: ['stream:a@cuda:0'] }]);
    expect(plan.streams).toEqual([{ id: 'stream:a@cuda:0', device: Device.cuda(0), partitions: ['partition:a'] }]);
    expect(plan.operators.map((o) => [o.name, o.partition, o.stream, o.device])).toEqual([
      ['a', 'partition:a', 'stream:a@cuda:0', Device.cuda(0)],
      ['b', 'partition:a', 'stream:a@cuda:0', Device.cuda(0)],
      ['c', 'partition:a', 'stream:a@cuda:0', Device.cuda(0)],
    ]);
  });

  it('splits a fork into three partitions with three streams', () => {
    const graph = cudaGraph('fork', ['a->b', 'a->c']);
    const plan = compileOk(graph, allOnCuda0(graph));
    expect(plan.partitions.map((p) => [p.id, p.operators, p.streams])).toEqual([
      ['partition:a', ['a'], ['stream:a@cuda:0']],
      ['partition:b', ['b'], ['stream:b@cuda:0']],
      ['partition:c', ['c'], ['stream:c@cuda:0']],
    ]);
    expect(plan.streams.map((s) => s.id)).toEqual(['stream:a@cuda:0', 'stream:b@cuda:0', 'stream:c@cuda:0']);
    expect(new Set(plan.operators.map((o) => o.stream)).size).toBe(3);
  });

  it('plans one stream per device under sharedProcessDevice', () => {
    const graph = cudaGraph('fork', ['a->b', 'a->c']);
    const plan = compileOk(graph, allOnCuda0(graph, { computeStreamPolicy: 'sharedProcessDevice' }));
    expect(plan.partitions).toHaveLength(3);
    expect(plan.streams).toEqual([
      { id: 'stream:shared@cuda:0', device: Device.cuda(0), partitions: ['partition:a', 'partition:b', 'partition:c'] },
    ]);
    expect(plan.operators.every((o) => o.stream === 'stream:shared@cuda:0')).toBe(true);
    expect(plan.options.computeStreamPolicy).toBe('sharedProcessDevice');
  });

  it('splits a join: the joining operator heads its own partition', () => {
    const graph = cudaGraph('join', ['a->c', 'b->c', 'c->d']);
    const plan = compileOk(graph, allOnCuda0(graph));
    expect(plan.partitions.map((p) => [p.id, p.operators])).toEqual([
      ['partition:a', ['a']],
      ['partition:b', ['b']],
      ['partition:c', ['c', 'd']],
    ]);
    expect(plan.streams).toHaveLength(3);
  });

  it('gives host-only partitions no stream', () => {
    const graph = new Graph('mixed');
    let hostOut!: OutputPort;
    let cudaIn!: InputPort;
    let cudaOut!: OutputPort;
    let hostIn!: InputPort;
    let hostIn2!: InputPort;
    graph.add(
      new ScriptedOperator('reader', (s) => {
        hostOut = s.output('frames').producesTensor({
          representation: { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 3 },
          bounds: { maxByteSpan: 4096 },
          storage: 'runtimePool',
        });
      }),
    );
    graph.add(
      new ScriptedOperator('gpu', (s) => {
        cudaIn = s.input('rgba', { memoryKind: MemoryKind.PinnedHost });
        cudaOut = s.output('gray').producesTensor(deviceFrames());
      }),
    );
    graph.add(new ScriptedOperator('logger', (s) => (hostIn = s.input('frames'))));
    graph.add(new ScriptedOperator('sink', (s) => (hostIn2 = s.input('gray', { memoryKind: MemoryKind.CudaDevice }))));
    graph.addFlow(hostOut, cudaIn);
    graph.addFlow(hostOut, hostIn);
    graph.addFlow(cudaOut, hostIn2);
    const plan = compileOk(graph, { deployment: { bindTensorOutputDevice: { 'gpu.gray': Device.cuda(1) } } });
    expect(plan.partitions.map((p) => [p.id, p.operators, p.hostOnly, p.streams])).toEqual([
      ['partition:reader', ['reader'], true, []],
      ['partition:gpu', ['gpu', 'sink'], false, ['stream:gpu@cuda:1']],
      ['partition:logger', ['logger'], true, []],
    ]);
    expect(plan.operator('reader')).toMatchObject({ cudaActive: false, device: null, stream: null });
    expect(plan.operator('sink')).toMatchObject({ cudaActive: true, device: Device.cuda(1), stream: 'stream:gpu@cuda:1' });
    const readerPool = plan.pool('pool:reader.frames');
    expect(readerPool).toMatchObject({ device: Device.cpu(), memoryKind: MemoryKind.PinnedHost, producerStream: null });
  });

  it('plans one stream per device inside a partition that spans two devices', () => {
    const graph = new Graph('two-devices');
    let out!: OutputPort;
    let inp!: InputPort;
    graph.add(new ScriptedOperator('a', (s) => (s.requireCudaStream(), (out = s.output('out')))));
    graph.add(new ScriptedOperator('b', (s) => (s.requireCudaStream(), (inp = s.input('in')))));
    graph.addFlow(out, inp);
    const plan = compileOk(graph, { deployment: { bindOperatorDevice: { a: Device.cuda(1), b: Device.cuda(0) } } });
    expect(plan.partitions).toEqual([
      { id: 'partition:a', operators: ['a', 'b'], hostOnly: false, streams: ['stream:a@cuda:0', 'stream:a@cuda:1'] },
    ]);
    expect(plan.operator('a')?.stream).toBe('stream:a@cuda:1');
    expect(plan.operator('b')?.stream).toBe('stream:a@cuda:0');
  });
});

describe('edges and tensor allocation records', () => {
  it('records explicit and default queue depths', () => {
    const graph = cudaGraph('depths', ['a->b', 'a->c'], { 'a->c': 4 });
    const plan = compileOk(graph, allOnCuda0(graph, { defaultQueueDepth: 3 }));
    expect(plan.edge('a.out->b.in0')).toEqual({
      id: 'a.out->b.in0',
      producer: { operator: 'a', port: 'out' },
      consumer: { operator: 'b', port: 'in0' },
      queueDepth: 3,
      admittedQueueDepth: 3,
      queueDepthSource: 'default',
      pool: 'pool:a.out',
      dropPolicy: 'block',
      hostWait: false,
      crossDevice: false,
    });
    expect(plan.edge('a.out->c.in0')).toMatchObject({ queueDepth: 4, queueDepthSource: 'explicit' });
  });

  it('derives slot count from the deepest consumer queue plus in-hand, retirement and producer loan', () => {
    const graph = new Graph('slots');
    let out!: OutputPort;
    const inputs: InputPort[] = [];
    graph.add(new ScriptedOperator('cam', (s) => (out = s.output('frames').producesTensor(deviceFrames(1000)))));
    for (const name of ['fast', 'slow']) {
      graph.add(new ScriptedOperator(name, (s) => inputs.push(s.input('in', { memoryKind: MemoryKind.CudaDevice }))));
    }
    graph.addFlow(out, inputs[1] as InputPort, { queueDepth: 5 });
    graph.addFlow(out, inputs[0] as InputPort);
    const plan = compileOk(graph, { deployment: { bindTensorOutputDevice: { 'cam.frames': Device.cuda(0) } } });
    const pool = plan.pool('pool:cam.frames');
    expect(pool).toMatchObject({
      producer: { operator: 'cam', port: 'frames' },
      memoryKind: MemoryKind.CudaDevice,
      device: Device.cuda(0),
      dtype: DType.uint8,
      maxByteSpan: 1000,
      maxRank: 2,
      alignment: 256,
      slotBytes: 1024,
      slotCount: 8,
      totalBytes: 8192,
      // Two other CUDA-active operators on cuda:0 (2 streams each) + the producer stream.
      maxReleaseStreams: 5,
      releaseStreamCap: { domain: 'cuda:0', otherCudaOperators: 2, streamsPerOtherOperator: 2, producerStreams: 1, stagingStreams: 0, cap: 5 },
      producerStream: 'stream:cam@cuda:0',
      consumers: ['cam.frames->fast.in', 'cam.frames->slow.in'],
    });
    expect(pool?.derivation.terms.map((t) => [t.term, t.value])).toEqual([
      ['maxConsumerQueueDepth', 5],
      ['consumerInHand', 1],
      ['retirement', 1],
      ['producerLoan', 1],
    ]);
    expect(pool?.derivation.terms[0]?.source).toBe('queueDepth of edge cam.frames->slow.in (explicit)');
    expect(pool?.derivation.text).toBe(
      'slotCount = 5 (maxConsumerQueueDepth) + 1 (consumerInHand) + 1 (retirement) + 1 (producerLoan) = 8; ' +
        'slotBytes = 1000 B rounded up to 256 B = 1024 B',
    );
    expect(plan.operator('cam')?.outputs[0]).toMatchObject({ pool: 'pool:cam.frames', device: Device.cuda(0) });
  });

  it('keeps slot bytes already on the alignment and warns about a pool nobody consumes', () => {
    const graph = new Graph('lonely');
    graph.add(new ScriptedOperator('a', (s) => s.output('out').producesTensor(deviceFrames(4096))));
    const plan = compileOk(graph, allOnCuda0(graph));
    expect(plan.pool('pool:a.out')).toMatchObject({ slotBytes: 4096, slotCount: 3, consumers: [] });
    expect(plan.pool('pool:a.out')?.derivation.terms[0]).toMatchObject({ value: 0, source: 'no consuming edge' });
    expect(plan.diagnostics.map((d) => [d.code, d.severity])).toEqual([[DiagnosticCode.UnconsumedPool, 'warning']]);
  });

  it('plans no pool for pass-through outputs', () => {
    const graph = new Graph('pass');
    let out!: OutputPort;
    let inp!: InputPort;
    graph.add(
      new ScriptedOperator('a', (s) => {
        out = s.output('out').producesTensor({ representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.float32, rank: 1 } });
      }),
    );
    graph.add(new ScriptedOperator('b', (s) => (inp = s.input('in', { dtype: DType.float32 }), s.requireCudaStream())));
    graph.addFlow(out, inp);
    const plan = compileOk(graph, { deployment: { bindOperatorDevice: { a: Device.cuda(0) } } });
    expect(plan.pools).toEqual([]);
    expect(plan.edge('a.out->b.in')?.pool).toBeNull();
    expect(plan.operator('b')?.device).toBe(Device.cuda(0));
  });

  it('warns when a host-only operator receives cudaDevice tensors', () => {
    const graph = new Graph('host-consumer');
    let out!: OutputPort;
    let inp!: InputPort;
    graph.add(new ScriptedOperator('a', (s) => (out = s.output('out').producesTensor(deviceFrames()))));
    graph.add(new ScriptedOperator('b', (s) => (inp = s.input('in'))));
    graph.addFlow(out, inp);
    const plan = compileOk(graph, allOnCuda0(graph));
    expect(plan.operator('b')?.cudaActive).toBe(false);
    expect(plan.diagnostics.map((d) => d.code)).toEqual([DiagnosticCode.DeviceBindingUnused, DiagnosticCode.DeviceTensorToHostOnlyOperator]);
  });
});
