import { ErrorCode, MemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { DiagnosticCode, Graph, type InputPort, type OperatorSpec, type OutputPort, Rate } from '../src/index.js';
import { DEVICE_FRAMES_IN, ScriptedOperator, allOnCuda0, compileFailure, compileOk, deviceFrames } from './support/operators.js';

const HOST = { representation: { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 1 }, bounds: { maxByteSpan: 64 }, storage: 'runtimePool' } as const;

/** camera (60 Hz) and imu (1 kHz) into a fusion operator whose contract `declare` writes. */
function fusionGraph(declare: (spec: OperatorSpec, frames: InputPort, imu: InputPort) => void): Graph {
  const graph = new Graph('fusion');
  let camera: OutputPort | null = null;
  let imuOut: OutputPort | null = null;
  let frames: InputPort | null = null;
  let imu: InputPort | null = null;
  graph.add(new ScriptedOperator('camera', (spec) => (camera = spec.output('frames').producesTensor(HOST).nominalRate(Rate.hz(60)))));
  graph.add(new ScriptedOperator('imu', (spec) => (imuOut = spec.output('samples').producesTensor(HOST).nominalRate(Rate.hz(1000)))));
  graph.add(
    new ScriptedOperator('fusion', (spec) => {
      frames = spec.input('frames');
      imu = spec.input('imu');
      declare(spec, frames, imu);
    }),
  );
  graph.addFlow(camera!, frames!);
  graph.addFlow(imuOut!, imu!);
  return graph;
}

describe('temporal contracts in the plan', () => {
  it('records the trigger, required inputs, windows and selectors the runtime schedules by', () => {
    const plan = compileOk(
      fusionGraph((spec, frames, imu) =>
        spec.temporalContract({ trigger: { input: frames }, required: [imu], windows: [{ input: imu, entries: 34 }], selectors: [{ input: imu, entries: 2, scenario: 'replay' }] }),
      ),
    );
    expect(plan.operator('fusion')?.schedule).toEqual({
      trigger: { kind: 'input', port: 'frames' },
      required: ['imu'],
      windows: [{ port: 'imu', entries: 34, scenario: 'default' }],
      selectors: [{ port: 'imu', entries: 2, scenario: 'replay' }],
    });
    expect(plan.operator('camera')?.schedule).toBeNull();
    expect(plan.edge('imu.samples->fusion.imu')?.queueDepth).toBe(34);
    // The window's 34 entries are in hand during one activation while the queue refills.
    expect(plan.pool('pool:imu.samples')?.derivation.text).toContain('34 (maxConsumerQueueDepth) + 34 (consumerInHand) + 1 (retirement) + 1 (producerLoan) = 70');
    expect(plan.toText()).toContain('fusion in partition:fusion: host-only; trigger input frames, required imu, window imu 34, selector imu 2 (replay)');
    expect(JSON.stringify(plan)).toContain('"schedule":{"required":["imu"],"selectors"');
  });

  it('records a clock trigger with its exact rate and missed-tick policy', () => {
    const plan = compileOk(fusionGraph((spec) => spec.temporalContract({ trigger: { clock: Rate.ratio(30000, 1001), missedTicks: 'catchUp' } })));
    const schedule = plan.operator('fusion')?.schedule;
    expect(schedule?.trigger).toEqual({ kind: 'clock', rate: Rate.ratio(30000, 1001), missedTicks: 'catchUp' });
    expect(plan.toText()).toContain('trigger clock 30000/1001 Hz (catch up)');
  });

  it.each([
    ['an unknown key', { trigger: { clock: Rate.hz(1) }, window: [] }, 'unknown key "window"'],
    ['an unknown trigger key', { trigger: { clock: Rate.hz(1), every: 2 } }, 'unknown key "every"'],
    ['a clock and an input together', 'both', 'not both'],
    ['a missed-tick policy it does not know', { trigger: { clock: Rate.hz(1), missedTicks: 'burst' } }, "missedTicks is 'skip' or 'catchUp'"],
    ['a required entry that is no port', { trigger: { clock: Rate.hz(1) }, required: ['imu'] }, 'required must be an array of InputPort'],
  ])('refuses %s with a typed error naming the operator', (_what, contract, message) => {
    const graph = new Graph('bad');
    const add = (): void => {
      graph.add(
        new ScriptedOperator('fusion', (spec) => {
          const frames = spec.input('frames');
          const form = contract === 'both' ? { trigger: { input: frames, clock: Rate.hz(60) } } : contract;
          spec.temporalContract(form as Parameters<OperatorSpec['temporalContract']>[0]);
        }),
      );
    };
    expect(add).toThrowError(expect.objectContaining({ code: ErrorCode.InvalidArgument, message: expect.stringContaining("operator 'fusion': temporalContract") }));
    expect(add).toThrowError(expect.objectContaining({ message: expect.stringContaining(message) }));
  });

  it('refuses two windows of one input in one scenario', () => {
    expect(() =>
      fusionGraph((spec, frames, imu) => spec.temporalContract({ trigger: { input: frames }, windows: [{ input: imu, entries: 2 }, { input: imu, entries: 3 }] })),
    ).toThrowError(expect.objectContaining({ code: ErrorCode.InvalidArgument, message: expect.stringContaining('input fusion.imu has two windows in scenario default') }));
  });

  it('fails compilation when the trigger or a required input is unconnected, naming operator and port', () => {
    const graph = new Graph('unconnected');
    let out: OutputPort | null = null;
    let frames: InputPort | null = null;
    graph.add(new ScriptedOperator('camera', (spec) => (out = spec.output('frames').producesTensor(HOST))));
    graph.add(
      new ScriptedOperator('fusion', (spec) => {
        frames = spec.input('frames');
        const imu = spec.input('imu', {}, { optional: true });
        const spare = spec.input('spare', {}, { optional: true });
        spec.temporalContract({ trigger: { input: spare }, required: [imu] });
      }),
    );
    graph.addFlow(out!, frames!);
    const errors = compileFailure(graph).diagnostics.filter((d) => d.code === DiagnosticCode.ContractInputUnconnected);
    expect(errors.map((d) => d.subject)).toEqual([
      { kind: 'port', operator: 'fusion', port: 'spare' },
      { kind: 'port', operator: 'fusion', port: 'imu' },
    ]);
    expect(errors[0]?.message).toContain("operator 'fusion': its temporal contract's trigger input fusion.spare is unconnected");
  });

  it('does not fuse an edge whose consumer input has a window or a selector (fusion rule)', () => {
    const build = (retain: 'window' | 'selector' | null): Graph => {
      const graph = new Graph(`chain-${String(retain)}`);
      let out: OutputPort | null = null;
      let input: InputPort | null = null;
      graph.add(new ScriptedOperator('a', (spec) => (out = spec.output('out').producesTensor(deviceFrames()))));
      graph.add(
        new ScriptedOperator('b', (spec) => {
          input = spec.input('in0', DEVICE_FRAMES_IN);
          const retention = [{ input, entries: 3 }];
          if (retain !== null) spec.temporalContract({ trigger: { input }, ...(retain === 'window' ? { windows: retention } : { selectors: retention }) });
        }),
      );
      graph.addFlow(out!, input!);
      return graph;
    };
    for (const [retain, fused] of [[null, ['a.out->b.in0']], ['window', []], ['selector', []]] as const) {
      const graph = build(retain);
      expect(compileOk(graph, allOnCuda0(graph)).fusedEdges.map((f) => f.edge)).toEqual(fused);
    }
  });
});
