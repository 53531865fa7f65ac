import { ErrorCode, HsError, MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { Graph, type InputPort, type OperatorSpec, type OutputPort } from '../src/index.js';
import { ScriptedOperator, deviceFrames } from './support/operators.js';

function thrownCode(fn: () => unknown): ErrorCode | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof HsError) return error.code;
    throw error;
  }
  return undefined;
}

describe('Graph authoring', () => {
  it('add() runs setup() at once and returns the operator', () => {
    const graph = new Graph('g');
    let port: OutputPort | undefined;
    const op = graph.add(new ScriptedOperator('source', (spec) => (port = spec.output('frames').producesTensor(deviceFrames()))));
    expect(op.name).toBe('source');
    expect(port?.key).toBe('source.frames');
    expect(port?.tensor?.bounds).toEqual({ maxByteSpan: 1 << 20, maxRank: 2 });
    expect(graph.operators).toEqual([op]);
    expect(graph.specOf(op).outputs).toEqual([port]);
  });

  it('addFlow() throws InvalidArgument for ports in the wrong direction', () => {
    const graph = new Graph('g');
    let out!: OutputPort;
    let inp!: InputPort;
    graph.add(new ScriptedOperator('a', (s) => (out = s.output('out'))));
    graph.add(new ScriptedOperator('b', (s) => (inp = s.input('in'))));
    const swapped = () => graph.addFlow(inp as unknown as OutputPort, out as unknown as InputPort);
    expect(thrownCode(swapped)).toBe(ErrorCode.InvalidArgument);
    expect(swapped).toThrow(/takes an OutputPort then an InputPort \(got input b\.in and output a\.out\)/);
    expect(graph.flows).toHaveLength(0);
  });

  it('addFlow() throws InvalidArgument for a port of an operator outside the graph', () => {
    const graph = new Graph('g');
    const other = new Graph('other');
    let out!: OutputPort;
    let inp!: InputPort;
    graph.add(new ScriptedOperator('a', (s) => (out = s.output('out'))));
    other.add(new ScriptedOperator('b', (s) => (inp = s.input('in'))));
    expect(() => graph.addFlow(out, inp)).toThrow(/port b\.in belongs to an operator that is not in this graph/);
  });

  it('rejects adding an operator twice', () => {
    const graph = new Graph('g');
    const op = graph.add(new ScriptedOperator('a', () => {}));
    expect(thrownCode(() => new Graph('h').add(op))).toBe(ErrorCode.InvalidArgument);
  });

  it('leaves the graph unchanged when setup() throws', () => {
    const graph = new Graph('g');
    const op = new ScriptedOperator('a', () => {
      throw new Error('boom');
    });
    expect(() => graph.add(op)).toThrow('boom');
    expect(graph.operators).toHaveLength(0);
  });

  it('closes the spec when setup() returns', () => {
    const graph = new Graph('g');
    let kept!: OperatorSpec;
    let out!: OutputPort;
    graph.add(new ScriptedOperator('a', (s) => ((kept = s), (out = s.output('out')))));
    expect(thrownCode(() => kept.input('late'))).toBe(ErrorCode.InvalidState);
    expect(thrownCode(() => kept.requireCudaStream())).toBe(ErrorCode.InvalidState);
    expect(thrownCode(() => out.producesTensor(deviceFrames()))).toBe(ErrorCode.InvalidState);
  });

  it('throws InvalidArgument for mistyped declarations and bad names', () => {
    const graph = new Graph('g');
    const declare = (fn: (s: OperatorSpec) => void) => () => graph.add(new ScriptedOperator(`op${graph.operators.length}`, fn));
    expect(thrownCode(() => new ScriptedOperator('a.b', () => {}))).toBe(ErrorCode.InvalidArgument);
    expect(thrownCode(declare((s) => s.input('has space')))).toBe(ErrorCode.InvalidArgument);
    expect(thrownCode(declare((s) => s.input('x', { rank: -1 })))).toBe(ErrorCode.InvalidArgument);
    expect(
      thrownCode(
        declare((s) =>
          s.output('o').producesTensor({
            representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 },
            storage: 'runtimePool',
          } as never),
        ),
      ),
    ).toBe(ErrorCode.InvalidArgument);
    expect(
      thrownCode(
        declare((s) =>
          s.output('o').producesTensor({ representation: { memoryKind: 'vram' as MemoryKind, dtype: DType.uint8, rank: 2 } }),
        ),
      ),
    ).toBe(ErrorCode.InvalidArgument);
    expect(thrownCode(declare((s) => s.output('o').producesTensor(deviceFrames()).producesTensor(deviceFrames())))).toBe(
      ErrorCode.InvalidArgument,
    );
  });

  it('defaults storage to passThrough and maxRank to the rank', () => {
    const graph = new Graph('g');
    let out!: OutputPort;
    graph.add(
      new ScriptedOperator('a', (s) => {
        out = s.output('o').producesTensor({
          representation: { memoryKind: MemoryKind.Host, dtype: DType.float32, rank: 3 },
          bounds: { maxByteSpan: 64 },
        });
      }),
    );
    expect(out.tensor?.storage).toBe('passThrough');
    expect(out.tensor?.bounds?.maxRank).toBe(3);
    expect(Object.isFrozen(out.tensor)).toBe(true);
  });
});
