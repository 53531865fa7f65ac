import { Device, ErrorCode, MemoryKind, err, ok } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import {
  ByteSpanProjector,
  type BoundParams,
  DiagnosticCode,
  Graph,
  enumParam,
  inputMaxByteSpan,
  integerParam,
  memoryKindCase,
  memoryKindParam,
  parameterContiguousByteSpan,
  parameterMemoryKind,
  parameterProjectedByteSpan,
  paramSchema,
  shapeParam,
  tensorByteSpan,
  type InputPort,
  type OperatorSpec,
  type OutputPort,
  type TensorByteSpanExpression,
  type TensorOutputDerivations,
} from '../src/index.js';
import { lifecycleGraph } from './support/lifecycle.js';
import { ScriptedOperator, compileFailure, compileOk } from './support/operators.js';

const ShapeParams = paramSchema('com.hs.test.Shape', 1, {
  shape: shapeParam({ rank: 3, maxExtent: 1 << 20 }).recompileRequired(),
  live: shapeParam({ rank: 3, maxExtent: 1 << 20 }).runtime(),
  secret: shapeParam({ rank: 3, maxExtent: 1 << 20 }).markSensitive(),
  flat: shapeParam({ rank: 2, maxExtent: 1 << 20 }),
  batch: integerParam({ min: 1, max: 64 }),
  storage: enumParam(['host', 'pinned', 'device']),
  kind: memoryKindParam([MemoryKind.Host, MemoryKind.CudaDevice]),
});

const VALUES = { shape: [64, 64, 4], live: [64, 64, 4], secret: [8, 8, 4], flat: [64, 64], batch: 4, storage: 'host', kind: MemoryKind.Host };

type Params = BoundParams<typeof ShapeParams.fields>;

/** One operator `op` with ShapeParams and one uint8 rank-3 runtime-pool output `out` derived by `derive`. */
function derivedGraph(
  derive: (params: Params, spec: OperatorSpec) => TensorOutputDerivations | TensorByteSpanExpression,
  values: Record<string, unknown> = VALUES,
  representation: { memoryKind?: MemoryKind } = { memoryKind: MemoryKind.Host },
): Graph {
  const graph = new Graph('derived');
  let out: OutputPort | null = null;
  let input: InputPort | null = null;
  graph.add(
    new ScriptedOperator('op', (spec) => {
      const params = spec.params(ShapeParams, values as typeof VALUES);
      out = spec.output('out').producesTensor({ representation: { ...representation, dtype: DType.uint8, rank: 3 }, storage: 'runtimePool' }, derive(params, spec));
    }),
  );
  graph.add(new ScriptedOperator('sink', (spec) => (input = spec.input('in'))));
  graph.addFlow(out as unknown as OutputPort, input as unknown as InputPort);
  return graph;
}

function codes(graph: Graph, options?: Parameters<typeof compileOk>[1]): string[] {
  return compileFailure(graph, options).errors.map((d) => d.code);
}

describe('parameter-derived byte spans', () => {
  it('resolves a contiguous span from a shape parameter and records the derivation', () => {
    const plan = compileOk(derivedGraph((p) => parameterContiguousByteSpan(p.ref('shape'))));
    expect(plan.pool('pool:op.out')).toMatchObject({ maxByteSpan: 64 * 64 * 4, byteSpanSource: 'derived' });
    expect(plan.tensorByteSpanDerivations()).toEqual([
      { output: { operator: 'op', port: 'out' }, expression: 'contiguous(op.params.shape=[64,64,4] x 1 B)', bytes: 16384, dependencies: ['op.params.shape'], projectors: [] },
    ]);
    expect(plan.params[0]?.fields.find((f) => f.name === 'secret')).toMatchObject({ sensitive: true, value: null });
  });

  it('computes the packed RGBA-to-grayscale ceiling-divide bound from the producer', () => {
    const graph = new Graph('gray');
    let rgba: OutputPort | null = null;
    let rgbaIn: InputPort | null = null;
    let gray: OutputPort | null = null;
    let sinkIn: InputPort | null = null;
    graph.add(
      new ScriptedOperator('camera', (spec) => {
        rgba = spec.output('rgba').producesTensor({
          representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 },
          bounds: { maxByteSpan: 1920 * 1080 * 4 + 3 },
          storage: 'runtimePool',
        });
      }),
    );
    graph.add(
      new ScriptedOperator('grayscale', (spec) => {
        rgbaIn = spec.input('rgba');
        gray = spec
          .output('gray')
          .producesTensor(
            { representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 2 }, storage: 'runtimePool' },
            inputMaxByteSpan(rgbaIn).ceilingDividedBy(tensorByteSpan(4)),
          );
      }),
    );
    graph.add(new ScriptedOperator('sink', (spec) => (sinkIn = spec.input('gray'))));
    graph.addFlow(rgba as unknown as OutputPort, rgbaIn as unknown as InputPort);
    graph.addFlow(gray as unknown as OutputPort, sinkIn as unknown as InputPort);
    const plan = compileOk(graph);
    expect(plan.pool('pool:grayscale.gray')?.maxByteSpan).toBe(1920 * 1080 + 1);
    expect(plan.byteSpanDerivations[0]).toMatchObject({ expression: 'ceilDiv(inputMax(grayscale.rgba)=8294403, 4)', dependencies: ['grayscale.rgba'] });
  });

  it('applies multiply, max and align exactly', () => {
    const plan = compileOk(derivedGraph((p) => parameterContiguousByteSpan(p.ref('shape')).multipliedBy(3).max(1000).alignedTo(4096)));
    expect(plan.pool('pool:op.out')?.maxByteSpan).toBe(49152);
  });

  it('rejects a shape whose length differs from the exact rank', () => {
    expect(codes(derivedGraph((p) => parameterContiguousByteSpan(p.ref('flat') as never)))).toEqual([DiagnosticCode.TensorByteSpanRankMismatch]);
  });

  it('reports overflow past 2^64 - 1 and unrepresentable or zero spans', () => {
    const huge = { ...VALUES, shape: [1 << 20, 1 << 20, 1 << 20] };
    expect(codes(derivedGraph((p) => parameterContiguousByteSpan(p.ref('shape')).multipliedBy(1 << 20), huge))).toEqual([
      DiagnosticCode.PhysicalTensorByteSpanOverflow,
    ]);
    expect(codes(derivedGraph((p) => parameterContiguousByteSpan(p.ref('shape')), huge))).toEqual([DiagnosticCode.TensorByteSpanInvalid]);
    expect(codes(derivedGraph(() => tensorByteSpan(0).max(0)))).toEqual([DiagnosticCode.TensorByteSpanInvalid]);
    expect(codes(derivedGraph(() => tensorByteSpan(8).ceilingDividedBy(0)))).toEqual([DiagnosticCode.TensorByteSpanInvalid]);
  });

  it('enforces the node, depth, dependency and extent limits', () => {
    let deep: TensorByteSpanExpression = tensorByteSpan(1);
    for (let i = 0; i < 16; i += 1) deep = deep.max(1);
    expect(codes(derivedGraph(() => deep))).toEqual([DiagnosticCode.TensorByteSpanExpressionLimit]);
    expect(compileFailure(derivedGraph(() => deep)).errors[0]?.message).toContain('depth 17 (at most 16)');
    let wide: TensorByteSpanExpression = tensorByteSpan(1);
    for (let i = 0; i < 4; i += 1) wide = wide.max(tensorByteSpan(1).max(tensorByteSpan(1).max(tensorByteSpan(1).max(2))));
    expect(compileFailure(derivedGraph(() => wide)).errors[0]?.message).toContain('nodes (at most 32)');
    const extents = (p: Params) => parameterContiguousByteSpan(p.ref('shape')).max(parameterContiguousByteSpan(p.ref('shape'))).max(parameterContiguousByteSpan(p.ref('shape')));
    expect(compileFailure(derivedGraph(extents)).errors[0]?.message).toContain('9 shape extents (at most 8)');
  });

  it('limits an expression to 8 dependencies', () => {
    const Nine = paramSchema('com.hs.test.Nine', 1, Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`f${i}`, integerParam({ min: 1, max: 9 })])));
    const projector = new ByteSpanProjector('com.hs.test.nine.v1', () => ok(64));
    const graph = new Graph('nine');
    graph.add(
      new ScriptedOperator('op', (spec) => {
        const params = spec.params(Nine, Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`f${i}`, 1])));
        const refs = Object.keys(Nine.fields).map((f) => params.ref(f));
        spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 }, storage: 'runtimePool' }, parameterProjectedByteSpan(projector, ...refs));
      }),
    );
    const error = compileFailure(graph);
    expect(error.errors.map((d) => d.code)).toEqual([DiagnosticCode.TensorByteSpanExpressionLimit]);
    expect(error.errors[0]?.message).toContain('9 dependencies (at most 8)');
  });

  it('rejects inputMaxByteSpan of a fan-in input', () => {
    const graph = new Graph('fan-in');
    const outs: OutputPort[] = [];
    let input: InputPort | null = null;
    for (const name of ['a', 'b']) {
      graph.add(new ScriptedOperator(name, (spec) => outs.push(spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 }, bounds: { maxByteSpan: 64 }, storage: 'runtimePool' }))));
    }
    graph.add(
      new ScriptedOperator('merge', (spec) => {
        input = spec.input('in');
        spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 }, storage: 'runtimePool' }, inputMaxByteSpan(input));
      }),
    );
    for (const out of outs) graph.addFlow(out, input as unknown as InputPort);
    const error = compileFailure(graph);
    expect(error.errors.map((d) => d.code)).toEqual([DiagnosticCode.InputFanIn, DiagnosticCode.TensorByteSpanInputUnbounded]);
    expect(error.errors[1]?.message).toContain('2 producers (fan-in)');
  });

  it('rejects a runtime-mutable or sensitive capacity-affecting parameter', () => {
    expect(codes(derivedGraph((p) => parameterContiguousByteSpan(p.ref('live'))))).toEqual([DiagnosticCode.ParameterNotCapacityEligible]);
    expect(codes(derivedGraph((p) => parameterContiguousByteSpan(p.ref('secret'))))).toEqual([DiagnosticCode.ParameterNotCapacityEligible]);
  });

  it('rejects generation-zero values outside their domain without showing sensitive values', () => {
    const error = compileFailure(derivedGraph((p) => parameterContiguousByteSpan(p.ref('shape')), { ...VALUES, batch: 65, secret: [0, 1, 1], extra: 1 }));
    expect(error.errors.map((d) => d.code)).toEqual([DiagnosticCode.ParameterValueInvalid, DiagnosticCode.ParameterValueInvalid, DiagnosticCode.ParameterValueInvalid]);
    const secret = error.errors.find((d) => d.subject.kind === 'parameter' && d.subject.field === 'secret');
    expect(secret?.message).toContain('sensitive: value not shown');
    expect(secret?.message).not.toContain('[0, 1, 1]');
  });

  it('rejects a derivation reading another operator’s parameters', () => {
    const graph = new Graph('foreign');
    let foreign: Params | null = null;
    graph.add(new ScriptedOperator('owner', (spec) => (foreign = spec.params(ShapeParams, VALUES))));
    graph.add(
      new ScriptedOperator('thief', (spec) => {
        spec.output('out').producesTensor(
          { representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 }, storage: 'runtimePool' },
          parameterContiguousByteSpan((foreign as unknown as Params).ref('shape')),
        );
      }),
    );
    expect(codes(graph)).toEqual([DiagnosticCode.ParameterRefInvalid]);
  });

  it('rejects inputMaxByteSpan of a disconnected or unbounded input', () => {
    const disconnected = derivedGraph((_, spec) => inputMaxByteSpan(spec.input('opt', undefined, { optional: true })));
    expect(codes(disconnected)).toEqual([DiagnosticCode.TensorByteSpanInputUnbounded]);
    const graph = new Graph('unbounded');
    let pass: OutputPort | null = null;
    let input: InputPort | null = null;
    graph.add(new ScriptedOperator('pass', (spec) => (pass = spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 } }))));
    graph.add(
      new ScriptedOperator('derive', (spec) => {
        input = spec.input('in');
        spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 }, storage: 'runtimePool' }, inputMaxByteSpan(input));
      }),
    );
    graph.addFlow(pass as unknown as OutputPort, input as unknown as InputPort);
    expect(compileFailure(graph).errors.map((d) => [d.code, d.message.includes('unbounded')])).toEqual([[DiagnosticCode.TensorByteSpanInputUnbounded, true]]);
  });

  it('takes only a real InputPort in inputMaxByteSpan, not a look-alike', () => {
    let input: InputPort | null = null;
    let output: OutputPort | null = null;
    derivedGraph((_, spec) => {
      input = spec.input('in', undefined, { optional: true });
      output = spec.output('side');
      return tensorByteSpan(16);
    });
    expect(inputMaxByteSpan(input!).node).toEqual({ kind: 'inputMax', input });
    const lookAlike = { operator: (input as unknown as InputPort).operator, name: 'in', key: 'derive.in' } as unknown as InputPort;
    for (const wrong of [lookAlike, output as unknown as InputPort]) {
      expect(() => inputMaxByteSpan(wrong)).toThrow(expect.objectContaining({ code: ErrorCode.InvalidArgument, message: expect.stringContaining('takes an InputPort') }));
    }
  });
});

describe('parameter byte-span projectors', () => {
  const batchBytes = new ByteSpanProjector('com.hs.test.batch-bytes.v1', (p) => ok((p['batch'] as number) * 1024));

  it('runs once with only the declared fields and composes with checked operations', () => {
    let seen: string[] = [];
    const spy = new ByteSpanProjector('com.hs.test.spy.v1', (p) => {
      seen = Object.keys(p);
      return ok(10n);
    });
    const plan = compileOk(derivedGraph((p) => parameterProjectedByteSpan(spy, p.ref('batch')).multipliedBy(parameterProjectedByteSpan(batchBytes, p.ref('batch')))));
    expect(seen).toEqual(['batch']);
    expect(plan.pool('pool:op.out')?.maxByteSpan).toBe(40960);
    expect(plan.byteSpanDerivations[0]?.projectors).toEqual(['com.hs.test.batch-bytes.v1', 'com.hs.test.spy.v1']);
  });

  it('surfaces failures by error code name only', () => {
    const overflow = new ByteSpanProjector('com.hs.test.overflow.v1', () => err(ErrorCode.ArithmeticOverflow, 'private detail'));
    const failing = new ByteSpanProjector('com.hs.test.failing.v1', () => err(ErrorCode.InvalidArgument, 'private detail'));
    const throwing = new ByteSpanProjector('com.hs.test.throwing.v1', () => {
      throw new Error('private detail');
    });
    expect(codes(derivedGraph((p) => parameterProjectedByteSpan(overflow, p.ref('batch'))))).toEqual([DiagnosticCode.PhysicalTensorByteSpanOverflow]);
    for (const projector of [failing, throwing]) {
      const error = compileFailure(derivedGraph((p) => parameterProjectedByteSpan(projector, p.ref('batch'))));
      expect(error.errors.map((d) => d.code)).toEqual([DiagnosticCode.PhysicalTensorByteSpanProjectionFailed]);
      expect(error.message).not.toContain('private detail');
    }
    expect(compileFailure(derivedGraph((p) => parameterProjectedByteSpan(failing, p.ref('batch')))).message).toContain('failed with InvalidArgument');
  });

  it('fails closed when one id is bound to two functions', () => {
    const twin = new ByteSpanProjector('com.hs.test.batch-bytes.v1', (p) => ok((p['batch'] as number) * 2048));
    expect(codes(derivedGraph((p) => parameterProjectedByteSpan(batchBytes, p.ref('batch')).max(parameterProjectedByteSpan(twin, p.ref('batch')))))).toEqual([
      DiagnosticCode.ByteSpanProjectorIdConflict,
    ]);
  });

  it('accepts one id for two projectors built from the same code, one per operator (closures of one function)', () => {
    // Each operator's setup() makes its own function object from the same arrow function.
    const bytesOf = (p: Params) => parameterProjectedByteSpan(new ByteSpanProjector('com.p.bytes.v1', (q) => ok((q['batch'] as number) * 512)), p.ref('batch'));
    const graph = new Graph('two-closures');
    let first: OutputPort | null = null;
    let input: InputPort | null = null;
    graph.add(
      new ScriptedOperator('a', (spec) => {
        first = spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 }, storage: 'runtimePool' }, bytesOf(spec.params(ShapeParams, VALUES)));
      }),
    );
    graph.add(
      new ScriptedOperator('b', (spec) => {
        input = spec.input('in');
        spec.output('out').producesTensor({ representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 3 }, storage: 'runtimePool' }, bytesOf(spec.params(ShapeParams, { ...VALUES, batch: 8 })));
      }),
    );
    graph.add(new ScriptedOperator('sink', (spec) => spec.input('in', undefined, { optional: true })));
    graph.addFlow(first as unknown as OutputPort, input as unknown as InputPort);
    graph.addFlow(graph.specOf(graph.operators[1]!).outputs[0]!, graph.specOf(graph.operators[2]!).inputs[0]!);
    const plan = compileOk(graph);
    expect([plan.pool('pool:a.out')?.maxByteSpan, plan.pool('pool:b.out')?.maxByteSpan]).toEqual([2048, 4096]);
    expect(plan.byteSpanDerivations.map((d) => d.projectors)).toEqual([['com.p.bytes.v1'], ['com.p.bytes.v1']]);
  });

  it('still fails closed for different code under one id, and compares bound functions as objects', () => {
    const a = new ByteSpanProjector('com.p.bytes.v1', (q) => ok((q['batch'] as number) * 512));
    const b = new ByteSpanProjector('com.p.bytes.v1', (q) => ok((q['batch'] as number) * 513));
    const error = compileFailure(derivedGraph((p) => parameterProjectedByteSpan(a, p.ref('batch')).max(parameterProjectedByteSpan(b, p.ref('batch')))));
    expect(error.errors.map((d) => d.code)).toEqual([DiagnosticCode.ByteSpanProjectorIdConflict]);
    expect(error.errors[0]?.message).toContain("projector id 'com.p.bytes.v1' is bound to two different implementations");
    function scaled(this: unknown, factor: number, q: Readonly<Record<string, unknown>>) {
      return ok((q['batch'] as number) * factor);
    }
    const by512 = new ByteSpanProjector('com.p.scaled.v1', scaled.bind(null, 512));
    const by1024 = new ByteSpanProjector('com.p.scaled.v1', scaled.bind(null, 1024));
    expect(codes(derivedGraph((p) => parameterProjectedByteSpan(by512, p.ref('batch')).max(parameterProjectedByteSpan(by1024, p.ref('batch')))))).toEqual([
      DiagnosticCode.ByteSpanProjectorIdConflict,
    ]);
    expect(compileOk(derivedGraph((p) => parameterProjectedByteSpan(by512, p.ref('batch')).max(parameterProjectedByteSpan(by512, p.ref('batch'))))).pool('pool:op.out')?.maxByteSpan).toBe(2048);
  });

  it('requires a versioned id', () => {
    expect(() => new ByteSpanProjector('com.hs.test.unversioned', () => ok(1))).toThrow(/ending in a version/);
  });
});

describe('parameter-derived memory kinds', () => {
  const mapping = (p: Params, cases = [memoryKindCase('host', MemoryKind.Host), memoryKindCase('pinned', MemoryKind.PinnedHost), memoryKindCase('device', MemoryKind.CudaDevice)]) => ({
    byteSpan: tensorByteSpan(4096),
    memoryKind: parameterMemoryKind(p.ref('storage'), cases),
  });

  it('maps an enum exhaustively and freezes the kind into the pool', () => {
    expect(compileOk(lifecycleGraph({ storage: 'pinned' }).graph).pool('pool:source.frames')?.memoryKind).toBe(MemoryKind.PinnedHost);
    const plan = compileOk(derivedGraph((p) => mapping(p), { ...VALUES, storage: 'pinned' }, {}));
    expect(plan.pool('pool:op.out')).toMatchObject({ memoryKind: MemoryKind.PinnedHost, memoryKindSource: 'op.params.storage' });
  });

  it('accepts a direct memory-kind field', () => {
    const plan = compileOk(derivedGraph((p) => ({ byteSpan: tensorByteSpan(64), memoryKind: parameterMemoryKind(p.ref('kind')) }), VALUES, {}));
    expect(plan.pool('pool:op.out')?.memoryKind).toBe(MemoryKind.Host);
  });

  it('rejects missing, extra and duplicate cases and a direct derivation from an enum field', () => {
    const host = memoryKindCase('host', MemoryKind.Host);
    const pinned = memoryKindCase('pinned', MemoryKind.PinnedHost);
    const device = memoryKindCase('device', MemoryKind.CudaDevice);
    for (const cases of [[host, pinned], [host, pinned, device, memoryKindCase('managed', MemoryKind.CudaManaged)], [host, pinned, device, host]]) {
      expect(codes(derivedGraph((p) => mapping(p, cases), VALUES, {}))).toEqual([DiagnosticCode.MemoryKindMappingInvalid]);
    }
    expect(codes(derivedGraph((p) => ({ byteSpan: tensorByteSpan(64), memoryKind: parameterMemoryKind(p.ref('storage')) }), VALUES, {}))).toEqual([
      DiagnosticCode.MemoryKindMappingInvalid,
    ]);
    expect(() => memoryKindParam([])).toThrow(/non-empty/);
  });

  it('checks downstream exact-memory requirements against the selected kind', () => {
    const graph = new Graph('mismatch');
    let out: OutputPort | null = null;
    let input: InputPort | null = null;
    graph.add(new ScriptedOperator('op', (spec) => (out = spec.output('out').producesTensor({ representation: { dtype: DType.uint8, rank: 3 }, storage: 'runtimePool' }, mapping(spec.params(ShapeParams, { ...VALUES, storage: 'pinned' }))))));
    graph.add(new ScriptedOperator('sink', (spec) => (input = spec.input('in', { memoryKind: MemoryKind.Host }))));
    graph.addFlow(out as unknown as OutputPort, input as unknown as InputPort);
    const error = compileFailure(graph);
    expect(error.errors.map((d) => d.code)).toEqual([DiagnosticCode.PhysicalTensorLayoutMismatch]);
    expect(error.errors[0]?.message).toContain('selected by op.params.storage');
  });

  it('needs an explicit device binding for a selected CUDA kind and never guesses device 0', () => {
    const graph = derivedGraph((p) => mapping(p), { ...VALUES, storage: 'device' }, {});
    expect(codes(graph)).toContain(DiagnosticCode.DeviceBindingRequired);
    const plan = compileOk(graph, { deployment: { bindTensorOutputDevice: { 'op.out': Device.cuda(1) } } });
    expect(plan.pool('pool:op.out')).toMatchObject({ memoryKind: MemoryKind.CudaDevice });
    expect(plan.pool('pool:op.out')?.device.toString()).toBe('cuda:1');
  });

  it('needs exactly one memory kind source at authoring time', () => {
    expect(() => derivedGraph((p) => mapping(p))).toThrow(/exactly one memory kind/);
  });
});
