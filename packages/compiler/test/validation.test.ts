import { Device, ErrorCode, HsError, MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { CompileError, DiagnosticCode, Graph, compile, type Diagnostic, type InputPort, type OutputPort } from '../src/index.js';
import { DEVICE_FRAMES_IN, ScriptedOperator, allOnCuda0, compileFailure, compileOk, cudaGraph, deviceFrames } from './support/operators.js';

function codes(error: CompileError): DiagnosticCode[] {
  return error.errors.map((d) => d.code);
}

function only(error: CompileError, code: DiagnosticCode): Diagnostic {
  const found = error.errors.filter((d) => d.code === code);
  expect(found, error.message).toHaveLength(1);
  return found[0] as Diagnostic;
}

/** Two host operators `a` (output `out`) and `b` (input `in`), not yet connected. */
function hostPair(inputOptional = false): { graph: Graph; out: OutputPort; inp: InputPort } {
  const graph = new Graph('pair');
  let out!: OutputPort;
  let inp!: InputPort;
  graph.add(new ScriptedOperator('a', (s) => (out = s.output('out'))));
  graph.add(new ScriptedOperator('b', (s) => (inp = s.input('in', undefined, { optional: inputOptional }))));
  return { graph, out, inp };
}

describe('compile() validation', () => {
  it('returns a CompileError value (an HsError with code CompileError) instead of throwing', () => {
    const { graph } = hostPair();
    const result = compile(graph);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(CompileError);
    expect(result.error).toBeInstanceOf(HsError);
    expect(result.error.code).toBe(ErrorCode.CompileError);
    expect(result.error.message).toContain('UNCONNECTED_REQUIRED_INPUT');
  });

  it('reports a cycle with the flows that form it', () => {
    const graph = cudaGraph('loop', ['a->b', 'b->c', 'c->a']);
    const error = compileFailure(graph, allOnCuda0(graph));
    const d = only(error, DiagnosticCode.GraphCycle);
    expect(d.severity).toBe('error');
    expect(d.subject).toEqual({ kind: 'graph', graph: 'loop' });
    expect(d.message).toContain('a.out->b.in0, b.out->c.in0, c.out->a.in0');
    expect(d.message).toMatch(/remove one of these flows/);
  });

  it('reports a self-loop as a cycle', () => {
    const graph = new Graph('self');
    let out!: OutputPort;
    let inp!: InputPort;
    graph.add(new ScriptedOperator('a', (s) => ((inp = s.input('in')), (out = s.output('out')))));
    graph.addFlow(out, inp);
    expect(codes(compileFailure(graph))).toEqual([DiagnosticCode.GraphCycle]);
  });

  it('reports an unconnected required input and accepts an unconnected optional one', () => {
    const d = only(compileFailure(hostPair().graph), DiagnosticCode.UnconnectedRequiredInput);
    expect(d.subject).toEqual({ kind: 'port', operator: 'b', port: 'in' });
    expect(d.message).toMatch(/required input b\.in has no flow; connect it/);
    expect(compile(hostPair(true).graph).ok).toBe(true);
  });

  it('reports duplicate operator names', () => {
    const graph = new Graph('dupes');
    graph.add(new ScriptedOperator('same', () => {}));
    graph.add(new ScriptedOperator('same', () => {}));
    const d = only(compileFailure(graph), DiagnosticCode.DuplicateOperatorName);
    expect(d.subject).toEqual({ kind: 'operator', operator: 'same' });
    expect(d.message).toMatch(/more than one operator named 'same'; give each operator a unique name/);
  });

  it('reports duplicate port names across inputs and outputs', () => {
    const graph = new Graph('ports');
    graph.add(new ScriptedOperator('a', (s) => (s.input('x', undefined, { optional: true }), s.output('x'))));
    const d = only(compileFailure(graph), DiagnosticCode.DuplicatePortName);
    expect(d.subject).toEqual({ kind: 'port', operator: 'a', port: 'x' });
  });

  it('reports fan-in on one input', () => {
    const graph = new Graph('fanin');
    const outs: OutputPort[] = [];
    let inp!: InputPort;
    graph.add(new ScriptedOperator('a', (s) => outs.push(s.output('out'))));
    graph.add(new ScriptedOperator('b', (s) => outs.push(s.output('out'))));
    graph.add(new ScriptedOperator('c', (s) => (inp = s.input('in'))));
    for (const out of outs) graph.addFlow(out, inp);
    const d = only(compileFailure(graph), DiagnosticCode.InputFanIn);
    expect(d.message).toContain('input c.in has 2 flows (a.out->c.in, b.out->c.in)');
  });

  it('plans zero bounds as pools that reject every allocation (a TENSOR_BOUNDS_ZERO warning, not an error)', () => {
    const graph = new Graph('bounds');
    graph.add(new ScriptedOperator('a', (s) => s.output('bytes').producesTensor(deviceFrames(0))));
    graph.add(
      new ScriptedOperator('b', (s) =>
        s.output('rank').producesTensor({
          representation: { memoryKind: MemoryKind.Host, dtype: DType.float32, rank: 3 },
          bounds: { maxByteSpan: 64, maxRank: 0 },
          storage: 'runtimePool',
        }),
      ),
    );
    const plan = compileOk(graph, allOnCuda0(graph));
    const zeros = plan.diagnostics.filter((d) => d.code === DiagnosticCode.TensorBoundsZero);
    expect(zeros.map((d) => [d.severity, d.subject])).toEqual([
      ['warning', { kind: 'port', operator: 'a', port: 'bytes' }],
      ['warning', { kind: 'port', operator: 'b', port: 'rank' }],
    ]);
    expect(zeros[0]?.message).toMatch(/bounds\.maxByteSpan is 0, so its pool rejects every allocation \(allocateTensor\(\) returns InvalidArgument; zero is not "unbounded"\)/);
    expect(plan.pool('pool:a.bytes')).toMatchObject({ maxByteSpan: 0, slotBytes: 0, totalBytes: 0, maxRank: 2 });
    expect(plan.pool('pool:b.rank')).toMatchObject({ maxByteSpan: 64, maxRank: 0 });
  });

  it('reports a maxRank below the rank', () => {
    const graph = new Graph('rank');
    graph.add(
      new ScriptedOperator('c', (s) =>
        s.output('small').producesTensor({
          representation: { memoryKind: MemoryKind.Host, dtype: DType.float32, rank: 3 },
          bounds: { maxByteSpan: 64, maxRank: 2 },
          storage: 'runtimePool',
        }),
      ),
    );
    const error = compileFailure(graph, allOnCuda0(graph));
    expect(only(error, DiagnosticCode.TensorMaxRankTooSmall).message).toMatch(/maxRank 2 is below representation\.rank 3/);
  });

  it('rejects a producer layout the consumer does not accept while authoring, naming each mismatch', () => {
    const graph = new Graph('layout');
    let out!: OutputPort;
    let inp!: InputPort;
    graph.add(new ScriptedOperator('a', (s) => (out = s.output('out').producesTensor(deviceFrames()))));
    graph.add(new ScriptedOperator('b', (s) => (inp = s.input('in', { memoryKind: MemoryKind.CudaDevice, dtype: DType.float32, rank: 3 }))));
    expect(() => graph.addFlow(out, inp)).toThrowError(
      expect.objectContaining({
        code: ErrorCode.InvalidArgument,
        message: expect.stringMatching(/a\.out->b\.in: PHYSICAL_TENSOR_LAYOUT_MISMATCH: .*dtype uint8 vs required float32; rank 2 vs required 3/),
      }),
    );
    expect(graph.flows).toHaveLength(0);
  });

  it('reports a missing device binding for a CUDA pool output instead of guessing device 0', () => {
    const graph = cudaGraph('unbound', ['a->b']);
    const error = compileFailure(graph, { deployment: { bindOperatorDevice: { b: Device.cuda(0) }, bindTensorOutputDevice: { 'b.out': Device.cuda(0) } } });
    const d = only(error, DiagnosticCode.DeviceBindingRequired);
    expect(d.subject).toEqual({ kind: 'port', operator: 'a', port: 'out' });
    expect(d.message).toContain("deployment.bindTensorOutputDevice['a.out'] = Device.cuda(n)");
  });

  it('refuses a runtime-pool CUDA output placed only by its operator binding (spec row 150)', () => {
    for (const memoryKind of [MemoryKind.CudaDevice, MemoryKind.CudaManaged]) {
      const graph = new Graph(`operator-only-${memoryKind}`);
      graph.add(new ScriptedOperator('a', (s) => s.output('out').producesTensor({ ...deviceFrames(), representation: { ...deviceFrames().representation, memoryKind } })));
      const error = compileFailure(graph, { deployment: { bindOperatorDevice: { a: Device.cuda(1) } } });
      const d = only(error, DiagnosticCode.DeviceBindingRequired);
      expect(d.subject).toEqual({ kind: 'port', operator: 'a', port: 'out' });
      expect(d.message).toContain(`requests a runtime pool in ${memoryKind} memory`);
      expect(d.message).toContain('names cuda:1, which places pass-through outputs only');
      // The device the user meant is known: the message says exactly what to write.
      expect(d.message).toContain("add deployment.bindTensorOutputDevice['a.out'] = Device.cuda(1)");
      const plan = compileOk(graph, { deployment: { bindOperatorDevice: { a: Device.cuda(1) }, bindTensorOutputDevice: { 'a.out': Device.cuda(1) } } });
      expect(plan.pool('pool:a.out')?.device.toString()).toBe('cuda:1');
    }
  });

  it('reports an unplaced CUDA pool output once, not again as its consumer without a device', () => {
    const graph = new Graph('one-cause');
    let out!: OutputPort;
    let inp!: InputPort;
    graph.add(new ScriptedOperator('a', (s) => (out = s.output('out').producesTensor(deviceFrames()))));
    graph.add(new ScriptedOperator('b', (s) => (inp = s.input('in', DEVICE_FRAMES_IN))));
    graph.addFlow(out, inp);
    const d = only(compileFailure(graph), DiagnosticCode.DeviceBindingRequired);
    expect(d.subject).toEqual({ kind: 'port', operator: 'a', port: 'out' });
    expect(d.message).toContain("add deployment.bindTensorOutputDevice['a.out'] = Device.cuda(n)");
    // The one entry the message names is all it takes: b follows its input onto the device.
    const plan = compileOk(graph, { deployment: { bindTensorOutputDevice: { 'a.out': Device.cuda(0) } } });
    expect(plan.operator('b')?.device?.toString()).toBe('cuda:0');
  });

  it('still places a pass-through CUDA output by its operator binding', () => {
    const graph = new Graph('pass-through-by-operator');
    let out!: OutputPort;
    let inp!: InputPort;
    graph.add(new ScriptedOperator('a', (s) => (out = s.output('out').producesTensor({ representation: deviceFrames().representation, bounds: { maxByteSpan: 64 } }))));
    graph.add(new ScriptedOperator('b', (s) => (inp = s.input('in', DEVICE_FRAMES_IN))));
    graph.addFlow(out, inp);
    const plan = compileOk(graph, { deployment: { bindOperatorDevice: { a: Device.cuda(1), b: Device.cuda(1) } } });
    expect(plan.operator('a')?.device?.toString()).toBe('cuda:1');
    expect(plan.operator('b')?.device?.toString()).toBe('cuda:1');
  });

  it('reports a CUDA-active operator with no device at all', () => {
    const graph = new Graph('stream-only');
    graph.add(new ScriptedOperator('k', (s) => s.requireCudaStream()));
    const d = only(compileFailure(graph), DiagnosticCode.DeviceBindingRequired);
    expect(d.subject).toEqual({ kind: 'operator', operator: 'k' });
    expect(compile(graph, { deployment: { bindOperatorDevice: { k: Device.cuda(0) } } }).ok).toBe(true);
  });

  it("reports one operator's obligations on two devices", () => {
    const graph = cudaGraph('split', ['a->b']);
    const error = compileFailure(graph, {
      deployment: { bindTensorOutputDevice: { 'a.out': Device.cuda(0), 'b.out': Device.cuda(1) } },
    });
    const d = only(error, DiagnosticCode.DeviceConflict);
    expect(d.subject).toEqual({ kind: 'operator', operator: 'b' });
    expect(d.message).toContain('output b.out on cuda:1; input b.in0 (fed by a.out) on cuda:0');
  });

  it('reports invalid queue depths on edges and in the options', () => {
    const graph = cudaGraph('depths', ['a->b', 'a->c', 'a->d'], { 'a->b': 0, 'a->c': 1.5, 'a->d': -3 });
    const error = compileFailure(graph, allOnCuda0(graph, { defaultQueueDepth: 0 }));
    const depthErrors = error.errors.filter((d) => d.code === DiagnosticCode.QueueDepthInvalid);
    expect(depthErrors.map((d) => d.subject)).toEqual([
      { kind: 'option', option: 'defaultQueueDepth' },
      { kind: 'edge', edge: 'a.out->b.in0' },
      { kind: 'edge', edge: 'a.out->c.in0' },
      { kind: 'edge', edge: 'a.out->d.in0' },
    ]);
    expect(depthErrors[1]?.message).toMatch(/queueDepth 0 is not a positive integer of entries/);
  });

  it('reports bindings to unknown targets, host outputs and the CPU', () => {
    const graph = new Graph('bindings');
    graph.add(
      new ScriptedOperator('a', (s) =>
        s.output('host').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 } }),
      ),
    );
    graph.add(new ScriptedOperator('k', (s) => s.requireCudaStream()));
    const error = compileFailure(graph, {
      deployment: {
        bindTensorOutputDevice: { 'a.host': Device.cuda(0), 'a.typo': Device.cuda(0) },
        bindOperatorDevice: { ghost: Device.cuda(0), k: Device.cpu() },
      },
    });
    expect(codes(error)).toEqual([
      DiagnosticCode.DeviceBindingUnknownTarget,
      DiagnosticCode.DeviceBindingInvalid,
      DiagnosticCode.DeviceBindingInvalid,
      DiagnosticCode.DeviceBindingUnknownTarget,
      DiagnosticCode.DeviceBindingRequired,
    ]);
    expect(error.message).toContain("graph 'bindings' has no output 'a.typo'");
  });

  it('reports invalid options without throwing', () => {
    const graph = cudaGraph('opts', ['a->b']);
    const error = compileFailure(graph, { computeStreamPolicy: 'perOperator' as never, deployment: { bindOperatorDevice: { a: 0 as never } } });
    expect(codes(error)).toContain(DiagnosticCode.CompileOptionInvalid);
    expect(error.errors.filter((d) => d.code === DiagnosticCode.CompileOptionInvalid).map((d) => d.subject)).toEqual([
      { kind: 'option', option: 'computeStreamPolicy' },
      { kind: 'option', option: 'deployment.bindOperatorDevice.a' },
    ]);
  });

  it('reports a misspelt option or deployment field instead of ignoring it', () => {
    const graph = cudaGraph('typos', ['a->b']);
    const bound = allOnCuda0(graph);
    const typo = compileFailure(graph, {
      ...bound,
      deployment: { ...bound.deployment, bindTensorOutputDevices: { 'a.out': Device.cuda(0) } } as never,
      defaultQueueDeph: 4,
    } as never);
    const invalid = typo.errors.filter((d) => d.code === DiagnosticCode.CompileOptionInvalid);
    expect(invalid.map((d) => d.subject)).toEqual([
      { kind: 'option', option: 'defaultQueueDeph' },
      { kind: 'option', option: 'deployment.bindTensorOutputDevices' },
    ]);
    expect(invalid[0]?.message).toContain('defaultQueueDepth');
    expect(invalid[1]?.message).toContain('bindTensorOutputDevice, bindOperatorDevice, bindTopicDevice');
    const nested = compileFailure(graph, { ...bound, automaticQueueSizing: { headroom: 3 } as never });
    expect(nested.errors.filter((d) => d.code === DiagnosticCode.CompileOptionInvalid).map((d) => d.subject)).toEqual([{ kind: 'option', option: 'automaticQueueSizing.headroom' }]);
    const notObject = compileFailure(graph, { deployment: 'cuda:0' as never });
    expect(notObject.errors.filter((d) => d.code === DiagnosticCode.CompileOptionInvalid).map((d) => d.subject)).toEqual([{ kind: 'option', option: 'deployment' }]);
    expect(compile(graph, bound).ok).toBe(true);
  });

  it('reports exact-arithmetic overflow of slot bytes and slot counts', () => {
    const bytes = new Graph('bytes');
    bytes.add(new ScriptedOperator('a', (s) => s.output('out').producesTensor(deviceFrames(Number.MAX_SAFE_INTEGER))));
    const d = only(compileFailure(bytes, allOnCuda0(bytes)), DiagnosticCode.ArithmeticOverflow);
    expect(d.message).toMatch(/slot bytes = 9007199254740992 exceeds 2\^53 - 1/);

    const huge = new Graph('huge');
    huge.add(new ScriptedOperator('a', (s) => s.output('out').producesTensor(deviceFrames(2 ** 60))));
    expect(only(compileFailure(huge, allOnCuda0(huge)), DiagnosticCode.ArithmeticOverflow).message).toMatch(/exceeds 2\^53 - 1 bytes/);

    const deep = cudaGraph('deep', ['a->b'], { 'a->b': Number.MAX_SAFE_INTEGER });
    expect(only(compileFailure(deep, allOnCuda0(deep)), DiagnosticCode.ArithmeticOverflow).message).toMatch(/slot count = 9007199254740994/);
  });

  it('carries every error of one run together', () => {
    const graph = cudaGraph('many', ['a->b', 'b->c'], { 'a->b': 0 });
    graph.add(new ScriptedOperator('b2', (s) => s.input('in', DEVICE_FRAMES_IN)));
    const error = compileFailure(graph);
    expect(new Set(codes(error))).toEqual(
      new Set([DiagnosticCode.QueueDepthInvalid, DiagnosticCode.UnconnectedRequiredInput, DiagnosticCode.DeviceBindingRequired]),
    );
    expect(error.message).toMatch(/failed to compile with \d+ errors/);
    expect(Object.isFrozen(error.diagnostics)).toBe(true);
  });
});
