import { Device, MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { DiagnosticCode, Graph, type InputPort, type OutputPort, type TensorOutputSpec } from '../src/index.js';
import { ScriptedOperator, compileFailure, compileOk } from './support/operators.js';

/** Two producers feeding one host sink; `specs` gives each producer's output declaration. */
function twoPools(a: TensorOutputSpec, b: TensorOutputSpec): Graph {
  const graph = new Graph('providers');
  let outA!: OutputPort;
  let outB!: OutputPort;
  let inA!: InputPort;
  let inB!: InputPort;
  graph.add(new ScriptedOperator('a', (s) => (s.requireCudaStream(), (outA = s.output('out').producesTensor(a)))));
  graph.add(new ScriptedOperator('b', (s) => (s.requireCudaStream(), (outB = s.output('out').producesTensor(b)))));
  graph.add(
    new ScriptedOperator('sink', (s) => {
      s.requireCudaStream();
      inA = s.input('a');
      inB = s.input('b');
    }),
  );
  graph.addFlow(outA, inA);
  graph.addFlow(outB, inB);
  return graph;
}

const pool = (memoryKind: MemoryKind, provider?: string): TensorOutputSpec => ({
  representation: { memoryKind, dtype: DType.float32, rank: 1 },
  bounds: { maxByteSpan: 1000 },
  storage: 'runtimePool',
  ...(provider === undefined ? {} : { provider }),
});
const onCuda0 = { deployment: { bindOperatorDevice: { a: Device.cuda(0), b: Device.cuda(0), sink: Device.cuda(0) }, bindTensorOutputDevice: { 'a.out': Device.cuda(0), 'b.out': Device.cuda(0) } } };
/** `onCuda0` without the output binding of b.out, for graphs where b.out is host memory. */
const onCuda0HostB = { deployment: { ...onCuda0.deployment, bindTensorOutputDevice: { 'a.out': Device.cuda(0) } } };

describe('each pool names its provider', () => {
  it('defaults the provider to the pool id and records the tier each memory kind needs', () => {
    const plan = compileOk(twoPools(pool(MemoryKind.CudaDevice), pool(MemoryKind.PinnedHost)), onCuda0HostB);
    expect(plan.pools.map((p) => [p.id, p.provider])).toEqual([
      ['pool:a.out', 'pool:a.out'],
      ['pool:b.out', 'pool:b.out'],
    ]);
    expect(plan.providerAllocationPlans.map((p) => [p.pool, p.provider, p.memoryKind, p.device.toString(), p.tier, p.reservedBytes])).toEqual([
      ['pool:a.out', 'pool:a.out', MemoryKind.CudaDevice, 'cuda:0', 'streamOrdered', 1024 * plan.pool('pool:a.out')!.slotCount],
      ['pool:b.out', 'pool:b.out', MemoryKind.PinnedHost, 'cpu', 'synchronous', 1024 * plan.pool('pool:b.out')!.slotCount],
    ]);
    expect(plan.toText()).not.toContain('provider ');
  });

  it('lets pools of one memory kind and device share a declared provider, shown in the plan text', () => {
    const plan = compileOk(twoPools(pool(MemoryKind.CudaDevice, 'frames'), pool(MemoryKind.CudaDevice, 'frames')), onCuda0);
    expect(plan.pools.map((p) => p.provider)).toEqual(['frames', 'frames']);
    expect(plan.toText()).toContain('pool:a.out: cudaDevice on cuda:0, provider frames');
  });

  it('fails compilation when one provider would back two memory kinds', () => {
    const failure = compileFailure(twoPools(pool(MemoryKind.CudaDevice, 'frames'), pool(MemoryKind.PinnedHost, 'frames')), onCuda0HostB);
    const diagnostic = failure.diagnostics.find((d) => d.code === DiagnosticCode.ProviderMemoryMismatch);
    expect(diagnostic?.message).toContain("provider 'frames' backs pool:a.out (cudaDevice on cuda:0) and pool:b.out (pinnedHost on cpu)");
  });

  it('refuses a malformed provider name and a provider on a pass-through output', () => {
    expect(() => twoPools(pool(MemoryKind.CudaDevice, 'no spaces'), pool(MemoryKind.CudaDevice))).toThrow(/provider "no spaces" is not a name/);
    const passThrough = { representation: { memoryKind: MemoryKind.CudaDevice, dtype: DType.float32, rank: 1 }, provider: 'frames' } as unknown as TensorOutputSpec;
    expect(() => twoPools(passThrough, pool(MemoryKind.CudaDevice))).toThrow(/needs storage 'runtimePool'/);
  });
});
