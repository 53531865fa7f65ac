import { Device, MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { DiagnosticCode, Graph, type InputPort, type OutputPort } from '../src/index.js';
import { DEVICE_FRAMES_IN, ScriptedOperator, compileFailure, compileOk, deviceFrames } from './support/operators.js';

/** a (pool output) -> b (pass-through CUDA output `pt`) -> c. */
function passThroughChain(): Graph {
  const graph = new Graph('pass-through-placement');
  let out!: OutputPort;
  let bIn!: InputPort;
  let pt!: OutputPort;
  let cIn!: InputPort;
  graph.add(new ScriptedOperator('a', (s) => (out = s.output('out').producesTensor(deviceFrames()))));
  graph.add(
    new ScriptedOperator('b', (s) => {
      bIn = s.input('in', DEVICE_FRAMES_IN);
      pt = s.output('pt').producesTensor({ representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 2 } });
    }),
  );
  graph.add(new ScriptedOperator('c', (s) => (cIn = s.input('in', DEVICE_FRAMES_IN))));
  graph.addFlow(out, bIn);
  graph.addFlow(pt, cIn);
  return graph;
}

describe('placement rules (spec: Current limitations)', () => {
  it('does not propagate input placement to a pass-through CUDA output (DEVICE_BINDING_REQUIRED on the port)', () => {
    const error = compileFailure(passThroughChain(), { deployment: { bindTensorOutputDevice: { 'a.out': Device.cuda(0) } } });
    const onPort = error.errors.filter((d) => d.code === DiagnosticCode.DeviceBindingRequired && d.subject.kind === 'port');
    expect(onPort.map((d) => d.subject)).toEqual([{ kind: 'port', operator: 'b', port: 'pt' }]);
    // Either entry the message offers is written out in full.
    expect(onPort[0]?.message).toContain("add deployment.bindTensorOutputDevice['b.pt'] = Device.cuda(n) or deployment.bindOperatorDevice['b'] = Device.cuda(n)");
  });

  it("lets a pass-through output inherit its operator's explicit device", () => {
    const plan = compileOk(passThroughChain(), {
      deployment: { bindTensorOutputDevice: { 'a.out': Device.cuda(0) }, bindOperatorDevice: { b: Device.cuda(0), c: Device.cuda(0) } },
    });
    expect(plan.operator('b')?.outputs[0]?.device).toEqual(Device.cuda(0));
    expect(plan.edge('b.pt->c.in')?.pool).toBeNull();
  });

  it('inserts no cross-device copy: a consumer bound to another GPU than its input is a DEVICE_CONFLICT', () => {
    const error = compileFailure(passThroughChain(), {
      deployment: { bindTensorOutputDevice: { 'a.out': Device.cuda(0) }, bindOperatorDevice: { b: Device.cuda(1), c: Device.cuda(1) } },
    });
    const conflict = error.errors.find((d) => d.code === DiagnosticCode.DeviceConflict);
    expect(conflict?.subject).toEqual({ kind: 'operator', operator: 'b' });
    expect(conflict?.message).toContain('input b.in (fed by a.out) on cuda:0');
  });

  it('refuses a pinnedHost tensor edge between streams on two devices (DEVICE_CONFLICT on the edge); a host-only reader may cross', () => {
    const pinned = { memoryKind: MemoryKind.PinnedHost, dtype: DType.uint8, rank: 1 } as const;
    const build = (readerStream: boolean): Graph => {
      const graph = new Graph('pinned-across');
      let out!: OutputPort;
      let inp!: InputPort;
      graph.add(new ScriptedOperator('a', (s) => (s.requireCudaStream(), (out = s.output('out').producesTensor({ representation: pinned, bounds: { maxByteSpan: 64 }, storage: 'runtimePool' })))));
      graph.add(new ScriptedOperator('b', (s) => ((inp = s.input('in', pinned)), readerStream ? s.requireCudaStream() : undefined)));
      graph.addFlow(out, inp);
      return graph;
    };
    const error = compileFailure(build(true), { deployment: { bindOperatorDevice: { a: Device.cuda(0), b: Device.cuda(1) } } });
    expect(error.errors.map((d) => [d.code, d.subject])).toEqual([[DiagnosticCode.DeviceConflict, { kind: 'edge', edge: 'a.out->b.in' }]]);
    expect(error.errors[0]?.message).toContain("producer 'a' orders its tensors with events on cuda:0, and consumer 'b' runs on a stream on cuda:1");
    expect(compileOk(build(true), { deployment: { bindOperatorDevice: { a: Device.cuda(1), b: Device.cuda(1) } } }).edge('a.out->b.in')?.hostWait).toBe(false);
    expect(compileOk(build(false), { deployment: { bindOperatorDevice: { a: Device.cuda(0) } } }).edge('a.out->b.in')?.hostWait).toBe(true);
  });
});

describe('cross-device inputs ({ crossDevice: true })', () => {
  /** a (pool on cuda:0) -> copy (crossDevice input, pool output on cuda:1) -> b (cuda:1). */
  function copyChain(crossDevice: boolean): Graph {
    const graph = new Graph('copy-chain');
    let aOut!: OutputPort;
    let copyIn!: InputPort;
    let copyOut!: OutputPort;
    let bIn!: InputPort;
    graph.add(new ScriptedOperator('a', (s) => (aOut = s.output('out').producesTensor(deviceFrames()))));
    graph.add(
      new ScriptedOperator('copy', (s) => {
        copyIn = s.input('in', DEVICE_FRAMES_IN, { crossDevice });
        copyOut = s.output('out').producesTensor(deviceFrames());
      }),
    );
    graph.add(new ScriptedOperator('b', (s) => (bIn = s.input('in', DEVICE_FRAMES_IN))));
    graph.addFlow(aOut, copyIn);
    graph.addFlow(copyOut, bIn);
    return graph;
  }
  const deployment = { bindTensorOutputDevice: { 'a.out': Device.cuda(0), 'copy.out': Device.cuda(1) } };

  it('lets only a crossDevice input take an edge from another device; the edge is recorded, never fused', () => {
    const refused = compileFailure(copyChain(false), { deployment });
    expect(refused.errors.map((d) => [d.code, d.subject])).toEqual([[DiagnosticCode.DeviceConflict, { kind: 'operator', operator: 'copy' }]]);
    expect(refused.errors[0]?.message).toContain('or place a DeviceCopy (@hs/runtime) between the devices');

    const plan = compileOk(copyChain(true), { deployment });
    expect(plan.operator('copy')?.device).toEqual(Device.cuda(1));
    expect(plan.edge('a.out->copy.in')).toMatchObject({ crossDevice: true, hostWait: false, pool: 'pool:a.out' });
    expect(plan.edge('copy.out->b.in')?.crossDevice).toBe(false);
    expect(plan.fusedEdges.map((f) => f.edge)).not.toContain('a.out->copy.in');
    expect(plan.toText()).toContain('a.out->copy.in: queueDepth 2 (default), pool pool:a.out, cross-device input');
  });

  it('fuses nothing across a crossDevice input even on one device', () => {
    const plan = compileOk(copyChain(true), { deployment: { bindTensorOutputDevice: { 'a.out': Device.cuda(0), 'copy.out': Device.cuda(0) } } });
    expect(plan.fusedEdges.map((f) => f.edge)).toEqual(['copy.out->b.in']);
  });

  it('refuses a crossDevice option that is not a boolean', () => {
    const graph = new Graph('bad-option');
    expect(() => graph.add(new ScriptedOperator('x', (s) => s.input('in', {}, { crossDevice: 'yes' as never })))).toThrow(/options\.crossDevice must be a boolean/);
  });

  it('refuses a misspelt input option instead of ignoring it', () => {
    const graph = new Graph('misspelt-option');
    expect(() => graph.add(new ScriptedOperator('x', (s) => s.input('in', {}, { crossdevice: true } as never)))).toThrow(
      "x.in: input options: unknown option 'crossdevice'; did you mean 'crossDevice'? the options are optional, crossDevice",
    );
  });
});
