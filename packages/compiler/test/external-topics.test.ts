import { Device, ErrorCode, HsError, MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { DiagnosticCode, Graph, inputMaxByteSpan, tensorByteSpan, type InputPort, type OutputPort, type TensorOutputSpec } from '../src/index.js';
import { DEVICE_FRAMES_IN, ScriptedOperator, bindAll, compileFailure, compileOk, deviceFrames } from './support/operators.js';

const HOST_FRAMES: TensorOutputSpec = {
  representation: { memoryKind: MemoryKind.Host, dtype: DType.float32, rank: 1 },
  bounds: { maxByteSpan: 4096 },
  storage: 'runtimePool',
};

/** `src` with one output declared by `spec`, optionally feeding a local consumer `sink`. */
function producerGraph(spec: TensorOutputSpec, options: { localSink?: boolean } = {}): { graph: Graph; out: OutputPort } {
  const graph = new Graph('producer');
  let out!: OutputPort;
  graph.add(new ScriptedOperator('src', (s) => (out = s.output('out').producesTensor(spec))));
  if (options.localSink === true) {
    let input!: InputPort;
    graph.add(new ScriptedOperator('sink', (s) => (input = s.input('in', { memoryKind: spec.representation.memoryKind as MemoryKind }))));
    graph.addFlow(out, input);
  }
  return { graph, out };
}

/** `sink` with one input of `requirements`. */
function consumerGraph(requirements: Parameters<import('../src/index.js').OperatorSpec['input']>[1]): { graph: Graph; input: InputPort } {
  const graph = new Graph('consumer');
  let input!: InputPort;
  graph.add(new ScriptedOperator('sink', (s) => (input = s.input('in', requirements))));
  return { graph, input };
}

describe('external topics: publication (spec: Crossing process boundaries)', () => {
  it('turns a device runtime pool into a CUDA IPC boundary pool with a generation fence, keeping fences on the local edge', () => {
    const { graph, out } = producerGraph(deviceFrames(1000), { localSink: true });
    graph.publish(out, 'camera.frames', { subscriberQueueDepth: 4, maxSubscribers: 2 });
    const plan = compileOk(graph, { deployment: bindAll(graph) });
    const pool = plan.pool('pool:src.out');
    expect(pool?.boundary).toEqual({
      topic: 'camera.frames',
      transport: 'cudaIpc',
      staging: 'direct',
      fence: 'generation',
      subscriberQueueDepth: 4,
      maxSubscribers: 2,
    });
    // 4 (the subscriber queue is deeper than the local edge's 2) + 1 in hand + 1 retirement + 1 loan + 1 boundary return.
    expect(pool?.slotCount).toBe(8);
    expect(pool?.slotBytes).toBe(1024);
    expect(pool?.derivation.terms.map((t) => [t.term, t.admittedValue])).toEqual([
      ['maxConsumerQueueDepth', 4],
      ['consumerInHand', 1],
      ['retirement', 1],
      ['producerLoan', 1],
      ['boundaryReturn', 1],
    ]);
    expect(pool?.derivation.terms[0]?.source).toBe("subscriberQueueDepth of topic 'camera.frames' (explicit)");
    // Mixed fanout (a local consumer plus a cross-process subscriber) gets no fusion authority.
    expect(plan.fusedEdges).toEqual([]);
    expect(plan.operator('src')?.outputs[0]?.topic).toBe('camera.frames');
    expect(plan.topic('camera.frames')).toEqual([
      {
        topic: 'camera.frames',
        direction: 'publish',
        port: { operator: 'src', port: 'out' },
        memoryKind: MemoryKind.CudaDevice,
        device: Device.cuda(0),
        transport: 'cudaIpc',
        stream: 'stream:src@cuda:0',
        queueDepth: 4,
        queueDepthSource: 'explicit',
        maxSubscribers: 2,
        pool: 'pool:src.out',
        dtype: DType.uint8,
        rank: 2,
        maxByteSpan: 1000,
        maxReleaseStreams: pool?.maxReleaseStreams,
      },
    ]);
  });

  it('keeps the local edge as the deepest term when it is deeper than the subscriber queue, and fuses nothing', () => {
    const { graph, out } = producerGraph(deviceFrames(), { localSink: true });
    graph.publish(out, 't');
    const plan = compileOk(graph, { defaultQueueDepth: 3, deployment: bindAll(graph) });
    const terms = plan.pool('pool:src.out')?.derivation.terms ?? [];
    expect(terms[0]).toMatchObject({ term: 'maxConsumerQueueDepth', admittedValue: 3, source: 'queueDepth of edge src.out->sink.in (default)' });
    expect(plan.pool('pool:src.out')?.slotCount).toBe(7);
    expect(plan.topic('t')[0]).toMatchObject({ queueDepth: 3, queueDepthSource: 'default', maxSubscribers: 4 });
  });

  it('publishes host memory from a host-only producer over POSIX shm with no fence', () => {
    const { graph, out } = producerGraph(HOST_FRAMES);
    graph.publish(out, 'imu');
    const plan = compileOk(graph);
    expect(plan.operator('src')?.cudaActive).toBe(false);
    expect(plan.pool('pool:src.out')).toMatchObject({ producerStream: null, device: Device.cpu(), consumers: [] });
    expect(plan.pool('pool:src.out')?.boundary).toMatchObject({ transport: 'posixShm', fence: 'none', staging: 'direct' });
    expect(plan.topic('imu')[0]).toMatchObject({ device: Device.cpu(), stream: null, transport: 'posixShm' });
    // A published pool with no local consumer is not unconsumed.
    expect(plan.diagnostics.map((d) => d.code)).not.toContain(DiagnosticCode.UnconsumedPool);
  });

  it('gives a pinnedHost publisher a planned stream on the endpoint device; its boundary pool is host-written', () => {
    const pinned: TensorOutputSpec = { ...HOST_FRAMES, representation: { ...HOST_FRAMES.representation, memoryKind: MemoryKind.PinnedHost } };
    const unbound = producerGraph(pinned);
    unbound.graph.publish(unbound.out, 'pinned');
    const error = compileFailure(unbound.graph);
    expect(error.errors.map((d) => [d.code, d.subject])).toEqual([[DiagnosticCode.DeviceBindingRequired, { kind: 'topic', topic: 'pinned' }]]);
    expect(error.errors[0]?.message).toContain("deployment.bindTopicDevice['pinned']");

    const bound = producerGraph(pinned);
    bound.graph.publish(bound.out, 'pinned');
    const plan = compileOk(bound.graph, { deployment: { bindTopicDevice: { pinned: Device.cuda(1) } } });
    expect(plan.operator('src')).toMatchObject({ cudaActive: true, device: Device.cuda(1), stream: 'stream:src@cuda:1' });
    // The shared-memory transport carries no device fence: the pool is host-written, the operator still has its stream.
    expect(plan.pool('pool:src.out')).toMatchObject({ producerStream: null, device: Device.cpu() });
    expect(plan.pool('pool:src.out')?.boundary).toMatchObject({ transport: 'posixShm', fence: 'none' });
    expect(plan.topic('pinned')[0]).toMatchObject({ device: Device.cuda(1), memoryKind: MemoryKind.PinnedHost });
  });

  it("plans a pinnedHost boundary written on the producer's stream with a generation fence when the publication declares the CUDA-stream writer", () => {
    const pinned: TensorOutputSpec = { ...HOST_FRAMES, representation: { ...HOST_FRAMES.representation, memoryKind: MemoryKind.PinnedHost } };
    const bound = producerGraph(pinned);
    bound.graph.publish(bound.out, 'pinned', { pinnedHostWriter: 'cudaStream' });
    const plan = compileOk(bound.graph, { deployment: { bindTopicDevice: { pinned: Device.cuda(1) } } });
    expect(plan.pool('pool:src.out')).toMatchObject({ producerStream: 'stream:src@cuda:1', device: Device.cpu() });
    expect(plan.pool('pool:src.out')?.boundary).toMatchObject({ transport: 'posixShm', fence: 'generation' });
    // Only pinnedHost outputs take it, and only the two writers exist.
    const host = producerGraph(HOST_FRAMES);
    host.graph.publish(host.out, 'host', { pinnedHostWriter: 'cudaStream' });
    expect(compileFailure(host.graph).errors.map((d) => d.code)).toEqual([DiagnosticCode.TopicOptionInvalid]);
    const unknown = producerGraph(pinned);
    unknown.graph.publish(unknown.out, 'pinned', { pinnedHostWriter: 'gpu' as 'host' });
    const failure = compileFailure(unknown.graph, { deployment: { bindTopicDevice: { pinned: Device.cuda(1) } } });
    expect(failure.errors.map((d) => d.code)).toEqual([DiagnosticCode.TopicOptionInvalid]);
    expect(failure.errors[0]?.message).toContain("pinnedHostWriter \"gpu\" is not 'host' or 'cudaStream'");
  });

  it('copies a bounded pass-through output into its own boundary pool; an unbounded one is rejected', () => {
    const passThrough: TensorOutputSpec = {
      representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.float32, rank: 1 },
      bounds: { maxByteSpan: 512 },
    };
    const { graph, out } = producerGraph(passThrough, { localSink: true });
    graph.publish(out, 'foreign');
    const plan = compileOk(graph, { deployment: { bindOperatorDevice: { src: Device.cuda(0), sink: Device.cuda(0) } } });
    expect(plan.pool('boundary:foreign')).toMatchObject({ producer: { operator: 'src', port: 'out' }, consumers: [], producerStream: 'stream:src@cuda:0' });
    expect(plan.pool('boundary:foreign')?.boundary).toMatchObject({ staging: 'copy', transport: 'cudaIpc', fence: 'generation' });
    expect(plan.operator('src')?.outputs[0]?.pool).toBeNull();
    expect(plan.edge('src.out->sink.in')?.pool).toBeNull();
    expect(plan.topic('foreign')[0]?.pool).toBe('boundary:foreign');

    const unbounded = producerGraph({ representation: passThrough.representation });
    unbounded.graph.publish(unbounded.out, 'foreign');
    const error = compileFailure(unbounded.graph, { deployment: { bindOperatorDevice: { src: Device.cuda(0) } } });
    expect(error.errors.map((d) => d.code)).toEqual([DiagnosticCode.TopicBoundsRequired]);
  });

  it('rejects a published output with zero bounds (TOPIC_BOUNDS_REQUIRED), which a local pool accepts', () => {
    for (const bounds of [{ maxByteSpan: 0 }, { maxByteSpan: 64, maxRank: 0 }]) {
      const { graph, out } = producerGraph({ ...HOST_FRAMES, bounds });
      graph.publish(out, 'zero');
      const error = compileFailure(graph);
      expect(error.errors.map((d) => d.code)).toEqual([DiagnosticCode.TopicBoundsRequired]);
      expect(error.errors[0]?.message).toMatch(/with bounds\.(maxByteSpan|maxRank) 0, a pool that rejects every allocation; .*declare positive bounds/);
    }
  });

  it('rejects managed memory at a boundary on either side (TOPIC_MANAGED_MEMORY)', () => {
    const managed = producerGraph({ ...deviceFrames(), representation: { ...deviceFrames().representation, memoryKind: MemoryKind.CudaManaged } });
    managed.graph.publish(managed.out, 'm');
    const published = compileFailure(managed.graph, { deployment: bindAll(managed.graph) });
    expect(published.errors.map((d) => [d.code, d.subject])).toEqual([[DiagnosticCode.TopicManagedMemory, { kind: 'topic', topic: 'm' }]]);

    const consumer = consumerGraph({ memoryKind: MemoryKind.CudaManaged });
    consumer.graph.subscribe('m', consumer.input);
    const subscribed = compileFailure(consumer.graph, { deployment: { bindOperatorDevice: { sink: Device.cuda(0) } } });
    expect(subscribed.errors.map((d) => d.code)).toEqual([DiagnosticCode.TopicManagedMemory]);
  });

  it('checks options, endpoints per topic and per output', () => {
    const bad = producerGraph(HOST_FRAMES);
    bad.graph.publish(bad.out, 'a', { subscriberQueueDepth: 0, maxSubscribers: 1 });
    expect(compileFailure(bad.graph).errors.map((d) => d.code)).toEqual([DiagnosticCode.QueueDepthInvalid]);

    const tooMany = producerGraph(HOST_FRAMES);
    tooMany.graph.publish(tooMany.out, 'a', { maxSubscribers: 65 });
    expect(compileFailure(tooMany.graph).errors.map((d) => d.code)).toEqual([DiagnosticCode.TopicOptionInvalid]);

    const twice = producerGraph(HOST_FRAMES);
    twice.graph.publish(twice.out, 'a');
    twice.graph.publish(twice.out, 'b');
    const both = compileFailure(twice.graph).errors;
    expect(both.map((d) => [d.code, d.subject])).toEqual([[DiagnosticCode.TopicEndpointConflict, { kind: 'topic', topic: 'b' }]]);

    const loop = producerGraph(HOST_FRAMES);
    let input!: InputPort;
    loop.graph.add(new ScriptedOperator('reader', (s) => (input = s.input('in', { memoryKind: MemoryKind.Host }))));
    loop.graph.publish(loop.out, 'a');
    loop.graph.subscribe('a', input);
    expect(compileFailure(loop.graph).errors[0]?.message).toContain('connect them with graph.addFlow() instead');
  });
});

describe('external topics: subscription', () => {
  it('places a device import by its endpoint name and plans a stream for the consumer', () => {
    const unbound = consumerGraph(DEVICE_FRAMES_IN);
    unbound.graph.subscribe('camera.frames', unbound.input);
    const error = compileFailure(unbound.graph);
    expect(error.errors.map((d) => [d.code, d.subject])).toEqual([[DiagnosticCode.DeviceBindingRequired, { kind: 'topic', topic: 'camera.frames' }]]);

    const { graph, input } = consumerGraph(DEVICE_FRAMES_IN);
    graph.subscribe('camera.frames', input, { queueDepth: 3 });
    const plan = compileOk(graph, { deployment: { bindTopicDevice: { 'camera.frames': Device.cuda(0) } } });
    expect(plan.operator('sink')).toMatchObject({ cudaActive: true, device: Device.cuda(0), stream: 'stream:sink@cuda:0' });
    expect(plan.operator('sink')?.inputs[0]).toMatchObject({ topic: 'camera.frames', edge: null });
    expect(plan.topic('camera.frames')).toEqual([
      {
        topic: 'camera.frames',
        direction: 'subscribe',
        port: { operator: 'sink', port: 'in' },
        memoryKind: MemoryKind.CudaDevice,
        device: Device.cuda(0),
        transport: 'cudaIpc',
        stream: 'stream:sink@cuda:0',
        queueDepth: 3,
        queueDepthSource: 'explicit',
        maxSubscribers: null,
        pool: null,
        dtype: DType.uint8,
        rank: 2,
        maxByteSpan: null,
        maxReleaseStreams: 2,
      },
    ]);
  });

  // Spec: "Fanout release-stream caps": an imported slot's bound is device-wide, like a pool's.
  it('bounds the release streams of an imported slot by every CUDA-active operator on the consumer device', () => {
    const { graph, input } = consumerGraph(DEVICE_FRAMES_IN);
    for (const name of ['a', 'b']) graph.add(new ScriptedOperator(name, (s) => s.requireCudaStream()));
    graph.subscribe('camera.frames', input);
    const device = Device.cuda(0);
    const plan = compileOk(graph, { deployment: { bindTopicDevice: { 'camera.frames': device }, bindOperatorDevice: { a: device, b: device } } });
    expect(plan.topic('camera.frames')[0]).toMatchObject({ direction: 'subscribe', maxReleaseStreams: 6 });
  });

  it('imports pinnedHost on a planned stream and host memory with none', () => {
    const pinned = consumerGraph({ memoryKind: MemoryKind.PinnedHost });
    pinned.graph.subscribe('p', pinned.input);
    const plan = compileOk(pinned.graph, { deployment: { bindTopicDevice: { p: Device.cuda(0) } } });
    expect(plan.operator('sink')).toMatchObject({ cudaActive: true, stream: 'stream:sink@cuda:0' });

    const host = consumerGraph({ memoryKind: MemoryKind.Host });
    host.graph.subscribe('h', host.input);
    const hostPlan = compileOk(host.graph);
    expect(hostPlan.operator('sink')).toMatchObject({ cudaActive: false, stream: null });
    expect(hostPlan.topic('h')[0]).toMatchObject({ device: Device.cpu(), transport: 'posixShm', queueDepth: 2, queueDepthSource: 'default', maxReleaseStreams: 1 });
    expect(plan.topic('p')[0]).toMatchObject({ maxReleaseStreams: 2 });
  });

  it("gives inputMaxByteSpan of a subscribed input the topic's declared bound (spec: an imported external-topic bound)", () => {
    /** `gray` subscribes `rgba` and derives its own runtime pool from the topic's bound, a quarter of it. */
    const grayGraph = (options: { maxByteSpan?: number }) => {
      const graph = new Graph('gray');
      let input!: InputPort;
      let out!: OutputPort;
      graph.add(
        new ScriptedOperator('gray', (s) => {
          input = s.input('rgba', { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 });
          out = s.output('gray').producesTensor(
            { representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 2 }, storage: 'runtimePool' },
            inputMaxByteSpan(input).ceilingDividedBy(tensorByteSpan(4)),
          );
        }),
      );
      let sinkIn!: InputPort;
      graph.add(new ScriptedOperator('sink', (s) => (sinkIn = s.input('in', { memoryKind: MemoryKind.Host }))));
      graph.addFlow(out, sinkIn);
      graph.subscribe('camera.rgba', input, options);
      return graph;
    };
    const plan = compileOk(grayGraph({ maxByteSpan: 640 * 480 * 4 + 3 }));
    expect(plan.pool('pool:gray.gray')).toMatchObject({ maxByteSpan: 640 * 480 + 1, byteSpanSource: 'derived' });
    expect(plan.byteSpanDerivations[0]).toMatchObject({ expression: `ceilDiv(inputMax(gray.rgba)=${640 * 480 * 4 + 3}, 4)`, dependencies: ['gray.rgba'] });
    expect(plan.topic('camera.rgba')[0]).toMatchObject({ direction: 'subscribe', maxByteSpan: 640 * 480 * 4 + 3 });
    expect(plan.toText()).toContain(`camera.rgba: subscribed by gray.rgba, queueDepth 2, maxByteSpan ${640 * 480 * 4 + 3};`);

    const unbounded = compileFailure(grayGraph({}));
    expect(unbounded.errors.map((d) => d.code)).toEqual([DiagnosticCode.TensorByteSpanInputUnbounded]);
    expect(unbounded.errors[0]?.message).toContain(
      "inputMaxByteSpan(gray.rgba) subscribes to topic 'camera.rgba' without a byte bound (pass the publisher's bound as graph.subscribe('camera.rgba', gray.rgba, { maxByteSpan }))",
    );
    for (const bad of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1]) {
      const error = compileFailure(grayGraph({ maxByteSpan: bad }));
      expect(error.errors.map((d) => d.code)).toEqual([DiagnosticCode.TopicOptionInvalid, DiagnosticCode.TensorByteSpanInputUnbounded]);
      expect(error.errors[0]?.message).toContain(`maxByteSpan ${bad} is not a positive safe integer of bytes`);
    }
  });

  it('requires a memory kind on the subscribed input, and one source per input', () => {
    const untyped = consumerGraph({ dtype: DType.uint8 });
    untyped.graph.subscribe('t', untyped.input);
    expect(compileFailure(untyped.graph).errors.map((d) => d.code)).toEqual([DiagnosticCode.TopicMemoryKindRequired]);

    const fanIn = consumerGraph({ memoryKind: MemoryKind.Host });
    let out!: OutputPort;
    fanIn.graph.add(new ScriptedOperator('local', (s) => (out = s.output('out').producesTensor(HOST_FRAMES))));
    fanIn.graph.addFlow(out, fanIn.input);
    fanIn.graph.subscribe('t', fanIn.input);
    const error = compileFailure(fanIn.graph);
    expect(error.errors.map((d) => d.code)).toEqual([DiagnosticCode.InputFanIn]);
    expect(error.errors[0]?.message).toContain("has 2 sources (local.out->sink.in, topic 't')");
  });

  it('checks bindTopicDevice targets and values', () => {
    const { graph, input } = consumerGraph({ memoryKind: MemoryKind.Host });
    graph.subscribe('h', input);
    const error = compileFailure(graph, { deployment: { bindTopicDevice: { h: Device.cuda(0), nope: Device.cuda(0), cpu: Device.cpu() } } });
    expect(error.errors.map((d) => [d.code, d.subject])).toEqual([
      [DiagnosticCode.DeviceBindingUnknownTarget, { kind: 'option', option: "deployment.bindTopicDevice['cpu']" }],
      [DiagnosticCode.DeviceBindingInvalid, { kind: 'option', option: "deployment.bindTopicDevice['h']" }],
      [DiagnosticCode.DeviceBindingUnknownTarget, { kind: 'option', option: "deployment.bindTopicDevice['nope']" }],
    ]);
  });
});

describe('external topics: authoring and rendering', () => {
  it('throws InvalidArgument for bad topic names, ports of other graphs and swapped arguments', () => {
    const { graph, out } = producerGraph(HOST_FRAMES);
    const other = consumerGraph({ memoryKind: MemoryKind.Host });
    const code = (fn: () => void): ErrorCode | undefined => {
      try {
        fn();
      } catch (error) {
        return error instanceof HsError ? error.code : undefined;
      }
      return undefined;
    };
    for (const name of ['', '.hidden', '-x', 'a b', 'x'.repeat(64), 'a/b']) expect(code(() => graph.publish(out, name))).toBe(ErrorCode.InvalidArgument);
    expect(code(() => graph.subscribe('t', other.input))).toBe(ErrorCode.InvalidArgument);
    expect(code(() => graph.publish(other.input as unknown as OutputPort, 't'))).toBe(ErrorCode.InvalidArgument);
    expect(code(() => graph.publish(out, 't', 3 as never))).toBe(ErrorCode.InvalidArgument);
    expect(graph.publications).toEqual([]);
    graph.publish(out, 'x'.repeat(63));
    expect(graph.publications.map((p) => p.topic)).toEqual(['x'.repeat(63)]);
  });

  it('shows topics and boundary pools in toText, toDot, toMermaid and JSON', () => {
    const { graph, out } = producerGraph(deviceFrames(1000));
    graph.publish(out, 'camera.frames');
    const plan = compileOk(graph, { deployment: { bindTopicDevice: { 'camera.frames': Device.cuda(0) }, bindTensorOutputDevice: { 'src.out': Device.cuda(0) } } });
    const text = plan.toText();
    expect(text).toContain("boundary of topic 'camera.frames': cudaIpc, published in place, generation fence on the producer stream, subscriberQueueDepth 2, maxSubscribers 4");
    expect(text).toContain('camera.frames: published by src.out, pool pool:src.out, subscriberQueueDepth 2, maxSubscribers 4; cudaDevice on cuda:0 over cudaIpc, stream stream:src@cuda:0 (default)');
    expect(text).toContain('slotCount = 2 (maxConsumerQueueDepth) + 1 (consumerInHand) + 1 (retirement) + 1 (producerLoan) + 1 (boundaryReturn) = 6');
    const dot = plan.toDot();
    expect(dot).toContain('"topic:camera.frames" [shape=cds, label="topic camera.frames\\ncudaDevice over cudaIpc"];');
    expect(dot).toContain('"src" -> "topic:camera.frames" [label="out: publish\\nqueue 2 (default)\\npool:src.out: 1024 B x 6 = 6144 B", style=dashed];');
    expect(plan.toMermaid()).toContain('op0 -."out: publish<br/>queue 2 (default)<br/>pool:src.out: 1024 B x 6 = 6144 B".-> topic0');
    const json = JSON.parse(JSON.stringify(plan)) as { topics: unknown[]; pools: { boundary: unknown }[]; options: { deployment: unknown } };
    expect(json.topics).toHaveLength(1);
    expect(json.pools[0]?.boundary).toMatchObject({ topic: 'camera.frames', transport: 'cudaIpc' });
    expect(json.options.deployment).toMatchObject({ bindTopicDevice: { 'camera.frames': 'cuda:0' } });
  });
});
